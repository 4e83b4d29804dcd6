/**
 * An events request compiled into SQL fragments over `events e`: the filter conjunction (plain
 * parameters, `properties`, `where`) and the optional `select` list. Filters are compiled first
 * so that their placeholders are $1..$k: queries that only filter (the count) bind just those.
 */
import {
  compilePropertyFilters,
  compileSelect,
  compileWhere,
  EVENTS_FROM_SQL,
  groupByFor,
  HogQLError,
  PERSON_JOIN_SQL,
  type CompileContext,
  type ParamValue,
  type SelectResult,
} from '../hogql/index.js';
import { toSqlTimestamp } from '../hogql/dates.js';
import type { EventsQuery } from './types.js';

export interface QueryPlan {
  projectId: number;
  /** Values of the filter placeholders ($1..$k). */
  filterParams: ParamValue[];
  /** Values of every placeholder: the filters', then the select list's. */
  params: ParamValue[];
  /** The project's placeholder, for sub-queries that need it again. */
  projectParam: string;
  /** Conjunction of every filter, the project first. */
  where: string;
  filterNeedsPerson: boolean;
  /** Only event columns decide the filters: rows already counted keep their answer. */
  stable: boolean;
  select: (SelectResult & { groupBy: string[]; having: string | null; grouped: boolean }) | null;
  /** The parameter carrying HogQL, blamed for errors DuckDB raises while running it. */
  hogqlAttr: string | null;
}

export const fromSql = (needsPerson: boolean) => (needsPerson ? `${EVENTS_FROM_SQL} ${PERSON_JOIN_SQL}` : EVENTS_FROM_SQL);

/** A `TIMESTAMP` bound from a JS date (milliseconds). */
export const timestampParam = (ctx: CompileContext, date: Date) => `CAST(${ctx.params.add(toSqlTimestamp(date))} AS TIMESTAMP)`;

export function buildPlan(query: EventsQuery, ctx: CompileContext): QueryPlan {
  const add = (value: ParamValue) => ctx.params.add(value);
  const projectParam = add(query.projectId);
  const conditions = [`e.project_id = CAST(${projectParam} AS INTEGER)`];
  if (query.after) conditions.push(`e."timestamp" > ${timestampParam(ctx, query.after)}`);
  if (query.before) conditions.push(`e."timestamp" < ${timestampParam(ctx, query.before)}`);
  if (query.event !== null) conditions.push(`e.event = ${add(query.event)}`);
  if (query.distinctId !== null) conditions.push(`e.distinct_id = ${add(query.distinctId)}`);
  if (query.personId !== null) {
    // Every distinct id the person has now, after merges.
    conditions.push(
      `e.distinct_id IN (SELECT d.distinct_id FROM person_distinct_ids d WHERE d.project_id = CAST(${projectParam} AS INTEGER) AND d.person_id = CAST(${add(query.personId)} AS UUID))`,
    );
  }
  let filterNeedsPerson = false;
  if (query.properties !== null) {
    const filters = compilePropertyFilters(query.properties, ctx);
    conditions.push(filters.sql);
    filterNeedsPerson ||= filters.needsPerson;
  }
  const where = query.where ? compileWhere(query.where, ctx) : null;
  if (where) {
    conditions.push(where.sql);
    filterNeedsPerson ||= where.needsPerson;
  }
  const filterParams = ctx.params.values;

  let select: QueryPlan['select'] = null;
  if (query.select) {
    const compiled = compileSelect(query.select, ctx);
    const having = where?.having ?? null;
    const groupBy = where ? groupByFor(compiled, where) : compiled.groupBy;
    select = { ...compiled, groupBy, having, grouped: compiled.hasAggregate || having !== null };
  } else if (where?.having) {
    throw new HogQLError('where uses an aggregate function; that needs a select list to group by', null, 'where');
  }
  return {
    projectId: query.projectId,
    filterParams,
    params: ctx.params.values,
    projectParam,
    where: conditions.filter((sql) => sql !== 'TRUE').join(' AND '),
    filterNeedsPerson,
    stable: !filterNeedsPerson && query.personId === null,
    select,
    hogqlAttr: query.select ? 'select' : query.where ? 'where' : query.properties !== null ? 'properties' : null,
  };
}
