/** Cohorts: each with its size, kind and when it was last calculated (refreshed while one calculates). */
import { api } from '../../api/client';
import type { Cohort, Page } from '../../api/types';
import { useResource } from '../../api/use-resource';
import { projectApi, useProject } from '../../auth/project';
import { DataTable } from '../../components/data-table';
import { PageHeader } from '../../components/shell';
import { EmptyState, ErrorNotice, Loading } from '../../components/status';
import { CohortCount, CohortState, usePollWhileCalculating } from './cohort-state';

export function CohortListPage() {
  const project = useProject();
  const cohorts = useResource((signal) => api<Page<Cohort>>(projectApi(project, 'cohorts/?limit=500'), { signal }), [project.id]);
  usePollWhileCalculating(cohorts.data?.results, cohorts.reload);

  return (
    <>
      <PageHeader title="Cohorts">
        <a class="button button-primary" href={`${project.base}/cohorts/new`}>
          New cohort
        </a>
      </PageHeader>
      <ErrorNotice error={cohorts.error} retry={cohorts.reload} />
      {!cohorts.data && cohorts.loading ? (
        <Loading label="Loading cohorts…" />
      ) : cohorts.data?.results.length === 0 ? (
        <EmptyState title="No cohorts yet">
          <p>
            A cohort is a group of persons: those with some properties, or who did something a number of times lately (dynamic, recalculated as events arrive), or a list you upload (static). Use
            cohorts in insights' filters and breakdowns and in feature flags. <a href={`${project.base}/cohorts/new`}>Create the first one</a>.
          </p>
        </EmptyState>
      ) : cohorts.data ? (
        <DataTable caption="Cohorts" class="cohorts-table" columns={[{ label: 'Name' }, { label: 'Persons' }, { label: 'Kind', wideOnly: true }, { label: 'Last calculated' }]}>
          {cohorts.data.results.map((cohort) => (
            <tr key={cohort.id} data-cohort={cohort.id}>
              <td>
                <a href={`${project.base}/cohorts/${cohort.id}`}>{cohort.name}</a>
                {cohort.description && <div class="muted truncate">{cohort.description}</div>}
              </td>
              <td class="cohort-count">
                <CohortCount cohort={cohort} />
              </td>
              <td class="wide-only">{cohort.is_static ? 'Static' : 'Dynamic'}</td>
              <td>{cohort.is_static ? <span class="muted">Uploaded</span> : <CohortState cohort={cohort} />}</td>
            </tr>
          ))}
        </DataTable>
      ) : null}
    </>
  );
}
