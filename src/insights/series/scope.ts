/**
 * One insight statement's view of the events table (`events e`, scoped to the project by the
 * dialect): fields, property filters (event, person, group, HogQL) and the person joins they
 * need. Group properties are read through the event's group key from values the query service
 * loaded (events/group-filters.ts). HogQL errors become 400s naming the request field.
 */
import { validationError } from '../../kernel/errors.js';
import { currentPersonOf, EventsScope, HogQLError, ir, lazyJoins, parseExpression as parseHogQL, type CompileContext } from '../../hogql/index.js';
import { compilePropertyFilters, type FilterSources } from '../../hogql/property-filters.js';
import { timestampText } from '../../hogql/dates.js';
import { checkAggregateFields } from '../../hogql/compile.js';
import type { InsightContext } from '../types.js';
import type { SeriesNode } from './node.js';
import { eventOrAction, groupPropertyText, hogqlValueText } from '../events-scope.js';
import { groupReader } from '../../events/group-filters.js';

type IrExpr = ir.IrExpr;

export const TIMESTAMP = ir.column('e', 'events', 'timestamp', 'DateTime');
export const EVENT = ir.column('e', 'events', 'event', 'String');

/** A DateTime constant of an instant (ms). */
export const instantConst = (ms: number) => ir.constant(timestampText(new Date(ms)), 'DateTime');

/** HogQL errors (bad filters, expressions) as the API's 400, blaming `attr`. */
export function asRequestError<T>(attr: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (error instanceof HogQLError) throw validationError(error.message, error.attr && error.attr !== 'properties' ? `${attr}.${error.attr}` : attr);
    throw error;
  }
}

export class InsightScope {
  readonly events: EventsScope;

  constructor(private readonly ctx: InsightContext) {
    const compile: CompileContext = { propertyType: () => null, now: ctx.now, timeZone: ctx.project.timeZone };
    this.events = new EventsScope(compile, ctx.project.id);
  }

  /** A field by its HogQL path (`['person_id']`, `['properties', '$browser']`). */
  field(names: string[]): IrExpr {
    return this.events.field(names, 0);
  }

  /** The current person of the event (after merges). */
  get personId(): IrExpr {
    return this.field(['person_id']);
  }

  /**
   * The current person of rows of a derived table `alias` that kept the event's distinct id and
   * stored person id: the join to add and the person id (what `personId` is on events).
   */
  personOf(alias: string, distinctId: IrExpr, storedPersonId: IrExpr): { join: ir.IrJoin; personId: IrExpr } {
    return currentPersonOf(alias, distinctId, storedPersonId, this.ctx.project.id);
  }

  /** `$group_N` key of the event. */
  groupKey(index: number): IrExpr {
    return ir.column('e', 'events', `$group_${index}`, 'String');
  }

  /** A property's text for a breakdown or math: event or person properties. */
  propertyText(type: 'event' | 'person', key: string): IrExpr {
    return this.sources()[type](key).text;
  }

  /** Property filters (a list or an AND/OR group) as one condition; null when there are none. */
  filters(json: unknown, attr: string): IrExpr | null {
    if (json === undefined || json === null) return null;
    return asRequestError(attr, () => compilePropertyFilters(json, this.sources(), attr));
  }

  /** A HogQL expression over the event as text (breakdowns of type hogql). */
  hogqlText(text: string, attr: string): IrExpr {
    return hogqlValueText(this.events, text, attr);
  }

  /** An aggregate HogQL expression over the events (math hogql: `sum(properties.price)`). */
  hogqlAggregate(text: string, attr: string): IrExpr {
    return asRequestError(attr, () => {
      const resolver = this.events.resolver();
      const expr = resolver.resolve(parseHogQL(text));
      if (!resolver.hasAggregate) throw new HogQLError('math_hogql must aggregate, e.g. "sum(properties.price)" or "count(distinct person_id)"');
      checkAggregateFields(resolver);
      return expr;
    });
  }

  /** The project's test-account filters when the query asks for them. */
  testAccounts(enabled: boolean): IrExpr | null {
    return enabled ? this.filters(this.ctx.project.testAccountFilters, 'filterTestAccounts') : null;
  }

  /** Event name or action, the series' own filters. */
  seriesCondition(series: SeriesNode, attr: string): IrExpr | null {
    const action = series.kind === 'ActionsNode' ? series.action : undefined;
    return ir.allOf([eventOrAction(this.events, series.event, action, attr), this.filters(series.properties, `${attr}.properties`)]);
  }

  /** `from <= timestamp < to`. */
  timeWindow(from: number, to: number): IrExpr {
    return ir.op('and', [ir.op('>=', [TIMESTAMP, instantConst(from)]), ir.op('<', [TIMESTAMP, instantConst(to)])]);
  }

  /** FROM `events e` with the joins every field used so far needs. */
  from(): Pick<ir.IrSelect, 'from' | 'joins'> {
    return { from: { kind: 'table', table: 'events', alias: 'e', projectId: this.ctx.project.id }, joins: lazyJoins(this.events.binding) };
  }

  /** A group's property, read through the event's `$group_N` key (null without that group or property). */
  groupPropertyText(key: string, index: number): IrExpr {
    return groupPropertyText(this.ctx, key, index);
  }

  private sources(): FilterSources {
    const values = this.ctx.groupValues;
    return values ? { ...this.events.filterSources(), group: groupReader(values) } : this.events.filterSources();
  }
}
