/** The frame of every project page: the navigation, the project switcher and the account menu. */
import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso';
import { useProject } from '../auth/project';
import { useSignedIn } from '../auth/session';

const SECTIONS = [
  { path: 'activity', label: 'Activity' },
  { path: 'dashboards', label: 'Dashboards' },
  { path: 'insights', label: 'Insights' },
  { path: 'sql', label: 'SQL' },
  { path: 'persons', label: 'Persons' },
  { path: 'groups', label: 'Groups' },
  { path: 'cohorts', label: 'Cohorts' },
  { path: 'actions', label: 'Actions' },
  { path: 'feature_flags', label: 'Feature flags' },
  { path: 'data-management/events', label: 'Data management', match: 'data-management' },
  { path: 'settings/project', label: 'Settings', match: 'settings' },
];

export function Shell({ children }: { children: ComponentChildren }) {
  const project = useProject();
  const { me, projects, signOut } = useSignedIn();
  const { path, route } = useLocation();
  const section = path.slice(project.base.length + 1);

  return (
    <div class="layout">
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <a class="brand" href={`${project.base}/activity`}>
          <img src={new URL('../favicon.svg', import.meta.url).href} alt="" width={24} height={24} />
          Sightline
        </a>
        {projects.length > 1 ? (
          <label class="project-switcher">
            <span class="visually-hidden">Project</span>
            <select value={String(project.id)} onChange={(e) => route(`/project/${(e.target as HTMLSelectElement).value}/${section}`)}>
              {projects.map((p) => (
                <option key={p.id} value={String(p.id)}>
                  {p.name}
                </option>
              ))}
            </select>
          </label>
        ) : (
          <span class="project-name">{project.name}</span>
        )}
        <div class="account">
          <span class="account-email" title="Signed in as">
            {me.email}
          </span>
          <button type="button" class="button-secondary button-small" onClick={() => void signOut().then(() => route('/login'))}>
            Sign out
          </button>
        </div>
      </header>
      <nav class="sidebar" aria-label="Main">
        <ul>
          {SECTIONS.map((s) => {
            const current = section.startsWith(s.match ?? s.path);
            return (
              <li key={s.path}>
                <a href={`${project.base}/${s.path}`} aria-current={current ? 'page' : undefined}>
                  {s.label}
                </a>
              </li>
            );
          })}
        </ul>
      </nav>
      <main id="main" class="content" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}

/** The page's heading, also its document title. */
export function PageHeader({ title, children }: { title: string; children?: ComponentChildren }) {
  const project = useProject();
  document.title = `${title} · ${project.name} · Sightline`;
  return (
    <div class="page-header">
      <h1>{title}</h1>
      {children && <div class="page-actions">{children}</div>}
    </div>
  );
}
