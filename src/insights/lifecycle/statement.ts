/**
 * The lifecycle statement: statuses are decided in the engine, which returns one row per
 * (interval, status) — never the (person, interval) pairs, which number persons × intervals.
 *
 *   born    (groups only) each group key's first event: a group is new in that bucket
 *   pairs   distinct (actor, bucket, bucket is the actor's created_at / born bucket)
 *   keyed   the bucket as its index in the range (-1 = the interval before the range)
 *   marked  each person's previous and next active index (lag/lead)
 *   then    new / returning / resurrecting per active index ≥ 0, and dormant at index + 1
 *           when the next active index is not index + 1
 */
import { ir } from '../../hogql/index.js';
import { timestampText } from '../../hogql/dates.js';
import { toInstant, type ResolvedDateRange } from '../time/index.js';
import { bucketExpr } from '../series/bucket.js';
import { InsightScope, instantConst, TIMESTAMP } from '../series/scope.js';

type IrExpr = ir.IrExpr;

const col = (table: string, name: string, type: ir.IrColumn['type']) => ir.column(table, null, name, type);
const int = (n: number) => ir.constant(n, 'Integer');

/** One status in one bucket (index into the range's buckets), whose persons are wanted. */
export interface LifecyclePoint {
  index: number;
  status: 'new' | 'returning' | 'resurrecting' | 'dormant';
}

/**
 * `walls`: the wall starts of the interval before the range and of each bucket, in order. With
 * `point`, the statement lists that point's actors (`actor_id`) instead of counting. With
 * `groupIndex`, the actors are the events' non-empty `$group_N` keys instead of persons.
 */
