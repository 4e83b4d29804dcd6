/**
 * The heart of a funnel, as one dialect-neutral statement: every actor's best attempt at the
 * funnel, computed in the engine with window functions over the actor's events ordered by time.
 *
 * An attempt starts at an entry event (a step-0 event; any step's event for unordered funnels).
 * Ordered funnels follow the greedy chain — step k is the first step-k event at or after the
 * chain's step k−1 event — computed backwards one window pass per step: a step-j event's chain
 * is the chain of the first step-(j+1) event after it, and since chains only move later as their
 * start does, "the first one's" is the minimum over all later ones. A step is reached when its
 * event lies within the window measured from the entry. Strict funnels read the next rows
 * directly (lead); unordered ones count the distinct steps done within the window of the entry.
 *
 * The result has one row per actor (per actor and entry period for the trends view): the
 * attempt reaching the furthest step, the earliest among equals; actors whose counted attempt
 * met an exclusion are left out. Times are microseconds since the epoch, so frames and
 * differences stay exact integers.
 */
import { ir, lazyJoins } from '../../hogql/index.js';
import { eventOrAction, groupPropertyText, hogqlValueText, insightEvents, instantConstant } from '../events-scope.js';
import type { HogQLType } from '../../hogql/index.js';
import type { ResolvedDateRange } from '../time/index.js';
import type { InsightContext } from '../types.js';
import { type FunnelExclusion, type FunnelStep, type FunnelsNode, nextRequired, previousRequired } from './parse.js';
import { bucketExpr } from '../series/bucket.js';

type Expr = ir.IrExpr;

interface ColumnType {
  type: HogQLType;
  item?: HogQLType;
}

/** A relation under construction: a query and the types of its output columns. */
class Relation {
  private static count = 0;

  constructor(
    readonly query: ir.IrQuery,
    readonly columns: Map<string, ColumnType>,
  ) {}

  /**
   * A SELECT over this relation: `keep` passes columns through, `add` computes new ones from a
   * reader of this relation's columns.
   */
  next(keep: string[], add: (c: (name: string) => Expr) => Array<[string, Expr]>, where?: (c: (name: string) => Expr) => Expr | null): Relation {
    const alias = `f${Relation.count++ % 1000}`;
    const c = (name: string): Expr => {
      const spec = this.columns.get(name);
      if (!spec) throw new Error(`funnel relation has no column ${name}`);
      return { ...ir.column(alias, null, name, spec.type), ...(spec.item && { item: spec.item }) };
    };
    const columns: ir.IrSelectColumn[] = keep.map((name) => ({ name, expr: c(name) }));
    for (const [name, expr] of add(c)) columns.push({ name, expr });
    const query = ir.select({ columns, from: { kind: 'subquery', query: this.query, alias }, where: where?.(c) ?? null });
    return new Relation(query, new Map(columns.map((col) => [col.name, typeOf(col.expr)])));
  }
}

const typeOf = (expr: Expr): ColumnType => ({ type: expr.type, ...('item' in expr && expr.item ? { item: expr.item } : {}) });

// --- small IR helpers ------------------------------------------------------------------------

const int = (n: number) => ir.constant(n, 'Integer');
const when = (condition: Expr, then: Expr, otherwise: Expr = ir.NULL): Expr => ({ kind: 'case', branches: [[condition, then]], otherwise, type: then.type });
const isSet = (x: Expr) => ir.op('isNotNull', [x]);
const minus = (a: Expr, b: Expr) => ir.op('-', [a, b], 'Integer');
const and = (...parts: Expr[]): Expr => ir.allOf(parts) ?? ir.TRUE;
const or = (...parts: Expr[]): Expr => (parts.length === 0 ? ir.constant(false, 'Boolean') : ir.anyOf(parts));
const not = (x: Expr) => ir.op('not', [x]);

function window(call: ir.IrCall, partitionBy: Expr[], orderBy: ir.IrOrder[], frame: ir.IrFrame | null = null): Expr {
  return { kind: 'window', call, partitionBy, orderBy, frame, type: call.type };
}

/** min(value) over the actor's rows from `startFollowing` (0: this moment, 1: strictly later) on. */
const minFrom = (actor: Expr, us: Expr, value: Expr, startFollowing: 0 | 1) =>
  window(ir.call('min', [value], 'Integer'), [actor], [{ expr: us, desc: false }], { unit: 'range', start: startFollowing, end: null });

