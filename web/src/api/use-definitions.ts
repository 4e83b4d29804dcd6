/** Names the project has seen, offered as suggestions in the editors. */
import { api } from './client';
import type { EventDefinition, Page, PropertyDefinition } from './types';
import { useResource } from './use-resource';
import { projectApi } from '../auth/project';

export function useEventNames(project: { id: number }): string[] {
  const names = useResource((signal) => api<Page<EventDefinition>>(projectApi(project, 'event_definitions/?limit=1000'), { signal }).then((p) => p.results.map((d) => d.name)), [project.id]);
  return names.data ?? [];
}

export function usePropertyNames(project: { id: number }, type: 'event' | 'person'): string[] {
  const names = useResource(
    (signal) => api<Page<PropertyDefinition>>(projectApi(project, `property_definitions/?type=${type}&limit=1000`), { signal }).then((p) => p.results.map((d) => d.name)),
    [project.id, type],
  );
  return names.data ?? [];
}
