/**
 * PathsQuery (query-api.md §1.12): the transitions between consecutive items of the actors'
 * sessions, as edges `{source: "1_/home", target: "2_/pricing", value, average_conversion_time}`.
 * An item is a pageview's URL without its trailing slash, a screen's name, or else the event's
 * name or a HogQL expression, then cleaned and grouped (items.ts). Sessions split an actor's
 * events at gaps of 30 minutes or more; repeats of one item in a row collapse; a path starts at
 * `startPoint` and ends at `endPoint` when given and is at most `stepLimit` items long. All of
 * it is window functions in one statement; only the edges return.
 */
import { ir, lazyJoins } from '../../hogql/index.js';
import { insightEvents, instantConstant } from '../events-scope.js';
import { validationError } from '../../kernel/errors.js';
import { describeRange, resolveDateRange, type DateRangeInput } from '../time/index.js';
import type { ActorsPoint, InsightContext, KindResponse, QueryKind } from '../types.js';
import { type Obj, integerField, isObject } from '../node-fields.js';
import { groupedItem, parsePathItemRules, pathItem, type PathItemRules } from './items.js';

type Expr = ir.IrExpr;

export interface PathsNode extends PathItemRules {
  kind: 'PathsQuery';
  startPoint: string | null;
  endPoint: string | null;
  stepLimit: number;
  edgeLimit: number;
  excludeEvents: string[];
  minEdgeWeight: number | null;
  maxEdgeWeight: number | null;
  dateRange: DateRangeInput | null;
  properties: unknown;
  filterTestAccounts: boolean;
}

const SESSION_GAP_US = 30 * 60 * 1_000_000;

function text(v: unknown, attr: string): string | null {
  if (v === undefined || v === null || v === '') return null;
  if (typeof v !== 'string' || v.length > 2000) throw validationError(`${attr} must be a path item (a URL, screen or event name).`, attr);
  return v;
}

export function parsePathsQuery(node: Obj): PathsNode {
  const raw = node.pathsFilter ?? {};
  if (!isObject(raw)) throw validationError('pathsFilter must be an object.', 'pathsFilter');
  const rules = parsePathItemRules(raw);
  if (node.funnelPathsFilter !== undefined && node.funnelPathsFilter !== null) throw validationError('Paths around funnel steps are not supported yet.', 'funnelPathsFilter', 'invalid_choice');
  const exclude = raw.excludeEvents ?? [];
  if (!Array.isArray(exclude) || exclude.some((e) => typeof e !== 'string')) throw validationError('pathsFilter.excludeEvents must be a list of path items.', 'pathsFilter.excludeEvents');
  if (node.dateRange !== undefined && node.dateRange !== null && !isObject(node.dateRange)) throw validationError('dateRange must be an object.', 'dateRange');
  return {
    kind: 'PathsQuery',
    ...rules,
    startPoint: text(raw.startPoint, 'pathsFilter.startPoint'),
    endPoint: text(raw.endPoint, 'pathsFilter.endPoint'),
    stepLimit: integerField(raw.stepLimit, 5, 2, 20, 'pathsFilter.stepLimit')!,
    edgeLimit: integerField(raw.edgeLimit, 50, 1, 10_000, 'pathsFilter.edgeLimit')!,
    excludeEvents: exclude as string[],
    minEdgeWeight: integerField(raw.minEdgeWeight, null, 0, Number.MAX_SAFE_INTEGER, 'pathsFilter.minEdgeWeight'),
    maxEdgeWeight: integerField(raw.maxEdgeWeight, null, 0, Number.MAX_SAFE_INTEGER, 'pathsFilter.maxEdgeWeight'),
    dateRange: (node.dateRange ?? null) as DateRangeInput | null,
    properties: node.properties ?? [],
    filterTestAccounts: node.filterTestAccounts === true,
  };
}

export const pathsQuery: QueryKind<PathsNode> = {
  kind: 'PathsQuery',
  parse: parsePathsQuery,
  run: runPaths,
  actors: pathsActors,
  freshForSeconds: () => 900,
};

