/** A cohort's members (the cohorts API's persons list), 50 a page, read again after each calculation. */
import { useState } from 'preact/hooks';
import { api, query } from '../../api/client';
import type { Cohort, Page, Person } from '../../api/types';
import { useResource } from '../../api/use-resource';
import { projectApi, useProject } from '../../auth/project';
import { DataTable } from '../../components/data-table';
import { fullDate, timeAgo } from '../../components/format';
import { ErrorNotice, Loading } from '../../components/status';
import { personLabel } from '../persons/person-name';

const PAGE_SIZE = 50;

export function CohortMembers({ cohort }: { cohort: Cohort }) {
  const project = useProject();
  const [page, setPage] = useState(1);
  const path = projectApi(project, `cohorts/${cohort.id}/persons/${query({ limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE || undefined })}`);
  // A new calculation or upload changes the count or its time: read the members again.
  const members = useResource((signal) => api<Page<Person>>(path, { signal }), [path, cohort.count, cohort.last_calculation, cohort.is_calculating]);

  return (
    <section aria-labelledby="members-heading">
      <h2 id="members-heading" class="section-title">
        Members
        {members.data && <span class="muted"> ({members.data.count})</span>}
      </h2>
      <ErrorNotice error={members.error} retry={members.reload} />
      {members.data === undefined && members.loading ? (
        <Loading label="Loading the members…" />
      ) : members.data && members.data.count === 0 ? (
        <p class="hint">{cohort.is_calculating ? 'Calculating the members…' : cohort.is_static ? 'No one yet: upload a CSV above.' : 'No person matches the conditions.'}</p>
      ) : members.data ? (
        <>
          <DataTable caption={`Members of ${cohort.name}`} class="members-table" columns={[{ label: 'Person' }, { label: 'Distinct IDs', wideOnly: true }, { label: 'First seen' }]}>
            {members.data.results.map((person) => (
              <tr key={person.uuid}>
                <td>
                  <a href={`${project.base}/persons/${person.id}`}>{personLabel(person)}</a>
                </td>
                <td class="mono wide-only truncate">{person.distinct_ids.join(', ')}</td>
                <td>
                  <time dateTime={person.created_at} title={fullDate(person.created_at)}>
                    {timeAgo(person.created_at)}
                  </time>
                </td>
              </tr>
            ))}
          </DataTable>
          {(members.data.next || page > 1) && (
            <nav class="pager" aria-label="Pages of members">
              <button type="button" class="button-secondary" disabled={page === 1} onClick={() => setPage(page - 1)}>
                Previous page
              </button>
              <button type="button" class="button-secondary" disabled={!members.data.next} onClick={() => setPage(page + 1)}>
                Next page
              </button>
            </nav>
          )}
        </>
      ) : null}
    </section>
  );
}