// --- the statement ---------------------------------------------------------------------------

export interface AttemptsOptions {
  /** Partition the best attempt by the entry's interval bucket too (column `period`). */
  perPeriod: boolean;
}

/**
 * Columns: `a` actor, `bd` breakdown (list of texts; only with a breakdown), `ts0` entry time,
 * `t0`…`t{n−1}` step times in µs (NULL when not reached or not done), `steps` reached (1 + the
 * index of the furthest required step reached), `d{m}` whether optional step m was done,
 * `period` (perPeriod).
 */
export function bestAttempts(node: FunnelsNode, range: ResolvedDateRange, ctx: InsightContext, options: AttemptsOptions): ir.IrQuery {
  const n = node.steps.length;
  // The entry's timestamp is carried through the window passes only when a period needs it.
  const timeColumns = options.perPeriod ? ['ts'] : [];
  const base = eventRows(node, range, ctx, options.perPeriod);
  const attributed = node.breakdown ? attributeBreakdown(node, base) : base;
  const attempts =
    node.order === 'ordered'
      ? chainable(node) && ctx.engine.prefersAsOfJoins
        ? chainedAttempts(node, attributed, timeColumns)
        : orderedAttempts(node, attributed, timeColumns)
      : node.order === 'strict'
        ? strictAttempts(node, attributed, timeColumns)
        : unorderedAttempts(node, attributed, timeColumns);

  const times = Array.from({ length: n }, (_, k) => `t${k}`);
  const done = node.steps.flatMap((step, m) => (step.optional ? [`d${m}`] : []));
  const carried = ['a', ...(node.breakdown ? ['bd'] : []), ...(options.perPeriod ? ['ts0'] : []), ...times, 'steps', ...done];
  // The furthest step first (with optional steps, a done optional step counts), then the earliest entry.
  const furthest = done.length > 0 ? 'far' : 'steps';
  const withPeriod = options.perPeriod ? attempts.next([...carried, 'excluded', ...(done.length > 0 ? ['far'] : [])], (c) => [['period', bucketExpr(range.interval, range.timeZone, range.weekStartDay, c('ts0'))]]) : attempts;
  const partition = options.perPeriod ? ['a', 'period'] : ['a'];
  const ranked = withPeriod.next([...carried, 'excluded', ...(options.perPeriod ? ['period'] : [])], (c) => [
    ['rn', window(ir.call('row_number', [], 'Integer'), partition.map(c), [{ expr: c(furthest), desc: true }, { expr: c('t0'), desc: false }])],
  ]);
  return ranked.next([...carried, ...(options.perPeriod ? ['period'] : [])], () => [], (c) => and(ir.op('=', [c('rn'), int(1)]), not(c('excluded')))).query;
}

/**
 * The actor's events in range: `a`, `ts`, `us`, a flag per step (`s{i}`) and exclusion
 * (`x{i}`), the breakdown value of the event (`b`), and for strict funnels and first touch a
 * tie-breaker (`uid`).
 * Ordered and unordered funnels read only events some step or exclusion matches.
 */
