/** Actions: search by name, what each matches, when it last changed. */
import { useEffect, useState } from 'preact/hooks';
import { api, query } from '../../api/client';
import type { Action, Page } from '../../api/types';
import { useResource } from '../../api/use-resource';
import { projectApi, useProject } from '../../auth/project';
import { DataTable } from '../../components/data-table';
import { fullDate, timeAgo } from '../../components/format';
import { PageHeader } from '../../components/shell';
import { EmptyState, ErrorNotice, Loading } from '../../components/status';
import { stepSummary } from './action-form';

export function ActionListPage() {
  const project = useProject();
  const [search, setSearch] = useState('');
  const [applied, setApplied] = useState('');
  const actions = useResource((signal) => api<Page<Action>>(projectApi(project, `actions/${query({ search: applied, limit: 500 })}`), { signal }), [project.id, applied]);

  useEffect(() => {
    const timer = setTimeout(() => setApplied(search.trim()), 250);
    return () => clearTimeout(timer);
  }, [search]);

  return (
    <>
      <PageHeader title="Actions">
        <a class="button button-primary" href={`${project.base}/actions/new`}>
          New action
        </a>
      </PageHeader>
      <label class="field search-field">
        <span>Search by name</span>
        <input type="search" value={search} onInput={(e) => setSearch((e.target as HTMLInputElement).value)} />
      </label>
      <ErrorNotice error={actions.error} retry={actions.reload} />
      {!actions.data && actions.loading ? (
        <Loading label="Loading actions…" />
      ) : actions.data?.results.length === 0 ? (
        applied ? (
          <EmptyState title="No action matches">
            <p>No action's name contains every word of “{applied}”.</p>
          </EmptyState>
        ) : (
          <EmptyState title="No actions yet">
            <p>
              An action names a way of recognising events — a page view of a URL, a click on a button, an event with some properties — so insights and the event list can use it as if it were an
              event. <a href={`${project.base}/actions/new`}>Create the first one</a>.
            </p>
          </EmptyState>
        )
      ) : actions.data ? (
        <DataTable caption="Actions" class="actions-table" columns={[{ label: 'Name' }, { label: 'Matches', wideOnly: true }, { label: 'Last changed' }]}>
          {actions.data.results.map((action) => (
            <tr key={action.id}>
              <td>
                <a href={`${project.base}/actions/${action.id}`}>{action.name}</a>
                {action.description && <div class="muted truncate">{action.description}</div>}
              </td>
              <td class="wide-only truncate">{action.steps.length === 0 ? <span class="muted">No steps: matches nothing</span> : action.steps.map(stepSummary).join(' or ')}</td>
              <td>
                {action.last_calculated_at ? (
                  <time dateTime={action.last_calculated_at} title={fullDate(action.last_calculated_at)}>
                    {timeAgo(action.last_calculated_at)}
                  </time>
                ) : (
                  <time dateTime={action.created_at}>{timeAgo(action.created_at)}</time>
                )}
              </td>
            </tr>
          ))}
        </DataTable>
      ) : null}
    </>
  );
}
