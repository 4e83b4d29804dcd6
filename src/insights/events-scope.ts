/**
 * What every insight's statement over the events table starts from: a scope for fields and
 * person joins (alias `e`, scoped to the project), property filters whose errors become 400s
 * naming the request field, and instants as DateTime constants.
 */
import { EventsScope, HogQLError, compileFilters, ir } from '../hogql/index.js';
import { validationError } from '../kernel/errors.js';
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
        return compileFilters(json, scope);
      } catch (error) {
        if (error instanceof HogQLError) throw validationError(error.message, attr);
        throw error;
      }
    },
  };
}

/** An instant (ms) as a DateTime constant (`YYYY-MM-DD HH:MM:SS.ffffff`, UTC). */
export const instantConstant = (ms: number) => ir.constant(`${new Date(ms).toISOString().slice(0, 23).replace('T', ' ')}000`, 'DateTime');
