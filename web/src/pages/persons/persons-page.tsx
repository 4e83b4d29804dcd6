/**
 * Persons: search by email, name or distinct id, filter by person properties, and page through
 * the list (newest first, 50 a page, by the API's offset). The search, filters and page are in
 * the address, so going back from a person returns to the same list.
 */
import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, query } from '../../api/client';
import type { CursorPage, Page, Person, PropertyDefinition, PropertyFilter } from '../../api/types';
import { useResource } from '../../api/use-resource';
import { projectApi, useProject } from '../../auth/project';
import { DataTable } from '../../components/data-table';
import { fullDate, timeAgo } from '../../components/format';
import { PageHeader } from '../../components/shell';
import { EmptyState, ErrorNotice, Loading } from '../../components/status';
import { completeProperties } from '../activity/filters';
import { personLabel } from './person-name';
import { PropertyFilterEditor } from './property-filter-editor';

const PAGE_SIZE = 50;

interface Filters {
  search: string;
  properties: PropertyFilter[];
}

const NONE: Filters = { search: '', properties: [] };

/** The filters and page number an address of this page names (anything unreadable is left out). */
function fromAddress(values: Record<string, string>): Filters & { page: number } {
  let properties: PropertyFilter[] = [];
  try {
    const parsed: unknown = JSON.parse(values.properties ?? '[]');
    if (Array.isArray(parsed)) properties = parsed.filter((p): p is PropertyFilter => typeof p === 'object' && p !== null && typeof (p as PropertyFilter).key === 'string');
  } catch {
    // an edited address: no property filters
  }
  const page = Number(values.page);
  return { search: values.search ?? '', properties, page: Number.isSafeInteger(page) && page > 1 ? page : 1 };
}

export function PersonsPage() {
  const project = useProject();
  const location = useLocation();
  const applied = fromAddress(location.query);
  const [draft, setDraft] = useState<Filters>(applied);
  const addressKey = JSON.stringify([applied.search, applied.properties]);
  // Back and forward change the address: the form shows what is applied.
  useEffect(() => setDraft({ search: applied.search, properties: applied.properties }), [addressKey]);

  const properties = completeProperties(applied.properties).map((p) => ({ ...p, type: 'person' }));
  const pagePath = projectApi(
    project,
    `persons/${query({ search: applied.search.trim(), properties: properties.length ? properties : undefined, limit: PAGE_SIZE, offset: (applied.page - 1) * PAGE_SIZE || undefined })}`,
  );
  const page = useResource((signal) => api<CursorPage<Person>>(pagePath, { signal }), [pagePath]);
  const names = useResource(
    (signal) => api<Page<PropertyDefinition>>(projectApi(project, 'property_definitions/?type=person&limit=1000'), { signal }).then((p) => p.results.map((d) => d.name)),
    [project.id],
  );
  const filtered = applied.search.trim() !== '' || properties.length > 0;

  const go = (filters: Filters, number: number) => {
    const complete = completeProperties(filters.properties);
    location.route(`${project.base}/persons${query({ search: filters.search.trim(), properties: complete.length ? complete : undefined, page: number > 1 ? number : undefined })}`);
  };
  const apply = (filters: Filters) => go(filters, 1);

  return (
    <>
      <PageHeader title="Persons" />
      <form
        class="filters card"
        aria-label="Find persons"
        onSubmit={(e) => {
          e.preventDefault();
          apply(draft);
        }}
      >
        <div class="filter-row">
          <label class="field search-field">
            <span>Search by email, name or distinct ID</span>
            <input type="search" name="search" value={draft.search} onInput={(e) => setDraft({ ...draft, search: (e.target as HTMLInputElement).value })} />
          </label>
        </div>
        <PropertyFilterEditor filters={draft.properties} propertyNames={names.data ?? []} onChange={(properties) => setDraft({ ...draft, properties })} />
        <div class="filter-actions">
          <button type="button" class="button-secondary" onClick={() => setDraft({ ...draft, properties: [...draft.properties, { key: '', operator: 'exact', value: '', type: 'person' }] })}>
            Add property filter
          </button>
          <button type="submit" class="button-primary">
            Search
          </button>
          <button
            type="button"
            class="button-link"
            onClick={() => {
              setDraft(NONE);
              apply(NONE);
            }}
          >
            Clear
          </button>
        </div>
      </form>
      <ErrorNotice error={page.error} retry={page.reload} />
      {page.data === undefined && page.loading ? (
        <Loading label="Loading persons…" />
      ) : page.data && page.data.results.length === 0 && applied.page === 1 ? (
        filtered ? (
          <EmptyState title="No person matches">
            <p>Nobody's email, name or distinct ID matches, or no one has these properties. Change or clear the search.</p>
          </EmptyState>
        ) : (
          <EmptyState title="No persons yet">
            <p>A person is created with the first event of a distinct ID. Send events from an SDK (the install snippets are under Settings), and call <code>identify</code> with an email to find people by it.</p>
          </EmptyState>
        )
      ) : page.data ? (
        <section aria-labelledby="persons-heading">
          <h2 id="persons-heading" class="section-title">
            {filtered ? 'Matching persons' : 'Persons'}
            <span class="muted">, newest first — page {applied.page}</span>
          </h2>
          <PersonTable persons={page.data.results} />
          <nav class="pager" aria-label="Pages of persons">
            <button type="button" class="button-secondary" disabled={applied.page === 1} onClick={() => go(applied, applied.page - 1)}>
              Previous page
            </button>
            <button type="button" class="button-secondary" disabled={!page.data.next} onClick={() => go(applied, applied.page + 1)}>
              Next page
            </button>
          </nav>
        </section>
      ) : null}
    </>
  );
}

function PersonTable({ persons }: { persons: Person[] }) {
  const project = useProject();
  return (
    <DataTable caption="Persons, newest first" class="persons-table" columns={[{ label: 'Person' }, { label: 'Distinct IDs', wideOnly: true }, { label: 'Identified', wideOnly: true }, { label: 'First seen' }]}>
      {persons.map((person) => (
        <tr key={person.uuid}>
          <td>
            <a href={`${project.base}/persons/${person.id}`}>{personLabel(person)}</a>
          </td>
          <td class="mono wide-only truncate" title={person.distinct_ids.join(', ')}>
            {person.distinct_ids.slice(0, 3).join(', ')}
            {person.distinct_ids.length > 3 ? ` +${person.distinct_ids.length - 3}` : ''}
          </td>
          <td class="wide-only">{person.is_identified ? 'Yes' : 'No'}</td>
          <td>
            <time dateTime={person.created_at} title={fullDate(person.created_at)}>
              {timeAgo(person.created_at)}
            </time>
          </td>
        </tr>
      ))}
    </DataTable>
  );
}