function eventRows(node: FunnelsNode, range: ResolvedDateRange, ctx: InsightContext, withTime: boolean): Relation {
  const { scope, filters } = insightEvents(ctx);
  const matches = (step: FunnelStep | FunnelExclusion, attr: string) =>
    and(...[eventOrAction(scope, step.event, step.action, attr), filters(step.properties, `${attr}.properties`)].filter((x): x is Expr => x !== null));

  const timestamp = ir.column('e', 'events', 'timestamp', 'DateTime');
  const groupColumn = node.groupTypeIndex === null ? null : ir.column('e', 'events', `$group_${node.groupTypeIndex}`, 'String');
  // Actors other than persons (a group key, an expression's value) must be set and non-empty.
  const keyColumn = groupColumn ?? (node.aggregateByHogQL === null ? null : hogqlValueText(scope, node.aggregateByHogQL, 'funnelsFilter.funnelAggregateByHogQL'));
  const actor = keyColumn ?? scope.field(['person_id'], 0);
  const steps = node.steps.map((step, i) => matches(step, `series.${i}`));
  const exclusions = node.exclusions.map((x, i) => matches(x, `funnelsFilter.exclusions.${i}`));

  const columns: ir.IrSelectColumn[] = [
    { name: 'a', expr: actor },
    ...(withTime ? [{ name: 'ts', expr: timestamp }] : []),
    { name: 'us', expr: ir.call('toUnixTimestamp64Micro', [timestamp], 'Integer') },
    ...steps.map((expr, i) => ({ name: `s${i}`, expr })),
    ...exclusions.map((expr, i) => ({ name: `x${i}`, expr })),
  ];
  if (node.breakdown) {
    const sources = scope.filterSources();
    const items = node.breakdown.parts.map((part) => {
      const text =
        part.type === 'group'
          ? groupPropertyText(ctx, part.property, part.groupTypeIndex!)
          : part.type === 'hogql'
            ? hogqlValueText(scope, part.property, part.attr)
            : sources[part.type](part.property).text;
      return ir.call('coalesce', [text, ir.constant('', 'String')], 'String');
    });
    columns.push({ name: 'b', expr: { kind: 'array', items, type: 'Array', item: 'String' } });
  }
  // Orders events of one moment the same way every time, where the order matters.
  if (node.order === 'strict' || node.breakdown) columns.push({ name: 'uid', expr: ir.column('e', 'events', 'uuid', 'UUID') });

  const where = ir.allOf([
    ir.op('>=', [timestamp, instantConstant(range.readFrom)]),
    ir.op('<', [timestamp, instantConstant(range.to)]),
    filters(node.properties, 'properties'),
    node.filterTestAccounts ? filters(ctx.project.testAccountFilters, 'filterTestAccounts') : null,
    keyColumn ? ir.op('!=', [keyColumn, ir.constant('', 'String')]) : null,
    keyColumn ? isSet(keyColumn) : null,
    node.order === 'strict' ? null : or(...steps, ...exclusions),
  ]);
  // The joins are known only now: filters and breakdowns on person properties record them.
  const query = ir.select({ columns, from: { kind: 'table', table: 'events', alias: 'e', projectId: ctx.project.id }, joins: lazyJoins(scope.binding), where });
  return new Relation(query, new Map(columns.map((c) => [c.name, typeOf(c.expr)])));
}

/**
 * First touch: every row of an actor carries the breakdown value of the actor's first entry
 * event (a step-0 event; for unordered funnels any step's), the event id breaking ties.
 */
function attributeBreakdown(node: FunnelsNode, rows: Relation): Relation {
  const keep = [...rows.columns.keys()].filter((name) => name !== 'b');
  return rows.next(keep, (c) => {
    const entry = node.order === 'unordered' ? or(...node.steps.map((_, m) => c(`s${m}`))) : c('s0');
    const key = when(entry, { kind: 'tuple', items: [c('us'), c('uid')], type: 'Tuple' });
    return [['bd', window(ir.call('argMin', [c('b'), key], 'Array', { item: 'String' }), [c('a')], [])]];
  });
}

const stepFlags = (rows: Relation) => [...rows.columns.keys()].filter((name) => /^[sx]\d+$/.test(name));

/**
 * Two steps one event could both match need strictly later times; distinct event names may
 * share a moment. An action may match any event name.
 */
function sameEventPossible(node: FunnelsNode, j: number, k: number): boolean {
  const [a, b] = [node.steps[j], node.steps[k]];
  if (a.action !== undefined || b.action !== undefined) return true;
  return a.event === null || b.event === null || a.event === b.event;
}

/** Ordered funnels whose chain is the plain required steps: no optional step, no exclusion. */
const chainable = (node: FunnelsNode) => node.exclusions.length === 0 && node.steps.every((step) => !step.optional);

/**
 * The greedy chain of a chainable ordered funnel by as-of joins, one per step: from each entry,
 * step k is the first step-k event at or after (strictly after, where one event could match both)
 * the chain's step k−1 event. Same attempts as orderedAttempts, but the engine sorts each step's
 * events once, where the window passes sort every row once per step: faster on DuckDB, slower on
 * ClickHouse, whose as-of join costs more than a window pass (the dialect's `prefersAsOfJoins`).
 */
