/** Dashboards, pinned first; a new one is made here and filled from the insight builder. */
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, query } from '../../api/client';
import type { Page } from '../../api/types';
import { useResource } from '../../api/use-resource';
import { projectApi, useProject } from '../../auth/project';
import { DataTable } from '../../components/data-table';
import { PageHeader } from '../../components/shell';
import { EmptyState, ErrorNotice, Loading } from '../../components/status';

interface DashboardBasic {
  id: number;
  name: string;
  description: string;
  pinned: boolean;
}

export function DashboardListPage() {
  const project = useProject();
  const { route } = useLocation();
  const [name, setName] = useState('');
  const [error, setError] = useState<Error | null>(null);
  const dashboards = useResource((signal) => api<Page<DashboardBasic>>(projectApi(project, `dashboards/${query({ limit: 200 })}`), { signal }), [project.id]);

  const create = async (event: Event) => {
    event.preventDefault();
    setError(null);
    try {
      const created = await api<{ id: number }>(projectApi(project, 'dashboards/'), { method: 'POST', body: { name: name.trim() || 'New dashboard' } });
      route(`${project.base}/dashboards/${created.id}`);
    } catch (e) {
      setError(e as Error);
    }
  };

  return (
    <>
      <PageHeader title="Dashboards" />
      <form class="card inline-form" onSubmit={create}>
        <label class="field">
          <span>New dashboard's name</span>
          <input value={name} maxLength={400} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit" class="button button-primary">
          Create dashboard
        </button>
      </form>
      <ErrorNotice error={error} />
      <ErrorNotice error={dashboards.error} retry={dashboards.reload} />
      {!dashboards.data && dashboards.loading ? (
        <Loading label="Loading dashboards…" />
      ) : dashboards.data?.count === 0 ? (
        <EmptyState title="No dashboards yet">
          <p>Create one above, then add insights to it from the insight builder's “Add to dashboard”.</p>
        </EmptyState>
      ) : (
        dashboards.data && (
          <DataTable caption="Dashboards" columns={[{ label: 'Name' }, { label: 'Description', wideOnly: true }]}>
            {dashboards.data.results.map((d) => (
              <tr key={d.id}>
                <td>
                  <a href={`${project.base}/dashboards/${d.id}`}>{d.name || `Dashboard ${d.id}`}</a>
                  {d.pinned && <span class="pill">Pinned</span>}
                </td>
                <td class="wide-only">{d.description}</td>
              </tr>
            ))}
          </DataTable>
        )
      )}
    </>
  );
}
