/** Event and property definitions, as ingestion found them; descriptions and value types are editable. */
import { useRoute } from 'preact-iso';
import { useProject } from '../../auth/project';
import { PageHeader } from '../../components/shell';
import { EventDefinitions } from './event-definitions';
import { PropertyDefinitions } from './property-definitions';

const TABS = [
  { tab: 'events', label: 'Events' },
  { tab: 'properties', label: 'Properties' },
];

export function DataManagementPage() {
  const project = useProject();
  const { params } = useRoute();
  const tab = params.tab === 'properties' ? 'properties' : 'events';
  return (
    <>
      <PageHeader title="Data management" />
      <nav class="tabs" aria-label="Data management">
        {TABS.map((t) => (
          <a key={t.tab} href={`${project.base}/data-management/${t.tab}`} aria-current={t.tab === tab ? 'page' : undefined}>
            {t.label}
          </a>
        ))}
      </nav>
      {tab === 'events' ? <EventDefinitions /> : <PropertyDefinitions />}
    </>
  );
}
