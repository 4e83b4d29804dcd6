/**
 * The persons behind one point of a trend (ActorsQuery with an InsightActorsQuery source): the
 * current persons of the series' events in that bucket (for weekly/monthly active users, in the
 * 7 or 30 days ending with it), with the query's filters and the point's breakdown value.
 * Property math counts events, but who did them is the same set. With `unique_group` math the
 * actors are the groups of that type (non-empty `$group_N` keys).
 */
import { ir } from '../../hogql/index.js';
import { validationError } from '../../kernel/errors.js';
import type { ActorsPoint, InsightContext } from '../types.js';
import { bucketIndexOf, buckets, resolveDateRange, type ResolvedDateRange } from '../time/index.js';
import { InsightScope } from '../series/scope.js';
import { breakdownExpr, cohortCondition, OTHER_MARKER } from './breakdown.js';
import { previousRange } from './compare.js';
import type { TrendsNode } from './node.js';
import { ACTIVE_DAYS } from './statements.js';

const DAY_MS = 86_400_000;

export function trendsActors(node: TrendsNode, point: ActorsPoint, ctx: InsightContext): ir.IrQuery {
  const index = point.series ?? 0;
  const series = node.series[index];
  if (!series) throw validationError(`The query has no series ${index}.`, 'source.series');
  let range = resolveDateRange(node.dateRange, { interval: node.interval, timeZone: ctx.project.timeZone, weekStartDay: ctx.project.weekStartDay, now: ctx.now, earliest: 0 });
  if (point.compare === 'previous') range = previousRange(range, node.compare?.compareTo ?? null);
  const [from, to] = pointWindow(range, point, series.math);

  const scope = new InsightScope(ctx);
  const values = point.breakdown === null || point.breakdown === undefined ? [] : Array.isArray(point.breakdown) ? point.breakdown.map(String) : [String(point.breakdown)];
  if (values.includes(OTHER_MARKER)) throw validationError('The persons behind "other" cannot be listed; pick a breakdown value.', 'source.breakdown');
  if (values.length > 0 && values.length !== node.breakdowns.length) throw validationError(`breakdown needs ${node.breakdowns.length} value(s).`, 'source.breakdown');
  const matches = values.map((value, i) =>
    node.breakdowns[i].type === 'cohort'
      ? cohortCondition(scope, value, 'source.breakdown')
      : ir.op('=', [breakdownExpr(scope, node.breakdowns[i], node.breakdowns[i].attr), ir.constant(value, 'String')]),
  );
  const groupType = trendsActorsGroupType(node, point);
  const actor = groupType === null ? scope.personId : scope.groupKey(groupType);
  const where = ir.allOf([
    scope.timeWindow(from, to),
    groupType === null ? null : ir.op('!=', [actor, ir.constant('', 'String')]),
    scope.seriesCondition(series, `series.${index}`),
    scope.filters(node.properties, 'properties'),
    scope.testAccounts(node.filterTestAccounts),
    ...matches,
  ]);
  return ir.select({ distinct: true, columns: [{ expr: actor, name: 'actor_id' }], ...scope.from(), where });
}

/** The group type a `unique_group` series counts (its actors are those groups), else null. */
export function trendsActorsGroupType(node: TrendsNode, point: ActorsPoint): number | null {
  const series = node.series[point.series ?? 0];
  return series?.math === 'unique_group' ? series.math_group_type_index : null;
}

/** [from, to) of the point: its bucket, or the whole range without `day`; active-user maths look back. */
function pointWindow(range: ResolvedDateRange, point: ActorsPoint, math: string): [number, number] {
  if (point.day === null || point.day === undefined) return [range.readFrom, range.to];
  const list = buckets(range);
  const at = bucketIndexOf(list, point.day);
  if (at < 0) throw validationError(`day ${String(point.day).slice(0, 40)} is not a bucket of the query's range.`, 'source.day');
  const start = at === 0 ? range.readFrom : list[at].start;
  const end = at + 1 < list.length ? list[at + 1].start : range.to;
  const days = ACTIVE_DAYS[math];
  return days ? [Math.max(0, end - days * DAY_MS), end] : [start, end];
}
