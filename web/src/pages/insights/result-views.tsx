/**
 * A query's results drawn for people: trends as line, bar, number or table; funnels as steps
 * with conversion, drop-off and time to convert; retention as a heat-map table; lifecycle and
 * stickiness as bars with their table; paths as a ranked list of steps taken. Every chart has
 * its numbers in a table too, so nothing is only in a canvas.
 */
import { SeriesChart, type ChartSeries } from '../../charts/series-chart';
import { DataTable } from '../../components/data-table';
import { numberText } from '../../components/format';
import { EmptyState } from '../../components/status';

type Any = Record<string, any>;

interface Props {
  query: Any;
  results: unknown;
  /** Smaller charts on dashboard tiles. */
  compact?: boolean;
}

export function InsightResult({ query, results, compact = false }: Props) {
  if (results === null || results === undefined || (Array.isArray(results) && results.length === 0)) {
    return (
      <EmptyState title="No data in this range">
        <p>No events matched. Widen the date range, or check the event names.</p>
      </EmptyState>
    );
  }
  switch (query.kind) {
    case 'TrendsQuery':
      return <TrendsView results={results as Any[]} display={query.trendsFilter?.display ?? 'ActionsLineGraph'} compact={compact} />;
    case 'FunnelsQuery':
      return <FunnelView results={results as Any[]} />;
    case 'RetentionQuery':
      return <RetentionView rows={results as Any[]} />;
    case 'LifecycleQuery':
      return <TrendsView results={results as Any[]} display="ActionsBar" compact={compact} />;
    case 'StickinessQuery':
      return <StickinessView results={results as Any[]} compact={compact} />;
    case 'PathsQuery':
      return <PathsView edges={results as Any[]} />;
    default:
      return <p class="muted">This kind of query has no chart; its rows are in the SQL page.</p>;
  }
}

const seriesLabel = (s: Any) => [s.label, s.compare_label === 'previous' ? '(previous period)' : null].filter(Boolean).join(' ');

/** Bucket starts ("2025-03-05" or "2025-03-05 14:00:00") as Unix seconds; the labels say the project's wall time. */
const bucketSeconds = (day: string) => Date.parse(`${day.replace(' ', 'T')}${day.length === 10 ? 'T00:00:00' : ''}Z`) / 1000;

function TrendsView({ results, display, compact }: { results: Any[]; display: string; compact: boolean }) {
  const totalValue = results.some((s) => typeof s.aggregated_value === 'number');
  if (display === 'BoldNumber') {
    return (
      <div class="bold-numbers">
        {results.map((s, i) => (
          <p key={i} class="bold-number">
            <span class="bold-number-value" data-value={String(s.aggregated_value ?? s.count)}>
              {numberText(s.aggregated_value ?? s.count)}
            </span>
            <span class="bold-number-label">{seriesLabel(s)}</span>
          </p>
        ))}
      </div>
    );
  }
  const showChart = display !== 'ActionsTable' && !totalValue && results[0]?.days?.length > 0;
  const chartSeries: ChartSeries[] = results.map((s) => ({ label: seriesLabel(s), values: s.data }));
  return (
    <>
      {showChart && <SeriesChart xs={results[0].days.map(bucketSeconds)} series={chartSeries} kind={display === 'ActionsBar' ? 'bar' : 'line'} height={compact ? 180 : 260} />}
      <DataTable caption="Series and their totals" columns={[{ label: 'Series' }, { label: totalValue ? 'Value' : 'Total' }]} class="series-table">
        {results.map((s, i) => (
          <tr key={i}>
            <td>{seriesLabel(s)}</td>
            <td class="number" data-value={String(s.aggregated_value ?? s.count)}>
              {numberText(s.aggregated_value ?? s.count)}
            </td>
          </tr>
        ))}
      </DataTable>
    </>
  );
}

