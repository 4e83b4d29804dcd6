import { useRoute } from 'preact-iso';
import { useProject } from '../../auth/project';
import { PageHeader } from '../../components/shell';
import { AccountSettings } from './account-settings';
import { OrganizationSettings } from './organization-settings';
import { ProjectSettings } from './project-settings';

const SECTIONS = [
  { section: 'project', label: 'Project' },
  { section: 'organization', label: 'Members' },
  { section: 'account', label: 'Your account' },
];

export function SettingsPage() {
  const project = useProject();
  const { params } = useRoute();
  const section = SECTIONS.some((s) => s.section === params.section) ? params.section : 'project';
  return (
    <>
      <PageHeader title="Settings" />
      <nav class="tabs" aria-label="Settings">
        {SECTIONS.map((s) => (
          <a key={s.section} href={`${project.base}/settings/${s.section}`} aria-current={s.section === section ? 'page' : undefined}>
            {s.label}
          </a>
        ))}
      </nav>
      {section === 'project' && <ProjectSettings />}
      {section === 'organization' && <OrganizationSettings />}
      {section === 'account' && <AccountSettings />}
    </>
  );
}