function chainedAttempts(node: FunnelsNode, rows: Relation, timeColumns: string[]): Relation {
  const n = node.steps.length;
  const window_ = int(node.windowSeconds * 1_000_000);
  const passed = ['a', ...timeColumns, ...(node.breakdown ? ['bd'] : [])];
  const times = (upTo: number) => Array.from({ length: upTo }, (_, k) => `c${k}`);
  const types = new Map<string, ColumnType>([...passed.map((name): [string, ColumnType] => [name, rows.columns.get(name)!]), ...times(n).map((name): [string, ColumnType] => [name, { type: 'Integer' }])]);
  // Columns of the event rows (r, s) and of the chain (h) and a step's events (x).
  const of = (alias: string) => (name: string) => ir.column(alias, null, name, (types.get(name) ?? rows.columns.get(name)!).type);
  const [r, s, h, x] = ['r', 's', 'h', 'x'].map(of);
  const stepEvents = (k: number) => ({
    name: `funnel_step${k}`,
    query: ir.select({ columns: [{ name: 'a', expr: r('a') }, { name: 'us', expr: r('us') }], from: { kind: 'cte', name: 'funnel_rows', alias: 'r' }, where: r(`s${k}`) }),
  });
  // The entries with their step-0 time c0; each level joins the next step's time to the chain so far.
  let chain = ir.select({
    columns: [...passed.map((name) => ({ name, expr: s(name) })), { name: 'c0', expr: s('us') }],
    from: { kind: 'cte', name: 'funnel_rows', alias: 's' },
    where: s('s0'),
  });
  for (let k = 1; k < n; k++) {
    const after = sameEventPossible(node, k - 1, k) ? '<' : '<=';
    chain = ir.select({
      columns: [...[...passed, ...times(k)].map((name) => ({ name, expr: h(name) })), { name: `c${k}`, expr: x('us') }],
      from: { kind: 'subquery', query: chain, alias: 'h' },
      joins: [{ type: 'ASOF LEFT', item: { kind: 'cte', name: `funnel_step${k}`, alias: 'x' }, on: and(ir.op('=', [h('a'), x('a')]), ir.op(after, [h(`c${k - 1}`), x('us')])) }],
    });
  }
  const ctes = [{ name: 'funnel_rows', query: rows.query }, ...Array.from({ length: n - 1 }, (_, k) => stepEvents(k + 1))];
  return new Relation(ir.select({ ...chain, ctes }), types).next([], (c) => {
    const reachedList: Expr[] = [ir.TRUE];
    for (let k = 1; k < n; k++) reachedList.push(and(reachedList[k - 1], isSet(c(`c${k}`)), ir.op('<=', [minus(c(`c${k}`), c('c0')), window_])));
    const time = (k: number): Expr => (k === 0 ? c('c0') : when(reachedList[k], c(`c${k}`)));
    return attemptColumns(node, c, time, (k) => reachedList[k], ir.constant(false, 'Boolean'), timeColumns.length > 0);
  });
}

