/** Saved insights, last changed first, with a search box; a new project is told how to start. */
import { useEffect, useState } from 'preact/hooks';
import { api, query } from '../../api/client';
import type { Page } from '../../api/types';
import { useResource } from '../../api/use-resource';
import { projectApi, useProject } from '../../auth/project';
import { DataTable } from '../../components/data-table';
import { fullDate, timeAgo } from '../../components/format';
import { PageHeader } from '../../components/shell';
import { EmptyState, ErrorNotice, Loading } from '../../components/status';

interface SavedInsight {
  id: number;
  name: string;
  description: string;
  query: { kind: string; source?: { kind: string } };
  last_modified_at: string;
  created_by: { email: string } | null;
}

const KIND_NAMES: Record<string, string> = {
  TrendsQuery: 'Trends',
  FunnelsQuery: 'Funnel',
  RetentionQuery: 'Retention',
  LifecycleQuery: 'Lifecycle',
  StickinessQuery: 'Stickiness',
  PathsQuery: 'Paths',
  HogQLQuery: 'SQL',
  EventsQuery: 'Events',
};

export function InsightListPage() {
  const project = useProject();
  const [search, setSearch] = useState('');
  const [applied, setApplied] = useState('');
  useEffect(() => {
    const timer = setTimeout(() => setApplied(search.trim()), 250);
    return () => clearTimeout(timer);
  }, [search]);
  const insights = useResource((signal) => api<Page<SavedInsight>>(projectApi(project, `insights/${query({ search: applied, limit: 200 })}`), { signal }), [project.id, applied]);

  return (
    <>
      <PageHeader title="Insights">
        <a class="button button-primary" href={`${project.base}/insights/new`}>
          New insight
        </a>
      </PageHeader>
      <label class="field search-field">
        <span>Search by name or description</span>
        <input type="search" value={search} onInput={(e) => setSearch((e.target as HTMLInputElement).value)} />
      </label>
      <ErrorNotice error={insights.error} retry={insights.reload} />
      {!insights.data && insights.loading ? (
        <Loading label="Loading insights…" />
      ) : insights.data?.count === 0 ? (
        <EmptyState title={applied ? 'No insight matches' : 'No saved insights yet'}>
          <p>{applied ? `No insight's name or description contains “${applied}”.` : 'Build a trend, a funnel or a retention table from your events, then save it to find it here and place it on a dashboard.'}</p>
          {!applied && (
            <a class="button button-primary" href={`${project.base}/insights/new`}>
              Build an insight
            </a>
          )}
        </EmptyState>
      ) : (
        insights.data && (
          <DataTable caption="Saved insights" columns={[{ label: 'Name' }, { label: 'Kind' }, { label: 'Changed' }, { label: 'Created by', wideOnly: true }]}>
            {insights.data.results.map((insight) => (
              <tr key={insight.id}>
                <td>
                  <a href={insight.query.kind === 'DataVisualizationNode' ? `${project.base}/sql?insight=${insight.id}` : `${project.base}/insights/${insight.id}`}>{insight.name || `Insight ${insight.id}`}</a>
                  {insight.description && <div class="muted">{insight.description}</div>}
                </td>
                <td>{KIND_NAMES[insight.query.source?.kind ?? insight.query.kind] ?? insight.query.kind}</td>
                <td title={fullDate(insight.last_modified_at)}>{timeAgo(insight.last_modified_at)}</td>
                <td class="wide-only">{insight.created_by?.email ?? '—'}</td>
              </tr>
            ))}
          </DataTable>
        )
      )}
    </>
  );
}
