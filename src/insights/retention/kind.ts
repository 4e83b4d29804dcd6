/**
 * RetentionQuery (query-api.md §1.9). Cohort row i holds the actors who did the target event in
 * period i (recurring), or whose first target event ever falls in it (first time); value k
 * counts those of them who did the returning event in period i+k. The engine groups actors by
 * period once per side and counts (cohort period, return period) pairs, and the cohort sizes
 * in the same statement; only the small table of counts comes back.
 */
import { type EventsScope, ir, lazyJoins } from '../../hogql/index.js';
import { eventOrAction, groupPropertyText, insightEvents, instantConstant } from '../events-scope.js';
import { OTHER_MARKER } from '../trends/breakdown.js';
import { validationError } from '../../kernel/errors.js';
import { type CalendarUnit, addInstant, addUnits, isoWithOffset, resolveDateRange, startOfInstant, toInstant, toWall } from '../time/index.js';
import type { ActorsPoint, InsightContext, KindResponse, QueryKind, Row } from '../types.js';
import { type BreakdownPart, cohortBreakdownIds, withCohort } from '../node-fields.js';
import { bucketExpr, bucketWall } from '../series/bucket.js';
import { PERIOD_INTERVAL, type RetentionEntity, type RetentionNode, parseRetentionQuery } from './parse.js';

type Expr = ir.IrExpr;
const MAX_ROWS = 1_000;

export const retentionQuery: QueryKind<RetentionNode> = {
  kind: 'RetentionQuery',
  parse: parseRetentionQuery,
  run: runRetention,
  actors: retentionActors,
  actorsGroupType: (node) => node.groupTypeIndex,
  freshForSeconds: (node) => (node.period === 'Hour' ? 180 : 900),
};

interface Periods {
  start: number;
  end: number;
  /** First instant and wall-clock start of each cohort row's period. */
  rows: Array<{ start: number; wall: number }>;
}

/** `date_to` moves to the start of the next period; `date_from` to the start of its period, or totalIntervals periods before the end. */
function periodsOf(node: RetentionNode, ctx: InsightContext): Periods {
  const interval = PERIOD_INTERVAL[node.period];
  const { timeZone, weekStartDay } = ctx.project;
  const resolved = resolveDateRange(node.dateRange, { interval, timeZone, weekStartDay, now: ctx.now });
  const unit = interval as CalendarUnit;
  const end = addInstant(unit, 1, startOfInstant(unit, resolved.to - 1, timeZone, weekStartDay), timeZone);
  const start = node.dateRange?.date_from ? startOfInstant(unit, resolved.from, timeZone, weekStartDay) : addInstant(unit, -node.totalIntervals, end, timeZone);
  const rows: Periods['rows'] = [];
  const firstWall = toWall(start, timeZone);
  for (let i = 0; ; i++) {
    const wall = addUnits(unit, i, firstWall);
    const instant = toInstant(wall, timeZone);
    if (instant >= end) break;
    // An hour the clock skips when DST starts is no period (its wall time names no instant).
    if (interval === 'hour' && toWall(instant, timeZone) !== wall) continue;
    if (rows.length >= MAX_ROWS) throw validationError(`A retention query covers at most ${MAX_ROWS} periods; shorten the date range.`, 'dateRange.date_from');
    rows.push({ start: instant, wall });
  }
  return { start, end, rows };
}

/**
 * `(a, p)`: each actor once per period in which `entity` happened (at least `minimum` times).
 * With a property breakdown also `b`, the event's value ("" when missing): an actor is counted
 * apart under each value, as PostHog groups by actor and value. `only` keeps one value.
 */
