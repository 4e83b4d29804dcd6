/**
 * Build an insight: pick its kind, events, math, breakdown, compare, interval and dates; the
 * query runs through the query API as the form changes, its HogQL can be opened in the SQL
 * page, and it can be saved (and placed on a dashboard). `/insights/new` or `/insights/<id>`.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { api, query } from '../../api/client';
import type { Page } from '../../api/types';
import { useResource } from '../../api/use-resource';
import { projectApi, useProject } from '../../auth/project';
import { PageHeader } from '../../components/shell';
import { ErrorNotice, Loading, SuccessNotice } from '../../components/status';
import { InsightForm } from './insight-form';
import { describe, fromQuery, initialState, toQuery, type BuilderState } from './query-builder';
import { InsightResult } from './result-views';

interface QueryResponse {
  results: unknown;
  hogql: string | null;
  is_cached: boolean;
}

export function InsightPage() {
  const project = useProject();
  const { params } = useRoute();
  const { route } = useLocation();
  const id = params.insightId === 'new' ? null : params.insightId;
  const saved = useResource((signal) => (id ? api<Record<string, any>>(projectApi(project, `insights/${id}/`), { signal }) : Promise.resolve(null)), [project.id, id]);
  const [state, setState] = useState<BuilderState | null>(id ? null : initialState());
  const [name, setName] = useState('');
  const [dashboardId, setDashboardId] = useState('');
  const [saving, setSaving] = useState(false);
  const [saveError, setSaveError] = useState<Error | null>(null);
  const [savedNotice, setSavedNotice] = useState('');

  useEffect(() => {
    if (!saved.data) return;
    const node = saved.data.query?.source ?? saved.data.query;
    setState(fromQuery(node));
    setName(saved.data.name);
  }, [saved.data]);

  const node = useMemo(() => (state ? toQuery(state) : null), [state]);
  const [debounced, setDebounced] = useState<Record<string, unknown> | null>(null);
  useEffect(() => {
    const timer = setTimeout(() => setDebounced(node), 350);
    return () => clearTimeout(timer);
  }, [JSON.stringify(node)]);

  const result = useResource(
    (signal) => (debounced ? api<QueryResponse>(projectApi(project, 'query/'), { method: 'POST', body: { query: debounced }, signal }) : Promise.resolve(null)),
    [project.id, JSON.stringify(debounced)],
  );
  const dashboards = useResource((signal) => api<Page<{ id: number; name: string }>>(projectApi(project, `dashboards/${query({ limit: 200 })}`), { signal }), [project.id]);

  const save = async (event: Event) => {
    event.preventDefault();
    if (!state) return;
    setSaving(true);
    setSaveError(null);
    setSavedNotice('');
    try {
      const current: number[] = saved.data?.dashboards ?? [];
      const body = {
        name: name.trim() || describe(state),
        query: { kind: 'InsightVizNode', source: toQuery(state) },
        ...(dashboardId && { dashboards: [...new Set([...current, Number(dashboardId)])] }),
      };
      const answer = id
        ? await api<{ id: number }>(projectApi(project, `insights/${id}/`), { method: 'PATCH', body })
        : await api<{ id: number }>(projectApi(project, 'insights/'), { method: 'POST', body });
      setSavedNotice(dashboardId ? 'Saved, and placed on the dashboard.' : 'Saved.');
      if (!id) route(`${project.base}/insights/${answer.id}`, true);
      else saved.reload();
    } catch (error) {
      setSaveError(error as Error);
    } finally {
      setSaving(false);
    }
  };

  if (saved.error) return <ErrorNotice error={saved.error} retry={saved.reload} />;
  if (!state) return <Loading label="Loading the insight…" />;

  return (
    <>
      <PageHeader title={id ? saved.data?.name || 'Insight' : 'New insight'}>
        <a class="button button-secondary" href={`${project.base}/insights`}>
          All insights
        </a>
      </PageHeader>
      <div class="insight-layout">
        <InsightForm state={state} onChange={setState} />
        <section class="card insight-result" aria-label="Result" aria-busy={result.loading}>
          <ErrorNotice error={result.error} retry={result.reload} />
          {result.loading && !result.data ? <Loading label="Running the query…" /> : result.data && debounced && <InsightResult query={debounced} results={result.data.results} />}
          {result.loading && result.data && <p class="hint">Updating…</p>}
          {result.data?.hogql && (
            <details class="hogql">
              <summary>Show as HogQL</summary>
              <pre class="code-block">{result.data.hogql}</pre>
              <a class="button button-secondary button-small" href={`${project.base}/sql${query({ q: result.data.hogql })}`}>
                Edit as SQL
              </a>
            </details>
          )}
        </section>
      </div>
      <form class="card inline-form save-insight" onSubmit={save}>
        <label class="field">
          <span>Name</span>
          <input value={name} placeholder={describe(state)} maxLength={400} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </label>
        <label class="field">
          <span>Add to dashboard</span>
          <select value={dashboardId} onChange={(e) => setDashboardId((e.target as HTMLSelectElement).value)}>
            <option value="">None</option>
            {dashboards.data?.results.map((d) => (
              <option key={d.id} value={String(d.id)}>
                {d.name || `Dashboard ${d.id}`}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" class="button button-primary" disabled={saving}>
          {saving ? 'Saving…' : id ? 'Save changes' : 'Save insight'}
        </button>
      </form>
      <ErrorNotice error={saveError} />
      {savedNotice && <SuccessNotice>{savedNotice}</SuccessNotice>}
    </>
  );
}
