/**
 * HogQLQuery (query-api.md §1.5): a whole SELECT in HogQL, compiled by hogql/statement.ts
 * (which scopes every table to the project) and printed by the event store's dialect. Without
 * a LIMIT the statement fetches 101 rows and answers 100 with `hasMore`; an explicit LIMIT is
 * capped at 50,000, as PostHog does.
 */
import { HogQLError, type ir, parseSelect, StatementCompiler, type SelectStatement } from '../../hogql/index.js';
import { validationError } from '../../kernel/errors.js';
import { clickHouseType, rowArrays } from '../tabular/columns.js';
import type { InsightContext, KindResponse, QueryKind } from '../types.js';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 50_000;

export interface HogQLNode {
  query: string;
  statement: SelectStatement;
}

export const hogqlQuery: QueryKind<HogQLNode> = {
  kind: 'HogQLQuery',

  parse(node) {
    const text = node.query;
    if (typeof text !== 'string' || text.trim() === '') throw validationError('query.query must be a HogQL SELECT statement.', 'query', 'required');
    // A trailing semicolon (as editors add) ends the statement; nothing may follow it.
    const query = text.replace(/[\s;]+$/, '');
    return { query, statement: hogqlErrors(() => parseSelect(query)) };
  },

  async run(node, ctx) {
    const compiled = hogqlErrors(() =>
      new StatementCompiler({ propertyType: () => null, now: ctx.now, timeZone: ctx.project.timeZone }, ctx.project.id).compile(node.statement),
    );
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
  const rows = await ctx.run(statement);
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

/** HogQL's own errors are the request's fault: a 400 naming `query`. */
export function hogqlErrors<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof HogQLError) throw validationError(error.message, 'query');
    throw error;
  }
}