export const durationText = (seconds: number | null | undefined) => {
  if (seconds === null || seconds === undefined) return '—';
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  if (seconds < 86_400) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86_400).toFixed(1)} days`;
};

const percent = (part: number, whole: number) => (whole > 0 ? `${((part / whole) * 100).toFixed(1)} %` : '—');

function FunnelView({ results }: { results: Any[] }) {
  // With a breakdown the results are one funnel per value.
  const funnels: Any[][] = Array.isArray(results[0]) ? (results as unknown as Any[][]) : [results];
  return (
    <>
      {funnels.map((steps, f) => (
        <section key={f} class="funnel" aria-label={steps[0]?.breakdown !== undefined ? `Funnel for ${String(steps[0].breakdown)}` : 'Funnel'}>
          {steps[0]?.breakdown !== undefined && <h3 class="section-title">{String(steps[0].breakdown) || 'None'}</h3>}
          <DataTable
            caption="Funnel steps"
            columns={[{ label: 'Step' }, { label: 'Persons' }, { label: 'Conversion' }, { label: 'Drop-off' }, { label: 'Average time to convert' }]}
            class="funnel-table"
          >
            {steps.map((step, i) => {
              const first = steps[0].count as number;
              const previous = i > 0 ? (steps[i - 1].count as number) : step.count;
              return (
                <tr key={i}>
                  <td>
                    <span class="step-number">{i + 1}</span> {step.custom_name || step.name}
                    <div class="funnel-bar" aria-hidden="true">
                      <div class="funnel-bar-fill" style={{ width: first > 0 ? `${(step.count / first) * 100}%` : '0%' }} />
                    </div>
                  </td>
                  <td class="number" data-value={String(step.count)}>
                    {numberText(step.count)}
                  </td>
                  <td class="number">{percent(step.count, first)}</td>
                  <td class="number">{i === 0 ? '—' : `${numberText(previous - step.count)} (${percent(previous - step.count, previous)})`}</td>
                  <td class="number">{i === 0 ? '—' : durationText(step.average_conversion_time)}</td>
                </tr>
              );
            })}
          </DataTable>
        </section>
      ))}
    </>
  );
}

function RetentionView({ rows }: { rows: Any[] }) {
  const periods = Math.max(...rows.map((row) => row.values.length));
  const labels = rows[0]?.values.map((v: Any) => v.label) ?? [];
  return (
    <DataTable caption="Retention by cohort" columns={[{ label: 'Cohort' }, { label: 'Persons' }, ...Array.from({ length: periods }, (_, k) => ({ label: labels[k] ?? `${k}` }))]} class="retention-table">
      {rows.map((row, r) => {
        const size = row.values[0]?.count ?? 0;
        return (
          <tr key={r}>
            <th scope="row">{new Date(row.date).toLocaleDateString(undefined, { timeZone: 'UTC' })}</th>
            <td class="number" data-value={String(size)}>
              {numberText(size)}
            </td>
            {row.values.map((value: Any, k: number) => {
              const share = size > 0 ? value.count / size : 0;
              return (
                <td key={k} class="number heat" style={{ backgroundColor: `rgba(29, 78, 216, ${(share * 0.85).toFixed(3)})`, color: share > 0.5 ? '#fff' : undefined }} title={`${value.count} of ${size}`}>
                  {size > 0 ? `${Math.round(share * 100)} %` : '—'}
                </td>
              );
            })}
          </tr>
        );
      })}
    </DataTable>
  );
}

function StickinessView({ results, compact }: { results: Any[]; compact: boolean }) {
  const labels: string[] = results[0]?.labels ?? [];
  return (
    <>
      <SeriesChart xs={results[0].days} series={results.map((s) => ({ label: seriesLabel(s), values: s.data }))} kind="bar" time={false} height={compact ? 180 : 240} />
      <DataTable caption="Persons by number of active intervals" columns={[{ label: 'Active' }, ...results.map((s) => ({ label: seriesLabel(s) }))]}>
        {labels.map((label, i) => (
          <tr key={i}>
            <td>{label}</td>
            {results.map((s, j) => (
              <td key={j} class="number">
                {numberText(s.data[i] ?? 0)}
              </td>
            ))}
          </tr>
        ))}
      </DataTable>
    </>
  );
}

/** `3_/pricing` → step 3, item /pricing. */
const pathItem = (key: string) => {
  const at = key.indexOf('_');
  return { step: Number(key.slice(0, at)), item: key.slice(at + 1) };
};

function PathsView({ edges }: { edges: Any[] }) {
  const sorted = [...edges].sort((a, b) => pathItem(a.source).step - pathItem(b.source).step || b.value - a.value);
  return (
    <DataTable caption="Steps people took, by step and how often" columns={[{ label: 'Step' }, { label: 'From' }, { label: 'To' }, { label: 'Times' }, { label: 'Average time' }]} class="paths-table">
      {sorted.map((edge, i) => {
        const from = pathItem(edge.source);
        return (
          <tr key={i}>
            <td class="number">{from.step}</td>
            <td class="break">{from.item}</td>
            <td class="break">→ {pathItem(edge.target).item}</td>
            <td class="number" data-value={String(edge.value)}>
              {numberText(edge.value)}
            </td>
            <td class="number">{durationText(edge.average_conversion_time / 1000)}</td>
          </tr>
        );
      })}
    </DataTable>
  );
}