export function lifecycleStatement(scope: InsightScope, where: IrExpr | null, range: ResolvedDateRange, walls: number[], readFrom: number, point?: LifecyclePoint, groupIndex: number | null = null): ir.IrSelect {
  const { timeZone, weekStartDay, interval } = range;
  const bucket = bucketExpr(interval, timeZone, weekStartDay);
  const actorType: ir.IrColumn['type'] = groupIndex === null ? 'UUID' : 'String';
  const actor = groupIndex === null ? scope.personId : scope.groupKey(groupIndex);
  // A group has no created_at in the event store: it is born at its first event with its key
  // (any event; those after the range cannot be a group's first when it is active in the range).
  const born =
    groupIndex === null
      ? null
      : ir.select({
          columns: [
            { expr: actor, name: 'actor' },
            { expr: ir.call('min', [TIMESTAMP], 'DateTime'), name: 'born_at' },
          ],
          from: scope.from().from,
          where: ir.allOf([ir.op('!=', [actor, ir.constant('', 'String')]), ir.op('<', [TIMESTAMP, instantConst(range.to)])]),
          groupBy: [actor],
        });
  const createdAt = born ? col('b', 'born_at', 'DateTime') : scope.field(['person', 'created_at']);
  const created = bucketExpr(interval, timeZone, weekStartDay, createdAt);
  const from = scope.from();
  const pairs = ir.select({
    distinct: true,
    columns: [
      { expr: actor, name: 'person' },
      { expr: bucket, name: 'bucket' },
      { expr: ir.call('coalesce', [ir.op('=', [bucket, created]), ir.constant(false, 'Boolean')], 'Boolean'), name: 'is_new' },
    ],
    from: from.from,
    joins: [...(from.joins ?? []), ...(born ? [{ type: 'INNER' as const, item: { kind: 'cte' as const, name: 'born', alias: 'b' }, on: ir.op('=', [col('b', 'actor', 'String'), actor]) }] : [])],
    where: ir.allOf([scope.timeWindow(readFrom, range.to), where]),
  });
  // The bucket keys as SQL returns them: instants for minute/hour, wall dates for day/week/month.
  const key = (wall: number): IrExpr => (bucket.type === 'Date' ? ir.constant(timestampText(new Date(wall)).slice(0, 10), 'Date') : instantConst(toInstant(wall, timeZone)));
  const keys: ir.IrQuery = { kind: 'union', all: true, queries: walls.map((wall, i) => ir.select({ columns: [{ expr: key(wall), name: 'key' }, { expr: int(i - 1), name: 'idx' }] })) };
  const keyed = ir.select({
    columns: [
      { expr: col('p', 'person', actorType), name: 'person' },
      { expr: col('k', 'idx', 'Integer'), name: 'idx' },
      { expr: col('p', 'is_new', 'Boolean'), name: 'is_new' },
    ],
    from: { kind: 'cte', name: 'pairs', alias: 'p' },
    joins: [{ type: 'INNER', item: { kind: 'subquery', query: keys, alias: 'k' }, on: ir.op('=', [col('p', 'bucket', bucket.type), col('k', 'key', bucket.type)]) }],
  });
  const idx = col('m', 'idx', 'Integer');
  const byPerson = (fn: 'lag' | 'lead'): ir.IrWindow => ({
    kind: 'window',
    call: ir.call(fn, [col('q', 'idx', 'Integer')], 'Integer'),
    partitionBy: [col('q', 'person', actorType)],
    orderBy: [{ expr: col('q', 'idx', 'Integer'), desc: false }],
    frame: null,
    type: 'Integer',
  });
  const marked = ir.select({
    columns: [
      { expr: col('q', 'person', actorType), name: 'person' },
      { expr: col('q', 'idx', 'Integer'), name: 'idx' },
      { expr: col('q', 'is_new', 'Boolean'), name: 'is_new' },
      { expr: byPerson('lag'), name: 'prev' },
      { expr: byPerson('lead'), name: 'next' },
    ],
    from: { kind: 'cte', name: 'keyed', alias: 'q' },
  });
  const minus = (a: IrExpr, n: number) => ir.op('-', [a, int(n)], 'Integer');
  const plus = (a: IrExpr, n: number) => ir.op('+', [a, int(n)], 'Integer');
  const status: IrExpr = {
    kind: 'case',
    branches: [
      [col('m', 'is_new', 'Boolean'), ir.constant('new', 'String')],
      [ir.op('=', [col('m', 'prev', 'Integer'), minus(idx, 1)]), ir.constant('returning', 'String')],
    ],
    otherwise: ir.constant('resurrecting', 'String'),
    type: 'String',
  };
  const next = col('m', 'next', 'Integer');
  const dormantAfter = ir.op('and', [ir.op('or', [ir.op('isNull', [next]), ir.op('>', [next, plus(idx, 1)])]), ir.op('<', [plus(idx, 1), int(walls.length - 1)])]);
  const ctes = [
    ...(born ? [{ name: 'born', query: born }] : []),
    { name: 'pairs', query: pairs },
    { name: 'keyed', query: keyed },
    { name: 'marked', query: marked },
  ];
  if (point) {
    const chosen =
      point.status === 'dormant'
        ? ir.allOf([dormantAfter, ir.op('=', [plus(idx, 1), int(point.index)])])
        : ir.allOf([ir.op('=', [idx, int(point.index)]), ir.op('=', [status, ir.constant(point.status, 'String')])]);
    return ir.select({ ctes, columns: [{ expr: col('m', 'person', actorType), name: 'actor_id' }], from: { kind: 'cte', name: 'marked', alias: 'm' }, where: chosen });
  }
  const count = ir.call('count', [], 'Integer');
  const active = ir.select({
    columns: [{ expr: idx, name: 'idx' }, { expr: status, name: 'status' }, { expr: count, name: 'n' }],
    from: { kind: 'cte', name: 'marked', alias: 'm' },
    where: ir.op('>=', [idx, int(0)]),
    groupBy: [idx, status],
  });
  const dormant = ir.select({
    columns: [{ expr: plus(idx, 1), name: 'idx' }, { expr: ir.constant('dormant', 'String'), name: 'status' }, { expr: count, name: 'n' }],
    from: { kind: 'cte', name: 'marked', alias: 'm' },
    where: dormantAfter,
    groupBy: [plus(idx, 1)],
  });
  return ir.select({
    ctes,
    columns: [
      { expr: col('s', 'idx', 'Integer'), name: 'idx' },
      { expr: col('s', 'status', 'String'), name: 'status' },
      { expr: col('s', 'n', 'Integer'), name: 'n' },
    ],
    from: { kind: 'subquery', query: { kind: 'union', all: true, queries: [active, dormant] }, alias: 's' },
  });
}

