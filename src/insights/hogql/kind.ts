/**
 * HogQLQuery (query-api.md §1.5): a whole SELECT in HogQL, compiled by hogql/statement.ts
 * (which scopes every table to the project) and printed by the event store's dialect. Without
 * a LIMIT the statement fetches 101 rows and answers 100 with `hasMore`; an explicit LIMIT is
 * capped at 50,000, as PostHog does.
 */
import { HogQLError, type ir, parseSelect, type Placeholders, StatementCompiler, type SelectStatement } from '../../hogql/index.js';
import { validationError } from '../../kernel/errors.js';
import { clickHouseType, dateBound, rowArrays } from '../tabular/columns.js';
import type { InsightContext, KindResponse, QueryKind } from '../types.js';
import { statementTimeSpan } from './time-span.js';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 50_000;

export interface HogQLNode {
  query: string;
  statement: SelectStatement;
  /** `{filters}`: null when the node has none (the placeholder is then TRUE). */
  filters: { properties: unknown[]; dateFrom: string | null; dateTo: string | null; filterTestAccounts: boolean } | null;
  values: Record<string, unknown>;
}

export const hogqlQuery: QueryKind<HogQLNode> = {
  kind: 'HogQLQuery',

  parse(node) {
    const text = node.query;
    if (typeof text !== 'string' || text.trim() === '') throw validationError('query.query must be a HogQL SELECT statement.', 'query', 'required');
    // A trailing semicolon (as editors add) ends the statement; nothing may follow it.
    const query = text.replace(/[\s;]+$/, '');
    return { query, statement: hogqlErrors(() => parseSelect(query)), filters: parseFilters(node.filters), values: parseValues(node.values, node.variables) };
  },

  async run(node, ctx) {
    const f = node.filters;
    const placeholders: Placeholders = {
      values: node.values,
      filters: f && {
        properties: [...f.properties, ...(f.filterTestAccounts ? ctx.project.testAccountFilters : [])],
        after: f.dateFrom && f.dateFrom !== 'all' ? dateBound(f.dateFrom, 'filters.dateRange.date_from', ctx.now) : null,
        before: f.dateTo ? dateBound(f.dateTo, 'filters.dateRange.date_to', ctx.now) : null,
      },
    };
    const context = { propertyType: () => null, now: ctx.now, timeZone: ctx.project.timeZone };
    const compiled = hogqlErrors(() => new StatementCompiler(context, ctx.project.id, placeholders).compile(node.statement));
    return runTabular(compiled.query, compiled.names, ctx, node.query);
  },

  freshForSeconds: () => 60,
};

/**
 * Runs a statement under PostHog's row limits. `query` is the user's text, echoed (with the limit
 * the statement ran under) as `hogql`.
 */
async function runTabular(query: ir.IrQuery, names: string[], ctx: InsightContext, text: string): Promise<KindResponse> {
  const { statement, paginated, limit, offset } = limited(query);
  const columns = statement.kind === 'select' ? statement.columns : [];
  const rows = await ctx.run(statement, { timeSpan: statementTimeSpan(statement, ctx.now) });
  const hasMore = paginated && rows.length > DEFAULT_LIMIT;
  const results = rowArrays(hasMore ? rows.slice(0, DEFAULT_LIMIT) : rows, columns, ctx.project.timeZone);
  return {
    results,
    columns: names,
    types: columns.map((c, i) => [names[i], clickHouseType(c.expr)]),
    hogql: paginated ? `${text} LIMIT ${DEFAULT_LIMIT + 1}` : text,
    query: text,
    hasMore: paginated ? hasMore : null,
    limit: paginated ? limit : null,
    offset: paginated ? offset : null,
    explain: null,
    metadata: null,
  };
}

/**
 * The statement with its top-level LIMIT: none written → 101 rows fetched (100 answered, the
 * 101st says there are more); written → at most 50,000. A UNION is wrapped in a SELECT to take it.
 */
function limited(query: ir.IrQuery): { statement: ir.IrSelect; paginated: boolean; limit: number; offset: number } {
  const top: ir.IrSelect =
    query.kind === 'select'
      ? query
      : {
          kind: 'select',
          ctes: [],
          distinct: false,
          columns: outer(query),
          from: { kind: 'subquery', query, alias: 'u' },
          joins: [],
          where: null,
          groupBy: [],
          having: null,
          orderBy: [],
          limit: null,
          offset: null,
        };
  const offset = top.offset?.kind === 'const' ? Number(top.offset.value) : 0;
  if (top.limit === null) {
    return { statement: { ...top, limit: { kind: 'const', value: DEFAULT_LIMIT + 1, type: 'Integer' } }, paginated: true, limit: DEFAULT_LIMIT, offset };
  }
  const written = top.limit.kind === 'const' ? Number(top.limit.value) : MAX_LIMIT;
  const limit = Math.min(written, MAX_LIMIT);
  return { statement: { ...top, limit: { kind: 'const', value: limit, type: 'Integer' } }, paginated: false, limit, offset };
}

function outer(query: ir.IrUnion): ir.IrSelectColumn[] {
  const first = query.queries[0];
  const columns = first.kind === 'select' ? first.columns : outer(first);
  return columns.map((c) => ({ name: c.name, expr: { kind: 'column', table: 'u', base: null, name: c.name, type: c.expr.type, ...('item' in c.expr && c.expr.item ? { item: c.expr.item } : {}) } }));
}

/** `filters: {properties?, dateRange?: {date_from, date_to}, filterTestAccounts?}`. */
function parseFilters(value: unknown): HogQLNode['filters'] {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) throw validationError('filters must be an object.', 'filters', 'invalid');
  const { properties, dateRange, filterTestAccounts } = value as Record<string, unknown>;
  if (properties !== undefined && properties !== null && !Array.isArray(properties)) throw validationError('filters.properties must be a list of property filters.', 'filters.properties', 'not_a_list');
  const range = (dateRange ?? {}) as Record<string, unknown>;
  const text = (v: unknown, attr: string) => {
    if (v === undefined || v === null) return null;
    if (typeof v !== 'string') throw validationError(`${attr} must be a date.`, attr, 'invalid_date');
    return v;
  };
  return {
    properties: (properties as unknown[] | undefined) ?? [],
    dateFrom: text(range.date_from, 'filters.dateRange.date_from'),
    dateTo: text(range.date_to, 'filters.dateRange.date_to'),
    filterTestAccounts: filterTestAccounts === true,
  };
}

/** `values: {name: value}` and `variables: {id: {code_name, value}}` as one map of placeholders. */
function parseValues(values: unknown, variables: unknown): Record<string, unknown> {
  // No prototype: a `__proto__` key is just a name here.
  const out: Record<string, unknown> = Object.create(null);
  if (values !== undefined && values !== null) {
    if (typeof values !== 'object' || Array.isArray(values)) throw validationError('values must be an object.', 'values', 'invalid');
    for (const [name, value] of Object.entries(values)) out[name] = value;
  }
  if (variables !== undefined && variables !== null) {
    if (typeof variables !== 'object' || Array.isArray(variables)) throw validationError('variables must be an object.', 'variables', 'invalid');
    for (const variable of Object.values(variables as Record<string, unknown>)) {
      const { code_name, value } = (variable ?? {}) as Record<string, unknown>;
      if (typeof code_name === 'string') out[`variables.${code_name}`] = value;
    }
  }
  delete out.filters;
  return out;
}

/** HogQL's own errors are the request's fault: a 400 naming `query`. */
export function hogqlErrors<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof HogQLError) throw validationError(error.message, 'query');
    throw error;
  }
}