function orderedAttempts(node: FunnelsNode, rows: Relation, timeColumns: string[]): Relation {
  const n = node.steps.length;
  const window_ = int(node.windowSeconds * 1_000_000);
  const common = ['a', ...timeColumns, 'us', ...stepFlags(rows), ...(node.breakdown ? ['bd'] : [])];
  const optional = (m: number) => node.steps[m].optional;
  // Level j (a required step, from the last one with steps after it back to the entry): for each
  // step-j row, `c{m}` = the chain's time of required step m > j, `o{m}` = the first event of
  // optional step m after the chain's step previousRequired(m) event, `e{i}` = the first
  // exclusion-i event after the chain's step fromStep event (for fromStep >= j). Optional steps
  // are not links of the chain: a required step follows the required one before it.
  let level = rows;
  for (let j = n - 2; j >= 0; j--) {
    if (optional(j)) continue;
    const next = nextRequired(node.steps, j);
    const start = next !== null && sameEventPossible(node, j, next) ? 1 : 0;
    const fromNext = (c: (name: string) => Expr, value: Expr) => minFrom(c('a'), c('us'), when(c(`s${next}`), value), start);
    level = level.next(common, (c) => {
      const added: Array<[string, Expr]> = [];
      for (let m = j + 1; m < n; m++) {
        if (optional(m)) {
          const before = previousRequired(node.steps, m);
          if (before === j) added.push([`o${m}`, minFrom(c('a'), c('us'), when(c(`s${m}`), c('us')), sameEventPossible(node, j, m) ? 1 : 0)]);
          else if (next !== null) added.push([`o${m}`, fromNext(c, c(`o${m}`))]);
        } else if (next !== null) {
          added.push([`c${m}`, fromNext(c, m === next ? c('us') : c(`c${m}`))]);
        }
      }
      node.exclusions.forEach((x, i) => {
        if (x.fromStep === j) added.push([`e${i}`, minFrom(c('a'), c('us'), when(c(`x${i}`), c('us')), 1)]);
        else if (x.fromStep > j && next !== null) added.push([`e${i}`, fromNext(c, c(`e${i}`))]);
      });
      return added;
    });
  }
  return level.next([], (c) => {
    const inWindow = (t: Expr) => ir.op('<=', [minus(t, c('us')), window_]);
    const requiredReached = (k: number): Expr => (k === 0 ? ir.TRUE : and(isSet(c(`c${k}`)), inWindow(c(`c${k}`))));
    // An optional step is done when its event comes within the window, and before the next
    // required step's event when that step was reached.
    const done = (m: number): Expr => {
      const next = nextRequired(node.steps, m);
      const o = c(`o${m}`);
      const beforeNext = next === null ? ir.TRUE : or(not(requiredReached(next)), ir.op('<=', [o, c(`c${next}`)]));
      return and(requiredReached(previousRequired(node.steps, m)), isSet(o), inWindow(o), beforeNext);
    };
    // For the step counts an optional step counts as reached when the next required step is.
    const reached = (k: number): Expr => (!optional(k) ? requiredReached(k) : nextRequired(node.steps, k) === null ? ir.constant(false, 'Boolean') : requiredReached(nextRequired(node.steps, k)!));
    const time = (k: number): Expr => (k === 0 ? c('us') : optional(k) ? when(done(k), c(`o${k}`)) : when(requiredReached(k), c(`c${k}`)));
    const excluded = node.exclusions.map((x, i) => exclusionMet(x, c(`e${i}`), c('us'), window_, reached, (k) => c(`c${k}`)));
    const columns = attemptColumns(node, c, time, reached, or(...excluded), timeColumns.length > 0);
    const optionals = node.steps.flatMap((step, m) => (step.optional ? [m] : []));
    if (optionals.length === 0) return columns;
    // Optional steps done, and the furthest step the attempt got to (done optional steps count).
    const far = Array.from({ length: n }, (_, k) => k).reduce<Expr>((deeper, k) => when(optional(k) ? done(k) : requiredReached(k), int(k), deeper), int(0));
    return [...columns, ...optionals.map((m) => [`d${m}`, done(m)] as [string, Expr]), ['far', far]];
  }, (c) => c('s0'));
}

function strictAttempts(node: FunnelsNode, rows: Relation, timeColumns: string[]): Relation {
  const n = node.steps.length;
  const window_ = int(node.windowSeconds * 1_000_000);
  const common = ['a', ...timeColumns, 'us', 'uid', ...stepFlags(rows), ...(node.breakdown ? ['bd'] : [])];
  const withNext = node.exclusions.length === 0
    ? rows
    : rows.next(common, (c) => node.exclusions.map((_, i) => [`e${i}`, minFrom(c('a'), c('us'), when(c(`x${i}`), c('us')), 1)] as [string, Expr]));
  const order = (c: (name: string) => Expr): ir.IrOrder[] => [{ expr: c('us'), desc: false }, { expr: c('uid'), desc: false }];
  const lead = (c: (name: string) => Expr, x: Expr, k: number) => window(ir.call('lead', [x, int(k)], x.type), [c('a')], order(c));
  const ahead = withNext.next(['a', ...timeColumns, 'us', 's0', ...(node.breakdown ? ['bd'] : [])], (c) => {
    const added: Array<[string, Expr]> = [];
    for (let k = 1; k < n; k++) added.push([`ls${k}`, lead(c, c(`s${k}`), k)], [`lu${k}`, lead(c, c('us'), k)]);
    node.exclusions.forEach((x, i) => added.push([`e${i}`, x.fromStep === 0 ? c(`e${i}`) : lead(c, c(`e${i}`), x.fromStep)]));
    return added;
  });
  return ahead.next([], (c) => {
    const reachedList: Expr[] = [ir.TRUE];
    for (let k = 1; k < n; k++) reachedList.push(and(reachedList[k - 1], ir.call('coalesce', [c(`ls${k}`), ir.constant(false, 'Boolean')], 'Boolean'), ir.op('<=', [minus(c(`lu${k}`), c('us')), window_])));
    const reached = (k: number) => reachedList[k];
    const time = (k: number): Expr => (k === 0 ? c('us') : when(reached(k), c(`lu${k}`)));
    const excluded = node.exclusions.map((x, i) => exclusionMet(x, c(`e${i}`), c('us'), window_, reached, (k) => c(`lu${k}`)));
    return attemptColumns(node, c, time, reached, or(...excluded), timeColumns.length > 0);
  }, (c) => c('s0'));
}

