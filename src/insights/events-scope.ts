/**
 * What every insight's statement over the events table starts from: a scope for fields and
 * person joins (alias `e`, scoped to the project), property filters (group properties from
 * the values the query service loaded) whose errors become 400s naming the request field, and
 * instants as DateTime constants.
 */
import { EventsScope, HogQLError, compileFilters, ir, parseExpression as parseHogQL } from '../hogql/index.js';
import { validationError } from '../kernel/errors.js';
import { actionCondition } from '../actions/condition.js';
import { groupReader } from '../events/group-filters.js';
import type { ResolvedAction } from './series/node.js';
import type { InsightContext } from './types.js';

export interface InsightEvents {
  scope: EventsScope;
  /** The filters' condition (null when there are none); bad filters are a 400 with `attr`. */
  filters(json: unknown, attr: string): ir.IrExpr | null;
}

export function insightEvents(ctx: InsightContext): InsightEvents {
  // Insights do not read declared property types: values compare as PostHog's filters do, as text.
  const scope = new EventsScope({ propertyType: () => null, now: ctx.now, timeZone: ctx.project.timeZone }, ctx.project.id, 'e');
  return {
    scope,
    filters(json, attr) {
      try {
        return compileFilters(json, scope, ctx.groupValues ? { group: groupReader(ctx.groupValues) } : {});
      } catch (error) {
        if (error instanceof HogQLError) throw validationError(error.message, attr);
        throw error;
      }
    },
  };
}

/**
 * A HogQL expression over the event as text (HogQL breakdowns), compared as text like a property;
 * an aggregate or a bad expression is a 400 naming `attr`.
 */
export function hogqlValueText(scope: EventsScope, text: string, attr: string): ir.IrExpr {
  try {
    const resolver = scope.resolver();
    const expr = resolver.resolve(parseHogQL(text));
    if (resolver.hasAggregate) throw new HogQLError('An aggregate function is not allowed here');
    return expr.type === 'String' ? expr : ir.cast(expr, 'String');
  } catch (error) {
    if (error instanceof HogQLError) throw validationError(error.message, error.attr && error.attr !== 'properties' ? `${attr}.${error.attr}` : attr);
    throw error;
  }
}

/** A group's property through the event's `$group_N` key, from the values the query service loaded (events/group-filters.ts). */
export function groupPropertyText(ctx: InsightContext, key: string, index: number): ir.IrExpr {
  if (!ctx.groupValues) throw validationError('Group properties are not available here.', 'breakdownFilter');
  return groupReader(ctx.groupValues)(key, index).text;
}

/** An instant (ms) as a DateTime constant (`YYYY-MM-DD HH:MM:SS.ffffff`, UTC). */
export const instantConstant = (ms: number) => ir.constant(`${new Date(ms).toISOString().slice(0, 23).replace('T', ' ')}000`, 'DateTime');

/**
 * What a series, funnel step or retention entity matches: `event = name` (null: any event), or
 * its action's condition. `action` undefined: the node names an event; null: an action the query
 * service did not resolve (only a saved insight's check gets that far, and it does not run).
 */
export function eventOrAction(scope: EventsScope, event: string | null, action: ResolvedAction | null | undefined, attr: string): ir.IrExpr | null {
  if (action === null) throw validationError('The action of this node was not resolved.', `${attr}.id`);
  if (action) return actionCondition(action.steps, scope.filterSources(), `${attr}.action`);
  return event === null ? null : ir.op('=', [ir.column('e', 'events', 'event', 'String'), ir.constant(event, 'String')]);
}
