/**
 * FunnelsQuery (query-api.md §1.8): the three views over the actors' best attempts
 * (attempts.ts), each aggregated in the engine — step counts and conversion times, conversion
 * per entry period, or a histogram of time to convert — and shaped as PostHog answers.
 */
import { ir, type HogQLType } from '../../hogql/index.js';
import { validationError } from '../../kernel/errors.js';
import { type ResolvedDateRange, buckets, describeRange, resolveDateRange } from '../time/index.js';
import { bucketExpr, bucketWall } from '../series/bucket.js';
import type { InsightContext, KindResponse, QueryKind, Row } from '../types.js';
import { cohortDisplayName, withCohort } from '../node-fields.js';
import { bestAttempts } from './attempts.js';
import { funnelActors } from './actors.js';
import { type FunnelsNode, OTHER_BREAKDOWN, parseFunnelsQuery, previousRequired } from './parse.js';

type Expr = ir.IrExpr;

const int = (n: number) => ir.constant(n, 'Integer');

export const funnelsQuery: QueryKind<FunnelsNode> = {
  kind: 'FunnelsQuery',
  parse: parseFunnelsQuery,
  run: runFunnel,
  actors: funnelActors,
  actorsGroupType: (node) => node.groupTypeIndex,
  // PostHog: 3 minutes for ranges of a week or less or hourly intervals, else 15.
  freshForSeconds: (node) => (node.interval === 'hour' ? 180 : 900),
};

async function runFunnel(node: FunnelsNode, ctx: InsightContext): Promise<KindResponse> {
  if (node.interval === 'minute') throw validationError('Funnels do not support the minute interval.', 'interval', 'invalid_choice');
  const range = resolveDateRange(node.dateRange, { interval: node.interval, timeZone: ctx.project.timeZone, weekStartDay: ctx.project.weekStartDay, now: ctx.now });
  const options = { timeSpan: { from: new Date(range.readFrom), to: new Date(range.to) } };
  const run = (query: ir.IrQuery) => ctx.run(query, options);
  const view = (of: FunnelsNode) => (of.viz === 'steps' ? steps(of, range, ctx, run) : of.viz === 'trends' ? trends(of, range, ctx, run) : timeToConvert(of, range, ctx, run));
  const cohorts = node.viz === 'time_to_convert' ? undefined : node.breakdown?.cohorts;
  const results = cohorts ? await byCohort(node, cohorts, view, ctx) : await view(node);
  return { results, resolved_date_range: describeRange(range) };
}

/**
 * A cohort breakdown: the view once per cohort, over its members only (a person may be in
 * several cohorts, so the values cannot come from one grouped statement), each result tagged
 * with the cohort id as its breakdown value and, in the steps view, its name as `breakdown`. Funnels of steps are ordered as other breakdowns'.
 */
async function byCohort(node: FunnelsNode, cohorts: (number | 'all')[], view: (of: FunnelsNode) => Promise<unknown>, ctx: InsightContext): Promise<unknown> {
  const tagged: Array<Array<Record<string, unknown>>> = [];
  for (const cohort of cohorts) {
    const results = (await view({ ...node, breakdown: null, properties: withCohort(node.properties, cohort) })) as Array<Record<string, unknown>>;
    const tag = node.viz === 'steps' ? { breakdown: cohortDisplayName(cohort, ctx.cohortNames), breakdown_value: cohort } : { breakdown_value: cohort };
    tagged.push(results.map((item) => ({ ...item, ...tag })));
  }
  if (node.viz !== 'steps') return tagged.flat();
  const counts = (funnel: Array<Record<string, unknown>>) => funnel.map((step) => Number(step.count));
  return tagged.sort((a, b) => compareFunnels(counts(a), counts(b)) || String(a[0]?.breakdown_value).localeCompare(String(b[0]?.breakdown_value)));
}

/** Funnels with the most at the last step first, then at each earlier step. */
function compareFunnels(a: number[], b: number[]): number {
  for (let k = a.length - 1; k >= 0; k--) if (a[k] !== b[k]) return b[k] - a[k];
  return 0;
}

type Run = (query: ir.IrQuery) => Promise<Row[]>;

// --- shared aggregation -----------------------------------------------------------------------

const ref = (alias: string, name: string, type: HogQLType) => ir.column(alias, null, name, type);

/**
 * `SELECT <group>, <measures> FROM best GROUP BY <group>`, where a breakdown's values beyond
 * the limit (ranked by actors who entered, then by value) become "Other". Columns: `bd` (with a
 * breakdown), the `period` when its type is given, and the measures.
 */
