/** One group: its properties and its most recent events (a HogQL query on the group's column). */
import { useRoute } from 'preact-iso';
import { api, ApiError, query } from '../../api/client';
import type { Group, GroupType } from '../../api/types';
import { useResource } from '../../api/use-resource';
import { projectApi, useProject } from '../../auth/project';
import { DataTable } from '../../components/data-table';
import { fullDate, timeAgo, valueText } from '../../components/format';
import { PageHeader } from '../../components/shell';
import { EmptyState, ErrorNotice, Loading } from '../../components/status';
import { pluralName, singularName } from './group-type-name';

const EVENTS_SHOWN = 20;

export function GroupPage() {
  const project = useProject();
  const { params } = useRoute();
  const index = Number(params.typeIndex);
  const key = params.groupKey ?? '';
  const types = useResource((signal) => api<GroupType[]>(projectApi(project, 'groups_types/'), { signal }), [project.id]);
  const group = useResource(
    (signal) => api<Group>(projectApi(project, `groups/find/${query({ group_type_index: params.typeIndex, group_key: key })}`), { signal }),
    [project.id, params.typeIndex, key],
  );
  const type = types.data?.find((t) => t.group_type_index === index);
  const backLink = <a href={`${project.base}/groups/${params.typeIndex}`}>All {type ? pluralName(type) : 'groups'}</a>;

  if (group.data === undefined) {
    if (group.loading) return <Loading label="Loading the group…" />;
    return (
      <>
        <PageHeader title={key} />
        {group.error instanceof ApiError && group.error.status === 404 ? (
          <EmptyState title="No such group">
            <p>There is no group with this key of this type in the project. {backLink}.</p>
          </EmptyState>
        ) : (
          <ErrorNotice error={group.error} retry={group.reload} />
        )}
      </>
    );
  }
  const g = group.data;
  const name = typeof g.group_properties.name === 'string' ? g.group_properties.name : g.group_key;
  const properties = Object.entries(g.group_properties).sort(([a], [b]) => a.localeCompare(b));
  return (
    <>
      <PageHeader title={name} />
      <p class="hint">{backLink}</p>
      <dl class="facts card">
        <div>
          <dt>Type</dt>
          <dd>{type ? singularName(type) : `Group type ${index}`}</dd>
        </div>
        <div>
          <dt>Key</dt>
          <dd class="mono">{g.group_key}</dd>
        </div>
        <div>
          <dt>First seen</dt>
          <dd>{fullDate(g.created_at)}</dd>
        </div>
      </dl>
      <section class="card" aria-labelledby="group-properties-heading">
        <h2 id="group-properties-heading" class="section-title">
          Properties <span class="muted">({properties.length})</span>
        </h2>
        {properties.length === 0 ? (
          <p class="hint">
            No properties. Send them with <code>$group_set</code> (posthog-js: the third argument of <code>posthog.group</code>).
          </p>
        ) : (
          <DataTable caption="Properties of the group" class="properties-table" columns={[{ label: 'Property' }, { label: 'Value' }]}>
            {properties.map(([k, value]) => (
              <tr key={k}>
                <th scope="row" class="mono">
                  {k}
                </th>
                <td class="mono break">{valueText(value)}</td>
              </tr>
            ))}
          </DataTable>
        )}
      </section>
      <GroupEvents group={g} />
    </>
  );
}

interface HogQLResponse {
  results: [string, string, string, string][];
}

function GroupEvents({ group }: { group: Group }) {
  const project = useProject();
  // The column is chosen from the type index (0–4, checked by the API); the key is a bound value.
  const sql = `select uuid, event, distinct_id, timestamp from events where $group_${group.group_type_index} = {group_key} order by timestamp desc limit ${EVENTS_SHOWN}`;
  const events = useResource(
    (signal) => api<HogQLResponse>(projectApi(project, 'query/'), { method: 'POST', body: { query: { kind: 'HogQLQuery', query: sql, values: { group_key: group.group_key } } }, signal }),
    [project.id, sql, group.group_key],
  );
  return (
    <section aria-labelledby="group-events-heading">
      <h2 id="group-events-heading" class="section-title">
        Recent events <span class="muted">(newest first)</span>
      </h2>
      <ErrorNotice error={events.error} retry={events.reload} />
      {events.data === undefined && events.loading ? (
        <Loading label="Loading the group's events…" />
      ) : events.data && events.data.results.length === 0 ? (
        <p class="hint">No events of this group are stored.</p>
      ) : events.data ? (
        <DataTable caption="Recent events of the group" class="group-events" columns={[{ label: 'Event' }, { label: 'Person' }, { label: 'Time' }]}>
          {events.data.results.map(([uuid, event, distinctId, timestamp]) => (
            <tr key={uuid}>
              <td class="event-name">{event}</td>
              <td class="mono">{distinctId}</td>
              <td>
                <time dateTime={timestamp} title={fullDate(timestamp)}>
                  {timeAgo(timestamp)}
                </time>
              </td>
            </tr>
          ))}
        </DataTable>
      ) : null}
    </section>
  );
}
