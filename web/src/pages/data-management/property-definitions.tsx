import { useState } from 'preact/hooks';
import { api } from '../../api/client';
import type { PropertyDefinition, PropertyType } from '../../api/types';
import { projectApi, useProject } from '../../auth/project';
import { EmptyState, ErrorNotice, Loading } from '../../components/status';
import { useSearchList } from './use-search-list';
import { DataTable } from '../../components/data-table';

const VALUE_TYPES: PropertyType[] = ['String', 'Numeric', 'Boolean', 'DateTime'];

export function PropertyDefinitions() {
  const project = useProject();
  const [kind, setKind] = useState<'event' | 'person'>('event');
  const list = useSearchList<PropertyDefinition>(projectApi(project, 'property_definitions/'), { type: kind });
  return (
    <section aria-label="Property definitions">
      <div class="filter-row">
        <label class="field">
          <span>Properties of</span>
          <select value={kind} onChange={(e) => setKind((e.target as HTMLSelectElement).value as 'event' | 'person')}>
            <option value="event">Events</option>
            <option value="person">Persons</option>
          </select>
        </label>
        <label class="field search-field">
          <span>Search properties</span>
          <input type="search" value={list.search} onInput={(e) => list.setSearch((e.target as HTMLInputElement).value)} />
        </label>
      </div>
      <p class="hint">The type decides how filters compare values (as text, numbers, true/false or dates). Ingestion guesses it from the first value seen.</p>
      <ErrorNotice error={list.first.error} retry={list.reload} />
      {!list.first.data && list.first.loading ? (
        <Loading label="Loading property definitions…" />
      ) : list.items.length === 0 ? (
        <EmptyState title={list.applied ? 'No property matches' : `No ${kind} properties seen yet`}>
          <p>{list.applied ? `No property name contains “${list.applied}”.` : 'Properties are listed here when events carrying them arrive.'}</p>
        </EmptyState>
      ) : (
        <DataTable caption={`${kind === 'event' ? 'Event' : 'Person'} property definitions`} columns={[{ label: 'Property' }, { label: 'Type' }]}>
          {list.items.map((definition) => (
            <PropertyRow key={definition.id} definition={definition} />
          ))}
        </DataTable>
      )}
      <ErrorNotice error={list.moreError} />
      {list.next && (
        <button type="button" class="button-secondary load-more" onClick={() => void list.loadMore()}>
          Load more
        </button>
      )}
    </section>
  );
}

function PropertyRow({ definition }: { definition: PropertyDefinition }) {
  const project = useProject();
  const [current, setCurrent] = useState(definition);
  const [error, setError] = useState<Error | null>(null);
  const [saved, setSaved] = useState(false);

  const change = async (type: PropertyType) => {
    setError(null);
    setSaved(false);
    try {
      setCurrent(await api<PropertyDefinition>(projectApi(project, `property_definitions/${current.id}/`), { method: 'PATCH', body: { property_type: type } }));
      setSaved(true);
    } catch (failure) {
      setError(failure as Error);
    }
  };

  return (
    <tr>
      <th scope="row" class="mono">
        {current.name}
      </th>
      <td>
        <label class="field field-inline">
          <span class="visually-hidden">Type of {current.name}</span>
          <select value={current.property_type ?? ''} onChange={(e) => void change((e.target as HTMLSelectElement).value as PropertyType)}>
            {current.property_type === null && <option value="">Unknown</option>}
            {VALUE_TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
        {saved && (
          <span class="saved" role="status">
            Saved
          </span>
        )}
        <ErrorNotice error={error} />
      </td>
    </tr>
  );
}