function actorPeriods(node: RetentionNode, ctx: InsightContext, entity: RetentionEntity, attr: string, bounds: { from: number; to: number }, firstEver: boolean, minimum: number, only?: string): ir.IrQuery {
  const { scope, filters } = insightEvents(ctx);
  const timestamp = ir.column('e', 'events', 'timestamp', 'DateTime');
  const group = node.groupTypeIndex === null ? null : ir.column('e', 'events', `$group_${node.groupTypeIndex}`, 'String');
  const actor = group ?? scope.field(['person_id'], 0);
  const value = node.breakdown ? breakdownText(node.breakdown.parts[0], scope, ctx) : null;
  const where = ir.allOf([
    eventOrAction(scope, entity.event, entity.action, attr),
    filters(entity.properties, `${attr}.properties`),
    firstEver ? null : ir.op('>=', [timestamp, instantConstant(bounds.from)]),
    ir.op('<', [timestamp, instantConstant(bounds.to)]),
    filters(node.properties, 'properties'),
    node.filterTestAccounts ? filters(ctx.project.testAccountFilters, 'filterTestAccounts') : null,
    group ? ir.op('!=', [group, ir.constant('', 'String')]) : null,
    value && only !== undefined ? ir.op('=', [value, ir.constant(only, 'String')]) : null,
  ]);
  const interval = PERIOD_INTERVAL[node.period];
  const { timeZone, weekStartDay } = ctx.project;
  const from = { kind: 'table' as const, table: 'events' as const, alias: 'e', projectId: ctx.project.id };
  const valueColumn = (expr: Expr | null) => (expr ? [{ name: 'b', expr }] : []);
  if (firstEver) {
    // The first target event of all time, kept when it falls in the range.
    const first = ir.call('min', [timestamp], 'DateTime');
    const keys = value ? [actor, value] : [actor];
    const firsts = ir.select({ columns: [{ name: 'a', expr: actor }, ...valueColumn(value), { name: 'first', expr: first }], from, joins: lazyJoins(scope.binding), where, groupBy: keys });
    const f = ir.column('f', null, 'first', 'DateTime');
    return ir.select({
      columns: [
        { name: 'a', expr: ir.column('f', null, 'a', actor.type) },
        ...valueColumn(value && ir.column('f', null, 'b', 'String')),
        { name: 'p', expr: bucketExpr(interval, timeZone, weekStartDay, f) },
      ],
      from: { kind: 'subquery', query: firsts, alias: 'f' },
      where: ir.op('>=', [f, instantConstant(bounds.from)]),
    });
  }
  const period = bucketExpr(interval, timeZone, weekStartDay, timestamp);
  return ir.select({
    columns: [{ name: 'a', expr: actor }, ...valueColumn(value), { name: 'p', expr: period }],
    from,
    joins: lazyJoins(scope.binding),
    where,
    groupBy: value ? [actor, value, period] : [actor, period],
    having: minimum > 1 ? ir.op('>=', [ir.call('count', [], 'Integer'), ir.constant(minimum, 'Integer')]) : null,
  });
}

/** A breakdown property's text on the event, "" when missing (PostHog's retention keeps "" rather than the null marker). */
function breakdownText(part: BreakdownPart, scope: EventsScope, ctx: InsightContext): Expr {
  const text = part.type === 'group' ? groupPropertyText(ctx, part.property, part.groupTypeIndex!) : scope.filterSources()[part.type as 'event' | 'person'](part.property).text;
  return ir.call('coalesce', [text, ir.constant('', 'String')], 'String');
}

async function runRetention(node: RetentionNode, ctx: InsightContext): Promise<KindResponse> {
  if (node.breakdown) return { results: await breakdownRows(node, node.breakdown.limit, ctx) };
  if (!node.cohorts) return { results: (await retentionRows(node, ctx)).get('')! };
  // A person may be in several cohorts: the rows once per cohort, over its members.
  const results: Array<Record<string, unknown>> = [];
  for (const cohort of node.cohorts) {
    const rows = (await retentionRows({ ...node, cohorts: null, properties: withCohort(node.properties, cohort) }, ctx)).get('')!;
    results.push(...rows.map((row) => ({ ...row, breakdown_value: cohort })));
  }
  return { results };
}

/**
 * The rows once per breakdown value, values ranked by their cohorts' total size (then by value);
 * those past `limit` are summed into PostHog's "other" value, last.
 */