function aggregate(node: FunnelsNode, best: ir.IrQuery, periodType: HogQLType | null, measures: (p: string) => Array<[string, Expr]>): ir.IrQuery {
  const p = 'p';
  const group: ir.IrSelectColumn[] = [];
  const ctes: Array<{ name: string; query: ir.IrQuery }> = [{ name: 'best', query: best }];
  const joins: ir.IrJoin[] = [];
  if (node.breakdown) {
    const bd = { ...ref('r', 'bd', 'Array'), item: 'String' as const };
    const rank = ir.call('row_number', [], 'Integer');
    ctes.push({
      name: 'ranks',
      query: ir.select({
        columns: [
          { name: 'bd', expr: bd },
          { name: 'rk', expr: { kind: 'window', call: rank, partitionBy: [], orderBy: [{ expr: ir.call('count', [], 'Integer'), desc: true }, { expr: bd, desc: false }], frame: null, type: 'Integer' } },
        ],
        from: { kind: 'cte', name: 'best', alias: 'r' },
        groupBy: [bd],
      }),
    });
    joins.push({ type: 'INNER', item: { kind: 'cte', name: 'ranks', alias: 'k' }, on: ir.op('=', [{ ...ref(p, 'bd', 'Array'), item: 'String' }, { ...ref('k', 'bd', 'Array'), item: 'String' }]) });
    const other: Expr = { kind: 'array', items: [ir.constant(OTHER_BREAKDOWN, 'String')], type: 'Array', item: 'String' };
    group.push({
      name: 'bd',
      expr: { kind: 'case', branches: [[ir.op('<=', [ref('k', 'rk', 'Integer'), int(node.breakdown.limit)]), { ...ref(p, 'bd', 'Array'), item: 'String' }]], otherwise: other, type: 'Array', item: 'String' },
    });
  }
  if (periodType) group.push({ name: 'period', expr: ref(p, 'period', periodType) });
  const columns = [...group, ...measures(p).map(([name, expr]) => ({ name, expr }))];
  return ir.select({ ctes, columns, from: { kind: 'cte', name: 'best', alias: p }, joins, groupBy: group.map((g) => g.expr) });
}

/** Actors of the group whose best attempt reached step k (0-based). */
const reachedCount = (p: string, k: number): Expr =>
  ir.call('sum', [{ kind: 'case', branches: [[ir.op('>=', [ref(p, 'steps', 'Integer'), int(k + 1)]), int(1)]], otherwise: int(0), type: 'Integer' }], 'Integer');

/** Actors of the group whose best attempt did optional step k. */
const doneCount = (p: string, k: number): Expr =>
  ir.call('sum', [{ kind: 'case', branches: [[ref(p, `d${k}`, 'Boolean'), int(1)]], otherwise: int(0), type: 'Integer' }], 'Integer');

/** Seconds from step `from` to step `to` of an actor's attempt; NULL when `to` was not reached. */
const secondsBetween = (p: string, from: number, to: number): Expr =>
  ir.op('/', [ir.cast(ir.op('-', [ref(p, `t${to}`, 'Integer'), ref(p, `t${from}`, 'Integer')], 'Integer'), 'Float'), ir.constant(1_000_000, 'Float')], 'Float');

const breakdownKey = (row: Row) => (row.bd as string[] | undefined) ?? null;

// --- steps ------------------------------------------------------------------------------------

async function steps(node: FunnelsNode, range: ResolvedDateRange, ctx: InsightContext, run: Run): Promise<unknown> {
  const n = node.steps.length;
  const best = bestAttempts(node, range, ctx, { perPeriod: false });
  const rows = await run(
    aggregate(node, best, null, (p) => {
      const out: Array<[string, Expr]> = [];
      for (let k = 0; k < n; k++) {
        // An optional step counts those who did it; conversion times run between required steps.
        const optional = node.steps[k].optional;
        out.push([`c${k}`, optional ? doneCount(p, k) : reachedCount(p, k)]);
        if (k === 0 || optional) continue;
        const since = secondsBetween(p, previousRequired(node.steps, k), k);
        out.push([`avg${k}`, ir.call('avg', [since], 'Float')], [`med${k}`, ir.call('quantile', [since], 'Float', { params: [ir.constant(0.5, 'Float')] })]);
      }
      return out;
    }),
  );
  const funnel = (row: Row | undefined, breakdown: string[] | null) =>
    Array.from({ length: n }, (_, k) => ({
      ...stepIdentity(node, k),
      order: k,
      people: [],
      count: Number(row?.[`c${k}`] ?? 0),
      type: node.order !== 'unordered' && node.steps[k].action ? 'actions' : 'events',
      average_conversion_time: k === 0 ? null : seconds(row?.[`avg${k}`]),
      median_conversion_time: k === 0 ? null : seconds(row?.[`med${k}`]),
      ...(breakdown && { breakdown, breakdown_value: breakdown }),
    }));
  if (!node.breakdown) return funnel(rows[0], null);
  const funnels = rows.map((row) => funnel(row, breakdownKey(row)));
  // Last step first, then each earlier step, all descending; then the value.
  const counts = (funnel: typeof funnels[number]) => funnel.map((step) => step.count);
  funnels.sort((a, b) => compareFunnels(counts(a), counts(b)) || JSON.stringify(a[0].breakdown).localeCompare(JSON.stringify(b[0].breakdown)));
  return funnels;
}