const int = (n: number) => ir.constant(n, 'Integer');
const str = (s: string) => ir.constant(s, 'String');
const when = (condition: Expr, then: Expr, otherwise: Expr = ir.NULL): Expr => ({ kind: 'case', branches: [[condition, then]], otherwise, type: then.type });
const window = (call: ir.IrCall, partitionBy: Expr[], orderBy: ir.IrOrder[], frame: ir.IrFrame | null = null): Expr => ({ kind: 'window', call, partitionBy, orderBy, frame, type: call.type });

let aliases = 0;

/** A SELECT over a subquery, its columns read through `c`. */
function over(query: ir.IrQuery, build: (c: (name: string, type?: ir.IrColumn['type']) => Expr) => { columns: Array<[string, Expr]>; where?: Expr | null; groupBy?: Expr[]; orderBy?: ir.IrOrder[]; limit?: number }): ir.IrSelect {
  const alias = `q${aliases++ % 1000}`;
  const types = new Map(ir.outputColumns(query).map((col) => [col.name, col.expr.type]));
  const c = (name: string) => ir.column(alias, null, name, types.get(name) ?? 'Any');
  const parts = build(c);
  return ir.select({
    columns: parts.columns.map(([name, expr]) => ({ name, expr })),
    from: { kind: 'subquery', query, alias },
    where: parts.where ?? null,
    groupBy: parts.groupBy ?? [],
    orderBy: parts.orderBy ?? [],
    limit: parts.limit === undefined ? null : int(parts.limit),
  });
}

/**
 * Every transition of the paths: `(a, step, item, us, nextItem, nextUs)` per actor session,
 * `nextItem` null after the last kept item.
 */