async function breakdownRows(node: RetentionNode, limit: number, ctx: InsightContext): Promise<Array<Record<string, unknown>>> {
  const byValue = await retentionRows(node, ctx);
  const size = (rows: RetentionRow[]) => rows.reduce((sum, row) => sum + row.values[0].count, 0);
  const ranked = [...byValue].sort(([a, x], [b, y]) => size(y) - size(x) || (a < b ? -1 : a > b ? 1 : 0));
  const kept = ranked.slice(0, limit);
  const rest = ranked.slice(limit);
  if (rest.length > 0) {
    const other = rest[0][1].map((row, i) => ({ ...row, values: row.values.map((v, k) => ({ ...v, count: rest.reduce((sum, [, rows]) => sum + rows[i].values[k].count, 0) })) }));
    kept.push([OTHER_MARKER, other]);
  }
  return kept.flatMap(([value, rows]) => rows.map((row) => ({ ...row, breakdown_value: value })));
}

interface RetentionRow {
  date: string;
  label: string;
  values: Array<{ count: number; label: string }>;
}

/** The rows by breakdown value ("" without a property breakdown; no entry for a value nobody has). */
async function retentionRows(node: RetentionNode, ctx: InsightContext): Promise<Map<string, RetentionRow[]>> {
  const periods = periodsOf(node, ctx);
  const interval = PERIOD_INTERVAL[node.period];
  const pType = bucketExpr(interval, ctx.project.timeZone, ctx.project.weekStartDay).type;
  const options = { timeSpan: { from: new Date(periods.start), to: new Date(periods.end) } };
  const inRange = { from: periods.start, to: periods.end };
  const targets = actorPeriods(node, ctx, node.target, 'retentionFilter.targetEntity', inRange, node.firstTime, 1);
  const returns = actorPeriods(node, ctx, node.returning, 'retentionFilter.returningEntity', inRange, false, node.minimumOccurrences);
  const t = (name: string, type: ir.IrColumn['type']) => ir.column('t', null, name, type);
  const r = (name: string, type: ir.IrColumn['type']) => ir.column('r', null, name, type);
  const count = ir.call('count', [], 'Integer');
  // With a breakdown an actor is an (actor, value) pair: joins and groups carry the value.
  const split = node.breakdown !== null;
  const value = (of: (name: string, type: ir.IrColumn['type']) => ir.IrColumn) => (split ? [of('b', 'String')] : []);
  const valueColumn = (of: (name: string, type: ir.IrColumn['type']) => ir.IrColumn) => value(of).map((expr) => ({ name: 'b', expr }));

  const ctes = [
    { name: 'targets', query: targets },
    { name: 'returns', query: returns },
  ];
  const joined = {
    from: { kind: 'cte' as const, name: 'targets', alias: 't' },
    joins: [
      {
        type: 'INNER' as const,
        item: { kind: 'cte' as const, name: 'returns', alias: 'r' },
        on: ir.allOf([ir.op('=', [t('a', 'Any'), r('a', 'Any')]), ...(split ? [ir.op('=', [t('b', 'String'), r('b', 'String')])] : []), ir.op('>', [r('p', pType), t('p', pType)])]),
      },
    ],
  };
  // Cohort sizes as (tp, tp) rows: the pairs below always have rp > tp.
  const sizes = ir.select({ columns: [{ name: 'tp', expr: t('p', pType) }, { name: 'rp', expr: t('p', pType) }, ...valueColumn(t), { name: 'n', expr: count }], from: joined.from, groupBy: [t('p', pType), ...value(t)] });
  // Non-cumulative: actors per (cohort period, return period). Cumulative: per (cohort period, last return period).
  const l = (name: string, type: ir.IrColumn['type']) => ir.column('l', null, name, type);
  const pairs = node.cumulative
    ? ir.select({
        columns: [{ name: 'tp', expr: l('tp', pType) }, { name: 'rp', expr: l('rp', pType) }, ...valueColumn(l), { name: 'n', expr: count }],
        from: {
          kind: 'subquery',
          alias: 'l',
          query: ir.select({ columns: [{ name: 'tp', expr: t('p', pType) }, { name: 'rp', expr: ir.call('max', [r('p', pType)], pType) }, ...valueColumn(t)], ...joined, groupBy: [t('a', 'Any'), t('p', pType), ...value(t)] }),
        },
        groupBy: [l('tp', pType), l('rp', pType), ...value(l)],
      })
    : ir.select({ columns: [{ name: 'tp', expr: t('p', pType) }, { name: 'rp', expr: r('p', pType) }, ...valueColumn(t), { name: 'n', expr: count }], ...joined, groupBy: [t('p', pType), r('p', pType), ...value(t)] });
  // One statement for both: the engine reads the events once where targets and returns are the
  // same query (DuckDB plans identical CTEs once), and never twice for the cohort sizes.
  const u = (name: string) => ir.column('u', null, name, name === 'n' ? 'Integer' : name === 'b' ? 'String' : pType);
  const rows = await ctx.run(
    ir.select({
      ctes,
      columns: ['tp', 'rp', ...(split ? ['b'] : []), 'n'].map((name) => ({ name, expr: u(name) })),
      from: { kind: 'subquery', alias: 'u', query: { kind: 'union', all: true, queries: [sizes, pairs] } },
    }),
    options,
  );

  const index = new Map(periods.rows.map((row, i) => [row.wall, i]));
  const rowOf = (v: unknown) => index.get(bucketWall(v, ctx.project.timeZone));
  const byValue = new Map<string, number[][]>();
  const matrix = (key: string) => {
    let values = byValue.get(key);
    if (!values) byValue.set(key, (values = periods.rows.map(() => new Array<number>(node.totalIntervals).fill(0))));
    return values;
  };
  for (const row of rows) {
    const i = rowOf(row.tp);
    const j = rowOf(row.rp);
    if (i === undefined || j === undefined) continue;
    const values = matrix(split ? String(row.b) : '');
    const k = j - i;
    if (k === 0) values[i][0] = Number(row.n);
    else if (node.cumulative) for (let m = 1; m <= Math.min(k, node.totalIntervals - 1); m++) values[i][m] += Number(row.n);
    else if (k >= 1 && k < node.totalIntervals) values[i][k] += Number(row.n);
  }
  if (!split) matrix(''); // the rows even when nobody did anything
  const shaped = (values: number[][]): RetentionRow[] =>
    periods.rows.map((row, i) => ({
      date: isoWithOffset(row.start, ctx.project.timeZone),
      label: `${node.period} ${i}`,
      values: values[i].map((count, k) => ({ count, label: `${node.period} ${k}` })),
    }));
  return new Map([...byValue].map(([key, values]) => [key, shaped(values)]));
}

