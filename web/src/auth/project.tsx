/** The project the current page is about (from its URL), for every page of a project. */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Project } from '../api/types';
import { ADMIN } from '../api/types';

export const ProjectContext = createContext<Project | null>(null);

export function useProject(): Project & { isAdmin: boolean; base: string } {
  const project = useContext(ProjectContext);
  if (!project) throw new Error('useProject outside a project page');
  return { ...project, isAdmin: project.effective_membership_level >= ADMIN, base: `/project/${project.id}` };
}

/** `/api/projects/<id>/<path>` of the current project. */
export const projectApi = (project: { id: number }, path: string) => `/api/projects/${project.id}/${path}`;