function pathEdges(node: PathsNode, ctx: InsightContext) {
  const range = resolveDateRange(node.dateRange, { interval: 'day', timeZone: ctx.project.timeZone, weekStartDay: ctx.project.weekStartDay, now: ctx.now });
  const { scope, filters } = insightEvents(ctx);
  const event = ir.column('e', 'events', 'event', 'String');
  const timestamp = ir.column('e', 'events', 'timestamp', 'DateTime');
  const item = pathItem(node, scope);
  // `hogql` adds no condition: with no other type listed, every event is an item (as in PostHog).
  const typeConditions = node.includeEventTypes.flatMap((t) => (t === 'hogql' ? [] : [t === 'custom_event' ? ir.op('notLike', [event, str('$%')]) : ir.op('=', [event, str(t)])]));
  const base = ir.select({
    columns: [
      { name: 'a', expr: scope.field(['person_id'], 0) },
      { name: 'us', expr: ir.call('toUnixTimestamp64Micro', [timestamp], 'Integer') },
      { name: 'uid', expr: ir.column('e', 'events', 'uuid', 'UUID') },
      { name: 'item', expr: item },
    ],
    from: { kind: 'table', table: 'events', alias: 'e', projectId: ctx.project.id },
    where: ir.allOf([
      ir.op('>=', [timestamp, instantConstant(range.readFrom)]),
      ir.op('<', [timestamp, instantConstant(range.to)]),
      typeConditions.length === 0 ? null : ir.anyOf(typeConditions),
      filters(node.properties, 'properties'),
      node.filterTestAccounts ? filters(ctx.project.testAccountFilters, 'filterTestAccounts') : null,
    ]),
  });
  base.joins = lazyJoins(scope.binding);
  // Groupings read the cleaned item once per pattern: computed a level up, over the cleaned column.
  const grouped = node.pathGroupings.length === 0 ? base : over(base, (c) => ({ columns: [...['a', 'us', 'uid'].map((n) => [n, c(n)] as [string, Expr]), ['item', groupedItem(node, c('item'))!]] }));
  // Excluded items are the final ones (cleaned and grouped), as startPoint and endPoint are.
  const withoutExcluded = node.excludeEvents.length === 0 ? grouped : over(grouped, (c) => ({ columns: ['a', 'us', 'uid', 'item'].map((n) => [n, c(n)]), where: ir.op('notIn', [c('item'), ...node.excludeEvents.map(str)]) }));

  const byTime = (c: (name: string) => Expr): ir.IrOrder[] => [{ expr: c('us'), desc: false }, { expr: c('uid'), desc: false }];
  // Each window level sorts every event of the range again; windows of one level share a sort,
  // so the chain has two (three with a start or end point). First, over each actor's events in
  // time order: the gap to the previous event and the previous item.
  const previous = over(withoutExcluded, (c) => {
    const lag = (name: string, type: 'String' | 'Integer') => window(ir.call('lag', [c(name), int(1)], type), [c('a')], byTime(c));
    return { columns: [...['a', 'us', 'uid', 'item'].map((n) => [n, c(n)] as [string, Expr]), ['previousUs', lag('us', 'Integer')], ['previousItem', lag('item', 'String')]] };
  });
  // A session starts at the actor's first event and after every gap of 30 minutes or more;
  // within one, repeats of an item in a row collapse into the first. (A window's value is read a
  // level up: engines refuse windows inside TRY and similar.)
  const collapsed = over(previous, (c) => {
    const starts = ir.anyOf([ir.op('isNull', [c('previousUs')]), ir.op('>=', [ir.op('-', [c('us'), c('previousUs')], 'Integer'), int(SESSION_GAP_US)])])!;
    return {
      columns: [...['a', 'us', 'uid', 'item'].map((n) => [n, c(n)] as [string, Expr]), ['starts', starts]],
      where: ir.anyOf([starts, ir.op('!=', [c('previousItem'), c('item')])]),
    };
  });
  if (node.startPoint === null && node.endPoint === null) return { edges: leadingEdges(node, collapsed, byTime), range };
  const sessions = over(collapsed, (c) => ({
    columns: [
      ...['a', 'us', 'uid', 'item'].map((n) => [n, c(n)] as [string, Expr]),
      ['sid', window(ir.call('count', [when(c('starts'), int(1))], 'Integer'), [c('a')], byTime(c), { unit: 'rows', start: null, end: 0 })],
    ],
  }));
  // Numbered within the session, with the item after each (trimmed to the kept ones below).
  const numbered = over(sessions, (c) => {
    const inSession = (call: ir.IrCall) => window(call, [c('a'), c('sid')], byTime(c));
    return {
      columns: [
        ...['a', 'sid', 'us', 'item'].map((n) => [n, c(n)] as [string, Expr]),
        ['idx', inSession(ir.call('row_number', [], 'Integer'))],
        ['nextItem', inSession(ir.call('lead', [c('item'), int(1)], 'String'))],
        ['nextUs', inSession(ir.call('lead', [c('us'), int(1)], 'Integer'))],
      ],
    };
  });
  const carried = ['a', 'sid', 'us', 'item', 'idx', 'nextItem', 'nextUs'];
  // The first startPoint and the first endPoint (after the start) of each session.
  const marked = over(numbered, (c) => {
    const first = (value: string, after: Expr | null) =>
      window(ir.call('min', [when(ir.allOf([ir.op('=', [c('item'), str(value)]), after]) ?? ir.TRUE, c('idx'))], 'Integer'), [c('a'), c('sid')], []);
    const start = node.startPoint === null ? int(1) : first(node.startPoint, null);
    return { columns: [...carried.map((n) => [n, c(n)] as [string, Expr]), ['startIdx', start]] };
  });
  const ended = over(marked, (c) => {
    const end =
      node.endPoint === null
        ? ir.NULL
        : window(ir.call('min', [when(ir.allOf([ir.op('=', [c('item'), str(node.endPoint)]), ir.op('>=', [c('idx'), c('startIdx')])])!, c('idx'))], 'Integer'), [c('a'), c('sid')], []);
    return { columns: [...[...carried, 'startIdx'].map((n) => [n, c(n)] as [string, Expr]), ['endIdx', end]] };
  });
  // Keep from the start point (or the first item) to the end point: the first stepLimit items,
  // or with an end point the last stepLimit up to it; numbered from 1. The kept items of a
  // session are consecutive, so the next item is kept too unless this one is the last kept.
  const edges = over(ended, (c) => {
    const lastWindow = ir.op('+', [ir.op('-', [c('endIdx'), int(node.stepLimit)], 'Integer'), int(1)], 'Integer');
    const firstKept = node.endPoint === null ? c('startIdx') : when(ir.op('>=', [c('startIdx'), lastWindow]), c('startIdx'), lastWindow);
    const position = ir.op('+', [ir.op('-', [c('idx'), firstKept], 'Integer'), int(1)], 'Integer');
    const nextKept = ir.allOf([ir.op('<', [position, int(node.stepLimit)]), node.endPoint !== null ? ir.op('<', [c('idx'), c('endIdx')]) : null])!;
    return {
      columns: edgeColumns(c, position, nextKept),
      where: ir.allOf([
        ir.op('isNotNull', [c('startIdx')]),
        ir.op('>=', [c('idx'), firstKept]),
        node.endPoint !== null ? ir.op('isNotNull', [c('endIdx')]) : null,
        node.endPoint !== null ? ir.op('<=', [c('idx'), c('endIdx')]) : null,
        ir.op('<=', [position, int(node.stepLimit)]),
      ]),
    };
  });
  return { edges, range };
}