/**
 * The actors (persons, or group keys with aggregation_group_type_index) of cohort row `interval`
 * (InsightActorsQuery): those whose target event (the first ever, for first-time retention)
 * falls in that row's period — as many as the row's `values[0].count`.
 */
function retentionActors(node: RetentionNode, point: ActorsPoint, ctx: InsightContext): ir.IrQuery {
  if (node.cohorts && point.breakdown !== null && point.breakdown !== undefined) {
    const [cohort] = cohortBreakdownIds(point.breakdown, 'source.breakdown');
    node = { ...node, cohorts: null, properties: withCohort(node.properties, cohort) };
  }
  const only = node.breakdown ? breakdownPoint(point.breakdown) : undefined;
  const periods = periodsOf(node, ctx);
  const i = point.interval ?? 0;
  if (!Number.isInteger(i) || i < 0 || i >= periods.rows.length) throw validationError(`interval must be a cohort row from 0 to ${periods.rows.length - 1}.`, 'source.interval');
  const bounds = { from: periods.rows[i].start, to: periods.rows[i + 1]?.start ?? periods.end };
  const targets = actorPeriods(node, ctx, node.target, 'retentionFilter.targetEntity', bounds, node.firstTime, 1, only);
  return ir.select({ distinct: true, columns: [{ name: 'actor_id', expr: ir.column('t', null, 'a', node.groupTypeIndex === null ? 'UUID' : 'String') }], from: { kind: 'subquery', query: targets, alias: 't' } });
}

/** The breakdown value a retention actors point names (a text, or a list of one); "other" merges many, so it is refused. */
function breakdownPoint(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  const text = Array.isArray(value) && value.length === 1 ? value[0] : value;
  if (typeof text !== 'string') throw validationError('breakdown must be one breakdown value (text).', 'source.breakdown');
  if (text === OTHER_MARKER) throw validationError('The persons of the "other" breakdown value are not listed; name one value.', 'source.breakdown');
  return text;
}
