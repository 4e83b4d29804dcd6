/**
 * HogQL: write a SELECT, run it through the query API (HogQLQuery), read the rows in a table,
 * download them as CSV, save the query as an insight. `?q=` opens with a query (the insight
 * builder's "Edit as SQL"), `?insight=<id>` with a saved one.
 */
import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api } from '../../api/client';
import { projectApi, useProject } from '../../auth/project';
import { DataTable } from '../../components/data-table';
import { valueText } from '../../components/format';
import { PageHeader } from '../../components/shell';
import { ErrorNotice, Loading, SuccessNotice } from '../../components/status';
import { toCsv } from './csv';

interface HogQLResponse {
  columns: string[];
  results: unknown[][];
  hasMore?: boolean | null;
}

const EXAMPLE = 'select event, count() as events\nfrom events\nwhere timestamp > now() - interval 7 day\ngroup by event\norder by events desc';

export function SqlPage() {
  const project = useProject();
  const { query: params } = useLocation();
  const [sql, setSql] = useState(params.q ?? EXAMPLE);
  const [insightId, setInsightId] = useState<string | null>(params.insight ?? null);
  const [name, setName] = useState('');
  const [running, setRunning] = useState(false);
  const [answer, setAnswer] = useState<HogQLResponse | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [notice, setNotice] = useState('');

  useEffect(() => {
    if (!params.insight) return;
    api<{ name: string; query: { source?: { query?: string } } }>(projectApi(project, `insights/${params.insight}/`)).then(
      (insight) => {
        setSql(insight.query.source?.query ?? '');
        setName(insight.name);
      },
      (e: Error) => setError(e),
    );
  }, [params.insight]);

  const run = async (event?: Event) => {
    event?.preventDefault();
    setRunning(true);
    setError(null);
    try {
      setAnswer(await api<HogQLResponse>(projectApi(project, 'query/'), { method: 'POST', body: { query: { kind: 'HogQLQuery', query: sql } } }));
    } catch (e) {
      setError(e as Error);
      setAnswer(null);
    } finally {
      setRunning(false);
    }
  };

  const download = () => {
    if (!answer) return;
    const link = document.createElement('a');
    link.href = URL.createObjectURL(new Blob([toCsv(answer.columns, answer.results)], { type: 'text/csv' }));
    link.download = 'query.csv';
    link.click();
    URL.revokeObjectURL(link.href);
  };

  const save = async () => {
    setError(null);
    const body = { name: name.trim() || sql.split('\n')[0].slice(0, 80), query: { kind: 'DataVisualizationNode', source: { kind: 'HogQLQuery', query: sql } } };
    try {
      const saved = insightId
        ? await api<{ id: number }>(projectApi(project, `insights/${insightId}/`), { method: 'PATCH', body })
        : await api<{ id: number }>(projectApi(project, 'insights/'), { method: 'POST', body });
      setInsightId(String(saved.id));
      setNotice('Saved as an insight.');
    } catch (e) {
      setError(e as Error);
    }
  };

  return (
    <>
      <PageHeader title="SQL" />
      <form class="card sql-form" onSubmit={run}>
        <label class="field">
          <span>HogQL query (tables: events, persons; Ctrl+Enter runs it)</span>
          <textarea
            class="mono sql-editor"
            rows={8}
            spellcheck={false}
            value={sql}
            onInput={(e) => setSql((e.target as HTMLTextAreaElement).value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void run(e);
            }}
          />
        </label>
        <div class="page-actions">
          <button type="submit" class="button button-primary" disabled={running}>
            {running ? 'Running…' : 'Run'}
          </button>
          <button type="button" class="button button-secondary" disabled={!answer} onClick={download}>
            Download CSV
          </button>
          <label class="field field-inline">
            <span>Name</span>
            <input value={name} maxLength={400} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
          </label>
          <button type="button" class="button button-secondary" onClick={() => void save()}>
            {insightId ? 'Save changes' : 'Save as insight'}
          </button>
        </div>
      </form>
      <ErrorNotice error={error} />
      {notice && <SuccessNotice>{notice}</SuccessNotice>}
      {running && !answer && <Loading label="Running the query…" />}
      {answer && (
        <section aria-label="Results">
          <p class="hint" role="status">
            {answer.results.length} row{answer.results.length === 1 ? '' : 's'}
            {answer.hasMore ? ' (more exist: add a LIMIT to choose how many)' : ''}
          </p>
          <DataTable caption="Query results" columns={answer.columns.map((label) => ({ label }))} class="sql-results">
            {answer.results.map((row, i) => (
              <tr key={i}>
                {row.map((cell, j) => (
                  <td key={j} class="mono">
                    {cell === null ? <span class="muted">null</span> : valueText(cell)}
                  </td>
                ))}
              </tr>
            ))}
          </DataTable>
        </section>
      )}
    </>
  );
}
