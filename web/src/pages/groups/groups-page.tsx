/**
 * Groups: a tab per group type (renamable), and that type's groups with search and "load more"
 * over the API's cursor.
 */
import { useEffect, useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { api, pathOf, query } from '../../api/client';
import type { CursorPage, Group, GroupType } from '../../api/types';
import { useResource } from '../../api/use-resource';
import { projectApi, useProject } from '../../auth/project';
import { DataTable } from '../../components/data-table';
import { fullDate, timeAgo } from '../../components/format';
import { PageHeader } from '../../components/shell';
import { EmptyState, ErrorNotice, Loading, SuccessNotice } from '../../components/status';
import { pluralName, singularName } from './group-type-name';

export function GroupsPage() {
  const project = useProject();
  const { params } = useRoute();
  const types = useResource((signal) => api<GroupType[]>(projectApi(project, 'groups_types/'), { signal }), [project.id]);

  if (types.data === undefined) {
    return (
      <>
        <PageHeader title="Groups" />
        {types.loading ? <Loading label="Loading group types…" /> : <ErrorNotice error={types.error} retry={types.reload} />}
      </>
    );
  }
  if (types.data.length === 0) {
    return (
      <>
        <PageHeader title="Groups" />
        <EmptyState title="No group types yet">
          <p>
            Groups collect persons into companies, teams or projects. Send an event with a group, e.g. <code>posthog.group('company', 'acme', {'{'} name: 'Acme' {'}'})</code> in posthog-js,
            and the type and its groups appear here.
          </p>
        </EmptyState>
      </>
    );
  }
  const current = types.data.find((t) => String(t.group_type_index) === params.typeIndex) ?? types.data[0]!;
  return (
    <>
      <PageHeader title="Groups" />
      <nav class="tabs" aria-label="Group types">
        {types.data.map((t) => (
          <a key={t.group_type_index} href={`${project.base}/groups/${t.group_type_index}`} aria-current={t === current ? 'page' : undefined}>
            {pluralName(t)}
          </a>
        ))}
      </nav>
      <RenameType key={current.group_type_index} type={current} onRenamed={types.reload} />
      <GroupList key={`list-${current.group_type_index}`} type={current} />
    </>
  );
}

function RenameType({ type, onRenamed }: { type: GroupType; onRenamed: () => void }) {
  const project = useProject();
  const [names, setNames] = useState({ singular: type.name_singular ?? '', plural: type.name_plural ?? '' });
  const [error, setError] = useState<Error | null>(null);
  const [saved, setSaved] = useState(false);
  return (
    <details class="card rename-type">
      <summary>Rename “{type.group_type}”</summary>
      <form
        class="inline-form"
        onSubmit={async (e) => {
          e.preventDefault();
          setError(null);
          setSaved(false);
          try {
            await api(projectApi(project, `groups_types/${type.group_type_index}/`), { method: 'PATCH', body: { name_singular: names.singular, name_plural: names.plural } });
            setSaved(true);
            onRenamed();
          } catch (failure) {
            setError(failure as Error);
          }
        }}
      >
        <label class="field">
          <span>Singular name</span>
          <input value={names.singular} placeholder={type.group_type} maxLength={400} onInput={(e) => setNames({ ...names, singular: (e.target as HTMLInputElement).value })} />
        </label>
        <label class="field">
          <span>Plural name</span>
          <input value={names.plural} placeholder={type.group_type} maxLength={400} onInput={(e) => setNames({ ...names, plural: (e.target as HTMLInputElement).value })} />
        </label>
        <button type="submit" class="button-secondary">
          Save names
        </button>
      </form>
      <p class="hint">Only the names shown change; the key “{type.group_type}” that SDKs send stays. Leave a name empty to show the key.</p>
      <ErrorNotice error={error} />
      {saved && <SuccessNotice>Names saved.</SuccessNotice>}
    </details>
  );
}

function GroupList({ type }: { type: GroupType }) {
  const project = useProject();
  const [search, setSearch] = useState('');
  const [applied, setApplied] = useState('');
  const [more, setMore] = useState<{ results: Group[]; next: string | null } | null>(null);
  const [moreError, setMoreError] = useState<Error | null>(null);
  const first = useResource(
    (signal) => api<CursorPage<Group>>(projectApi(project, `groups/${query({ group_type_index: type.group_type_index, search: applied })}`), { signal }),
    [project.id, type.group_type_index, applied],
  );
  useEffect(() => {
    const timer = setTimeout(() => setApplied(search.trim()), 250);
    return () => clearTimeout(timer);
  }, [search]);
  useEffect(() => setMore(null), [applied]);

  const groups = [...(first.data?.results ?? []), ...(more?.results ?? [])];
  const next = more ? more.next : first.data?.next ?? null;
  const loadMore = async () => {
    if (!next) return;
    setMoreError(null);
    try {
      const page = await api<CursorPage<Group>>(pathOf(next));
      setMore({ results: [...(more?.results ?? []), ...page.results], next: page.next });
    } catch (failure) {
      setMoreError(failure as Error);
    }
  };

  return (
    <section aria-label={pluralName(type)}>
      <label class="field search-field">
        <span>Search {pluralName(type)} by key or name</span>
        <input type="search" value={search} onInput={(e) => setSearch((e.target as HTMLInputElement).value)} />
      </label>
      <ErrorNotice error={first.error} retry={first.reload} />
      {first.data === undefined && first.loading ? (
        <Loading label={`Loading ${pluralName(type)}…`} />
      ) : groups.length === 0 ? (
        <EmptyState title={applied ? `No ${singularName(type)} matches` : `No ${pluralName(type)} yet`}>
          <p>{applied ? `No key or name contains “${applied}”.` : `A ${singularName(type)} appears here with its first event.`}</p>
        </EmptyState>
      ) : (
        <DataTable caption={`${pluralName(type)}, newest first`} columns={[{ label: 'Key' }, { label: 'Name' }, { label: 'Properties', wideOnly: true }, { label: 'First seen' }]}>
          {groups.map((group) => (
            <tr key={group.group_key}>
              <td class="mono">
                <a href={`${project.base}/groups/${type.group_type_index}/${encodeURIComponent(group.group_key)}`}>{group.group_key}</a>
              </td>
              <td>{typeof group.group_properties.name === 'string' ? group.group_properties.name : ''}</td>
              <td class="wide-only">{Object.keys(group.group_properties).length}</td>
              <td>
                <time dateTime={group.created_at} title={fullDate(group.created_at)}>
                  {timeAgo(group.created_at)}
                </time>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      <ErrorNotice error={moreError} />
      {next && (
        <button type="button" class="button-secondary load-more" onClick={() => void loadMore()}>
          Load more
        </button>
      )}
    </section>
  );
}