/**
 * Did exclusion `x` spoil the attempt? `next` is the first exclusion event after the attempt's
 * fromStep event; it counts before the toStep event, or within the window when toStep was not reached.
 */
function exclusionMet(x: FunnelExclusion, next: Expr, entry: Expr, window_: Expr, reached: (k: number) => Expr, stepTime: (k: number) => Expr): Expr {
  const beforeEnd = or(and(reached(x.toStep), ir.op('<', [next, stepTime(x.toStep)])), and(not(reached(x.toStep)), ir.op('<=', [minus(next, entry), window_])));
  return and(reached(x.fromStep), isSet(next), beforeEnd);
}

function unorderedAttempts(node: FunnelsNode, rows: Relation, timeColumns: string[]): Relation {
  const n = node.steps.length;
  const window_ = int(node.windowSeconds * 1_000_000);
  const steps = Array.from({ length: n }, (_, m) => m);
  const exclusionFlags = node.exclusions.map((_, i) => `x${i}`);
  const firsts = rows.next(['a', ...timeColumns, 'us', ...(node.breakdown ? ['bd'] : [])], (c) => [
    ['entry', or(...steps.map((m) => c(`s${m}`)))],
    // Each step's first event from this moment on.
    ...steps.map((m) => [`n${m}`, minFrom(c('a'), c('us'), when(c(`s${m}`), c('us')), 0)] as [string, Expr]),
    ['e0', minFrom(c('a'), c('us'), when(or(...exclusionFlags.map(c)), c('us')), 1)],
  ]);
  const sorted = firsts.next(['a', ...timeColumns, 'us', 'e0', ...(node.breakdown ? ['bd'] : [])], (c) => {
    const within = steps.map((m) => when(and(isSet(c(`n${m}`)), ir.op('<=', [minus(c(`n${m}`), c('us')), window_])), c(`n${m}`)));
    return [
      ['sorted', ir.call('arraySort', [{ kind: 'array', items: within, type: 'Array', item: 'Integer' }], 'Array', { item: 'Integer' })],
      ['done', steps.map((m) => when(isSet(within[m]), int(1), int(0))).reduce((x, y) => ir.op('+', [x, y], 'Integer'))],
    ];
  }, (c) => c('entry'));
  return sorted.next([], (c) => {
    const reached = (k: number): Expr => ir.op('>', [c('done'), int(k)]);
    const time = (k: number): Expr => ir.call('arrayElement', [c('sorted'), int(k + 1)], 'Integer');
    const e = c('e0');
    const excluded =
      node.exclusions.length === 0
        ? ir.constant(false, 'Boolean')
        : and(isSet(e), or(and(reached(n - 1), ir.op('<', [e, time(n - 1)])), and(not(reached(n - 1)), ir.op('<=', [minus(e, c('us')), window_]))));
    return attemptColumns(node, c, time, reached, excluded, timeColumns.length > 0);
  });
}

function attemptColumns(node: FunnelsNode, c: (name: string) => Expr, time: (k: number) => Expr, reached: (k: number) => Expr, excluded: Expr, withEntryTime: boolean): Array<[string, Expr]> {
  const n = node.steps.length;
  const columns: Array<[string, Expr]> = [['a', c('a')]];
  if (node.breakdown) columns.push(['bd', c('bd')]);
  if (withEntryTime) columns.push(['ts0', c('ts')]);
  for (let k = 0; k < n; k++) columns.push([`t${k}`, time(k)]);
  const count = Array.from({ length: n - 1 }, (_, i) => when(reached(i + 1), int(1), int(0))).reduce((x, y) => ir.op('+', [x, y], 'Integer'), int(1) as Expr);
  columns.push(['steps', count], ['excluded', excluded]);
  return columns;
}