const seconds = (v: unknown) => (v === null || v === undefined ? null : Number(v));

function stepIdentity(node: FunnelsNode, k: number) {
  if (node.order === 'unordered') {
    const name = `Completed ${k + 1} step${k === 0 ? '' : 's'}`;
    return { action_id: null, name, custom_name: null };
  }
  const step = node.steps[k];
  if (step.action) return { action_id: step.action.id, name: step.action.name, custom_name: step.customName };
  return { action_id: step.event, name: step.event ?? 'All events', custom_name: step.customName };
}

// --- trends -----------------------------------------------------------------------------------

async function trends(node: FunnelsNode, range: ResolvedDateRange, ctx: InsightContext, run: Run): Promise<unknown> {
  const best = bestAttempts(node, range, ctx, { perPeriod: true });
  const periodType = bucketExpr(range.interval, range.timeZone, range.weekStartDay).type;
  const rows = await run(aggregate(node, best, periodType, (p) => [['entered', reachedCount(p, node.fromStep)], ['converted', reachedCount(p, node.toStep)]]));
  const list = buckets(range);
  const series = new Map<string, { breakdown: string[] | null; byPeriod: Map<number, Row>; entered: number }>();
  for (const row of rows) {
    const breakdown = breakdownKey(row);
    const id = JSON.stringify(breakdown);
    const entry = series.get(id) ?? { breakdown, byPeriod: new Map(), entered: 0 };
    entry.byPeriod.set(bucketWall(row.period, range.timeZone), row);
    entry.entered += Number(row.entered);
    series.set(id, entry);
  }
  if (series.size === 0 && !node.breakdown) series.set('null', { breakdown: null, byPeriod: new Map(), entered: 0 });
  const ordered = [...series.values()].sort((a, b) => b.entered - a.entered || JSON.stringify(a.breakdown).localeCompare(JSON.stringify(b.breakdown)));
  return ordered.map(({ breakdown, byPeriod }) => ({
    count: list.length,
    data: list.map((bucket) => {
      const row = byPeriod.get(bucket.wall);
      const entered = Number(row?.entered ?? 0);
      return entered === 0 ? 0 : Math.round((Number(row!.converted) / entered) * 10_000) / 100;
    }),
    days: list.map((b) => b.day),
    labels: list.map((b) => b.label),
    ...(breakdown && { breakdown_value: breakdown }),
  }));
}

// --- time to convert --------------------------------------------------------------------------

async function timeToConvert(node: FunnelsNode, range: ResolvedDateRange, ctx: InsightContext, run: Run): Promise<unknown> {
  const sample = (): ir.IrQuery => {
    const best = bestAttempts({ ...node, breakdown: null }, range, ctx, { perPeriod: false });
    return ir.select({
      columns: [{ name: 'v', expr: secondsBetween('p', node.fromStep, node.toStep) }],
      from: { kind: 'subquery', query: best, alias: 'p' },
      where: ir.op('>=', [ref('p', 'steps', 'Integer'), int(node.toStep + 1)]),
    });
  };
  const v = ref('s', 'v', 'Float');
  const [stats] = await run(
    ir.select({
      columns: [
        { name: 'n', expr: ir.call('count', [], 'Integer') },
        { name: 'lo', expr: ir.call('min', [v], 'Float') },
        { name: 'hi', expr: ir.call('max', [v], 'Float') },
        { name: 'mean', expr: ir.call('avg', [v], 'Float') },
      ],
      from: { kind: 'subquery', query: sample(), alias: 's' },
    }),
  );
  const count = Number(stats?.n ?? 0);
  if (count === 0) return { average_conversion_time: null, bins: [] };
  const lo = Math.floor(Number(stats.lo));
  const binCount = node.binCount ?? Math.min(60, Math.max(1, Math.ceil(Math.cbrt(count))));
  const width = Math.ceil((Number(stats.hi) - lo) / binCount) || 60;
  const binOf = ir.cast(ir.op('/', [ir.op('-', [v, ir.constant(lo, 'Float')], 'Float'), ir.constant(width, 'Float')], 'Float'), 'Integer');
  const rows = await run(
    ir.select({
      columns: [
        { name: 'bin', expr: binOf },
        { name: 'n', expr: ir.call('count', [], 'Integer') },
      ],
      from: { kind: 'subquery', query: sample(), alias: 's' },
      groupBy: [binOf],
    }),
  );
  const bins = Array.from({ length: binCount + 1 }, (_, i) => [lo + i * width, 0]);
  for (const row of rows) bins[Math.min(binCount, Number(row.bin))][1] += Number(row.n);
  return { average_conversion_time: Math.round(Number(stats.mean) * 100) / 100, bins };
}
