/**
 * One person: who they are (ids, first seen), their properties (edit, delete, add), their
 * distinct ids, their cohorts, their most recent events, export (JSON or CSV download) and deletion.
 */
import { useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { api, ApiError, query } from '../../api/client';
import type { Page, Person, PersonDeletion, StoredEvent } from '../../api/types';
import { useResource } from '../../api/use-resource';
import { projectApi, useProject } from '../../auth/project';
import { fullDate } from '../../components/format';
import { PageHeader } from '../../components/shell';
import { EmptyState, ErrorNotice, Loading } from '../../components/status';
import { EventTable } from '../activity/event-table';
import { DeletionStatus, PersonDeletionControls } from './person-deletion';
import { personLabel } from './person-name';
import { PersonCohorts } from './person-cohorts';
import { PersonProperties } from './person-properties';

const EVENTS_SHOWN = 20;

export function PersonPage() {
  const project = useProject();
  const { params } = useRoute();
  const id = params.personId;
  const person = useResource((signal) => api<Person>(projectApi(project, `persons/${encodeURIComponent(id)}/`), { signal }), [project.id, id]);
  const [deletion, setDeletion] = useState<PersonDeletion | null>(null);

  if (person.data === undefined) {
    if (person.loading) return <Loading label="Loading the person…" />;
    return (
      <>
        <PageHeader title="Person" />
        {person.error instanceof ApiError && person.error.status === 404 ? (
          <EmptyState title="No such person">
            <p>
              This person does not exist in this project, or has been deleted. <a href={`${project.base}/persons`}>Search the persons</a>.
            </p>
          </EmptyState>
        ) : (
          <ErrorNotice error={person.error} retry={person.reload} />
        )}
      </>
    );
  }
  const p = person.data;
  const exportPath = (format: 'json' | 'csv') => projectApi(project, `persons/${p.id}/export/${query({ format })}`);
  return (
    <>
      <PageHeader title={personLabel(p)}>
        <a class="button button-secondary" href={exportPath('json')} download={`person-${p.id}.json`}>
          Export JSON
        </a>
        <a class="button button-secondary" href={exportPath('csv')} download={`person-${p.id}.csv`}>
          Export CSV
        </a>
        <PersonDeletionControls person={p} deletion={deletion} onDeleted={setDeletion} />
      </PageHeader>
      {deletion && <DeletionStatus deletion={deletion} />}
      <ErrorNotice error={person.error} retry={person.reload} />
      <dl class="facts card">
        <div>
          <dt>ID</dt>
          <dd class="mono">{p.id}</dd>
        </div>
        <div>
          <dt>UUID</dt>
          <dd class="mono">{p.uuid}</dd>
        </div>
        <div>
          <dt>First seen</dt>
          <dd>{fullDate(p.created_at)}</dd>
        </div>
        <div>
          <dt>Identified</dt>
          <dd>{p.is_identified ? 'Yes' : 'No (anonymous)'}</dd>
        </div>
      </dl>
      {!deletion && (
        <>
          <section class="card" aria-labelledby="ids-heading">
            <h2 id="ids-heading" class="section-title">
              Distinct IDs <span class="muted">({p.distinct_ids.length})</span>
            </h2>
            <ul class="distinct-ids">
              {p.distinct_ids.map((d) => (
                <li key={d} class="mono">
                  {d}
                </li>
              ))}
            </ul>
          </section>
          <PersonProperties person={p} onChanged={person.reload} />
          <PersonCohorts person={p} />
          <PersonEvents person={p} />
        </>
      )}
    </>
  );
}

function PersonEvents({ person }: { person: Person }) {
  const project = useProject();
  const events = useResource(
    (signal) => api<Page<StoredEvent>>(projectApi(project, `events/${query({ person_id: person.id, limit: EVENTS_SHOWN })}`), { signal }),
    [project.id, person.id],
  );
  return (
    <section aria-labelledby="person-events-heading">
      <h2 id="person-events-heading" class="section-title">
        Recent events
        {events.data && <span class="muted"> ({events.data.count} in all, newest first)</span>}
      </h2>
      <ErrorNotice error={events.error} retry={events.reload} />
      {events.data === undefined && events.loading ? (
        <Loading label="Loading their events…" />
      ) : events.data && events.data.results.length === 0 ? (
        <p class="hint">No events of this person are stored.</p>
      ) : events.data ? (
        <>
          <EventTable events={events.data.results} />
          {events.data.count > events.data.results.length && (
            <p class="hint">
              <a href={`${project.base}/activity`}>Activity</a> shows all events; filter it by one of the distinct IDs above.
            </p>
          )}
        </>
      ) : null}
    </section>
  );
}
