import { useEffect, useState } from 'preact/hooks';
import { api, query } from '../../api/client';
import type { FeatureFlag, Page } from '../../api/types';
import { useResource } from '../../api/use-resource';
import { projectApi, useProject } from '../../auth/project';
import { timeAgo, fullDate } from '../../components/format';
import { PageHeader } from '../../components/shell';
import { EmptyState, ErrorNotice, Loading } from '../../components/status';
import { releaseSummary } from './flag-form';
import { useGroupTypes } from './group-types';
import { DataTable } from '../../components/data-table';

export function FlagListPage() {
  const project = useProject();
  const [search, setSearch] = useState('');
  const [applied, setApplied] = useState('');
  const [toggleError, setToggleError] = useState<Error | null>(null);
  const groupTypes = useGroupTypes();
  const flags = useResource((signal) => api<Page<FeatureFlag>>(projectApi(project, `feature_flags/${query({ search: applied, limit: 200 })}`), { signal }), [project.id, applied]);

  useEffect(() => {
    const timer = setTimeout(() => setApplied(search.trim()), 250);
    return () => clearTimeout(timer);
  }, [search]);

  const toggle = async (flag: FeatureFlag) => {
    setToggleError(null);
    try {
      await api(projectApi(project, `feature_flags/${flag.id}/`), { method: 'PATCH', body: { active: !flag.active } });
      flags.reload();
    } catch (error) {
      setToggleError(error as Error);
    }
  };

  return (
    <>
      <PageHeader title="Feature flags">
        <a class="button button-primary" href={`${project.base}/feature_flags/new`}>
          New feature flag
        </a>
      </PageHeader>
      <label class="field search-field">
        <span>Search by key or description</span>
        <input type="search" value={search} onInput={(e) => setSearch((e.target as HTMLInputElement).value)} />
      </label>
      <ErrorNotice error={flags.error} retry={flags.reload} />
      <ErrorNotice error={toggleError} />
      {!flags.data && flags.loading ? (
        <Loading label="Loading feature flags…" />
      ) : flags.data?.count === 0 ? (
        applied ? (
          <EmptyState title="No flag matches">
            <p>No feature flag's key or description contains “{applied}”.</p>
          </EmptyState>
        ) : (
          <EmptyState title="No feature flags yet">
            <p>
              Create a flag, then ask for it in your code: <code>posthog.isFeatureEnabled('my-flag')</code> in the browser, or{' '}
              <code>await posthog.isFeatureEnabled('my-flag', distinctId)</code> in Node.
            </p>
            <p>
              <a class="button button-primary" href={`${project.base}/feature_flags/new`}>
                Create your first flag
              </a>
            </p>
          </EmptyState>
        )
      ) : flags.data ? (
        <DataTable
          caption="Feature flags"
          columns={[{ label: 'Key' }, { label: 'Description', wideOnly: true }, { label: 'Release' }, { label: 'Enabled' }, { label: 'Last changed', wideOnly: true }]}
        >
              {flags.data.results.map((flag) => (
                <tr key={flag.id}>
                  <td>
                    <a class="mono" href={`${project.base}/feature_flags/${flag.id}`}>
                      {flag.key}
                    </a>
                  </td>
                  <td class="wide-only">{flag.name}</td>
                  <td>{releaseSummary(flag, groupTypes)}</td>
                  <td>
                    <button type="button" role="switch" aria-checked={flag.active} class="switch" onClick={() => void toggle(flag)} aria-label={`${flag.key} enabled`}>
                      <span aria-hidden="true">{flag.active ? 'On' : 'Off'}</span>
                    </button>
                  </td>
                  <td class="wide-only">
                    <time dateTime={flag.updated_at} title={fullDate(flag.updated_at)}>
                      {timeAgo(flag.updated_at)}
                    </time>
                    {flag.created_by && <span class="muted"> · created by {flag.created_by.first_name || flag.created_by.email}</span>}
                  </td>
                </tr>
              ))}
        </DataTable>
      ) : null}
    </>
  );
}