/**
 * The edges when paths start at each session's first item and end nowhere in particular: only a
 * session's first stepLimit items count, and an item's place is read from the session starts of
 * the stepLimit − 1 rows before it. All of it in the sort that finds the next item, where
 * numbering within sessions would sort every event once more (a third of the statement at 1M
 * events).
 */
function leadingEdges(node: PathsNode, collapsed: ir.IrSelect, byTime: (c: (name: string) => Expr) => ir.IrOrder[]): ir.IrSelect {
  const near = over(collapsed, (c) => {
    const inActor = (fn: 'lag' | 'lead', name: string, rows: number, type: ir.IrColumn['type']) => window(ir.call(fn, [c(name), int(rows)], type), [c('a')], byTime(c));
    return {
      columns: [
        ...['a', 'us', 'item', 'starts'].map((n) => [n, c(n)] as [string, Expr]),
        ['nextItem', inActor('lead', 'item', 1, 'String')],
        ['nextUs', inActor('lead', 'us', 1, 'Integer')],
        ['nextStarts', inActor('lead', 'starts', 1, 'Boolean')],
        ...Array.from({ length: node.stepLimit - 1 }, (_, k) => [`starts${k + 1}Back`, inActor('lag', 'starts', k + 1, 'Boolean')] as [string, Expr]),
      ],
    };
  });
  return over(near, (c) => {
    // 1 at the session's start, k + 1 when it started k rows back, past stepLimit when further.
    const starts = [c('starts'), ...Array.from({ length: node.stepLimit - 1 }, (_, k) => c(`starts${k + 1}Back`))];
    const position = starts.reduceRight<Expr>((further, started, k) => when(started, int(k + 1), further), int(node.stepLimit + 1));
    const nextKept = ir.allOf([ir.op('<', [position, int(node.stepLimit)]), ir.op('not', [ir.call('coalesce', [c('nextStarts'), ir.TRUE], 'Boolean')])])!;
    return {
      columns: edgeColumns(c, position, nextKept),
      where: ir.op('<=', [position, int(node.stepLimit)]),
    };
  });
}

/** An edge row: the item at `position` in its path, and the next item where it is kept too. */
function edgeColumns(c: (name: string) => Expr, position: Expr, nextKept: Expr): Array<[string, Expr]> {
  return [
    ...['a', 'us', 'item'].map((n) => [n, c(n)] as [string, Expr]),
    ['step', position],
    ['nextItem', when(nextKept, c('nextItem'))],
    ['nextUs', when(nextKept, c('nextUs'))],
  ];
}

