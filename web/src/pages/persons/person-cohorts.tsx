/** The cohorts a person is in, as last calculated or uploaded (`persons/cohorts/?person_id=`). */
import { api, query } from '../../api/client';
import type { Cohort, Person } from '../../api/types';
import { useResource } from '../../api/use-resource';
import { projectApi, useProject } from '../../auth/project';
import { ErrorNotice, Loading } from '../../components/status';

export function PersonCohorts({ person }: { person: Person }) {
  const project = useProject();
  const cohorts = useResource(
    (signal) => api<{ results: Cohort[] }>(projectApi(project, `persons/cohorts/${query({ person_id: person.id })}`), { signal }),
    [project.id, person.id],
  );
  return (
    <section class="card" aria-labelledby="person-cohorts-heading">
      <h2 id="person-cohorts-heading" class="section-title">
        Cohorts
        {cohorts.data && <span class="muted"> ({cohorts.data.results.length})</span>}
      </h2>
      <ErrorNotice error={cohorts.error} retry={cohorts.reload} />
      {cohorts.data === undefined && cohorts.loading ? (
        <Loading label="Loading their cohorts…" />
      ) : cohorts.data && cohorts.data.results.length === 0 ? (
        <p class="hint">In no cohort (dynamic cohorts count them at their next calculation).</p>
      ) : cohorts.data ? (
        <ul class="person-cohorts">
          {cohorts.data.results.map((cohort) => (
            <li key={cohort.id} class="pill">
              <a href={`${project.base}/cohorts/${cohort.id}`}>{cohort.name}</a>
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}
