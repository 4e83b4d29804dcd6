/**
 * Entry points for the events API: `select` and `where` lists of HogQL expressions and the
 * `properties` filter list, compiled to DuckDB SQL fragments over `events e` (plus the
 * person joins when `needsPerson`). All values end up in `ctx.params`.
 */
import { HogQLError } from './errors.js';
import { parseExpression, parseSelectItem } from './parser.js';
import type { CompileContext } from './params.js';
import { Printer } from './printer.js';
import type { HogQLType } from './types.js';
import { validateExpr } from './validate.js';

export { compilePropertyFilters } from './property-filters.js';

/** FROM clause every compiled fragment is written against. */
export const EVENTS_FROM_SQL = 'events e';

/** Append after EVENTS_FROM_SQL when a result says `needsPerson`. */
export const PERSON_JOIN_SQL =
  'LEFT JOIN person_distinct_ids pdi ON pdi.project_id = e.project_id AND pdi.distinct_id = e.distinct_id ' +
  'LEFT JOIN persons p ON p.project_id = e.project_id AND p.id = pdi.person_id';

/** More expressions than this in one list is not a real query. */
export const MAX_EXPRESSIONS = 100;

export interface SelectResult {
  /** Column names: the alias, or the expression's source text. */
  columns: string[];
  selectSql: string[];
  /** Non-aggregate expressions to GROUP BY, when any column aggregates; otherwise empty. */
  groupBy: string[];
  hasAggregate: boolean;
  needsPerson: boolean;
  types: HogQLType[];
}

export interface WhereResult {
  /** Conjunction of the non-aggregate conditions (`TRUE` if none). */
  sql: string;
  /** Conjunction of conditions that aggregate; belongs in HAVING (null if none). */
  having: string | null;
  needsPerson: boolean;
}

export function compileSelect(exprs: readonly unknown[], ctx: CompileContext): SelectResult {
  const printer = new Printer(ctx);
  const items = expressionList(exprs, 'select').map((source, index) =>
    withSource('select', index, () => {
      const { expr, alias } = parseSelectItem(source);
      const info = validateExpr(expr);
      const printed = printer.print(expr);
      return { column: alias ?? source.trim(), sql: printed.sql, type: printed.type, ...info };
    }),
  );
  const hasAggregate = items.some((item) => item.hasAggregate);
  return {
    columns: items.map((item) => item.column),
    selectSql: items.map((item) => item.sql),
    groupBy: hasAggregate ? items.filter((item) => !item.hasAggregate).map((item) => item.sql) : [],
    hasAggregate,
    needsPerson: items.some((item) => item.needsPerson),
    types: items.map((item) => item.type),
  };
}

export function compileWhere(exprs: readonly unknown[], ctx: CompileContext): WhereResult {
  const printer = new Printer(ctx);
  const where: string[] = [];
  const having: string[] = [];
  let needsPerson = false;
  expressionList(exprs, 'where').forEach((source, index) =>
    withSource('where', index, () => {
      const expr = parseExpression(source);
      const info = validateExpr(expr);
      needsPerson ||= info.needsPerson;
      (info.hasAggregate ? having : where).push(printer.condition(expr));
    }),
  );
  return { sql: conjunction(where) ?? 'TRUE', having: conjunction(having), needsPerson };
}

/** One parsed and validated expression, for callers that build their own clauses. */
export function compileExpression(source: string, ctx: CompileContext): { sql: string; type: HogQLType; hasAggregate: boolean; needsPerson: boolean } {
  const expr = parseExpression(source);
  const info = validateExpr(expr);
  const printed = new Printer(ctx).print(expr);
  return { sql: printed.sql, type: printed.type, ...info };
}

/**
 * GROUP BY list for a select + where pair: the select's own grouping, or — when only the
 * where list aggregates (a HAVING) — every selected column.
 */
export function groupByFor(select: SelectResult, where: WhereResult): string[] {
  if (select.hasAggregate || where.having === null) return select.groupBy;
  return select.selectSql;
}

function expressionList(exprs: readonly unknown[], attr: string): string[] {
  if (!Array.isArray(exprs)) throw new HogQLError(`${attr} must be a list of expressions`, null, attr);
  if (exprs.length > MAX_EXPRESSIONS) {
    throw new HogQLError(`${attr} has too many expressions (limit ${MAX_EXPRESSIONS})`, null, attr);
  }
  return exprs.map((item, index) => {
    if (typeof item !== 'string') throw new HogQLError(`${attr}[${index}] must be a string`, null, attr, index);
    return item;
  });
}

function withSource<T>(attr: string, index: number, run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (error instanceof HogQLError) throw error.withSource(attr, index);
    throw error;
  }
}

function conjunction(parts: string[]): string | null {
  if (parts.length === 0) return null;
  return parts.length === 1 ? parts[0] : `(${parts.join(' AND ')})`;
}