/** `<step>_<item>`, the name of a node of the paths (the step as text). */
const nodeKey = (step: Expr, item: Expr): Expr => ir.call('concat', [ir.cast(step, 'String'), str('_'), item], 'String');

async function runPaths(node: PathsNode, ctx: InsightContext): Promise<KindResponse> {
  const { edges, range } = pathEdges(node, ctx);
  const counted = over(edges, (c) => {
    const value = ir.call('count', [], 'Integer');
    const source = nodeKey(c('step'), c('item'));
    const target = nodeKey(ir.op('+', [c('step'), int(1)], 'Integer'), c('nextItem'));
    const ms = ir.op('/', [ir.cast(ir.op('-', [c('nextUs'), c('us')], 'Integer'), 'Float'), ir.constant(1000, 'Float')], 'Float');
    return {
      columns: [
        ['source', source],
        ['target', target],
        ['value', value],
        ['average_conversion_time', ir.call('avg', [ms], 'Float')],
      ],
      where: ir.op('isNotNull', [c('nextItem')]),
      groupBy: [source, target],
      orderBy: [
        { expr: value, desc: true },
        { expr: source, desc: false },
        { expr: target, desc: false },
      ],
    };
  });
  const weights = ir.allOf([
    node.minEdgeWeight === null ? null : ir.op('>=', [ir.call('count', [], 'Integer'), int(node.minEdgeWeight)]),
    node.maxEdgeWeight === null ? null : ir.op('<=', [ir.call('count', [], 'Integer'), int(node.maxEdgeWeight)]),
  ]);
  counted.having = weights;
  counted.limit = int(node.edgeLimit);
  const rows = await ctx.run(counted, { timeSpan: { from: new Date(range.readFrom), to: new Date(range.to) } });
  return {
    results: rows.map((row) => ({ source: row.source, target: row.target, value: Number(row.value), average_conversion_time: Number(row.average_conversion_time) })),
    resolved_date_range: describeRange(range),
  };
}

/**
 * The persons behind the paths (InsightActorsQuery, as PostHog's PathsActorsQuery fields):
 * `pathStartKey` and `pathEndKey` (`"1_/home"`, `"2_/pricing"`) name one edge — its persons;
 * `pathStartKey` alone, those who passed through that node; `pathDropoffKey`, those whose path
 * ended at that node.
 */
function pathsActors(node: PathsNode, point: ActorsPoint, ctx: InsightContext): ir.IrQuery {
  const { edges } = pathEdges(node, ctx);
  const key = (value: string | null | undefined, attr: string) => {
    if (value === null || value === undefined) return null;
    if (typeof value !== 'string' || !/^\d{1,3}_/.test(value)) throw validationError(`${attr} must name a node of the paths, such as "1_/home".`, attr);
    return str(value);
  };
  const start = key(point.pathStartKey, 'source.pathStartKey');
  const end = key(point.pathEndKey, 'source.pathEndKey');
  const dropoff = key(point.pathDropoffKey, 'source.pathDropoffKey');
  if (!start && !end && !dropoff) throw validationError('Name a node of the paths with pathStartKey, pathEndKey or pathDropoffKey.', 'source.pathStartKey', 'required');
  const chosen = over(edges, (c) => {
    const here = nodeKey(c('step'), c('item'));
    const next = nodeKey(ir.op('+', [c('step'), int(1)], 'Integer'), c('nextItem'));
    return {
      columns: [['actor_id', c('a')]],
      where: ir.allOf([
        start ? ir.op('=', [here, start]) : null,
        end ? (start ? ir.op('=', [next, end]) : ir.op('=', [here, end])) : null,
        dropoff ? ir.allOf([ir.op('=', [here, dropoff]), ir.op('isNull', [c('nextItem')])]) : null,
      ]),
    };
  });
  return { ...chosen, distinct: true };
}
