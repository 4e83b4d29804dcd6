/**
 * Whole HogQL statements (HogQLQuery) → IR: FROM tables, subqueries and CTEs, joins, WHERE,
 * GROUP BY, HAVING, ORDER BY, LIMIT/OFFSET and UNION. Every base table, wherever it appears
 * (a subquery, a CTE, a join, a lazy `person` join), becomes an IrTable carrying the project id,
 * and the dialect prints the project filter on each: a statement cannot name a table any other
 * way, so it cannot read another project's rows. Table and column names in the IR are generated
 * (t0, c0, w0); the user's names only steer the lookup.
 */
import type { Expr, FromItem, SelectCore, SelectStatement } from './ast.js';
import type { CompileContext } from './context.js';
import { typedProperty } from './compile.js';
import { errorAt, quoteForMessage } from './errors.js';
import { type TableBinding, binding, lazyJoins, resolveTableField, unknownField } from './fields.js';
import { formatExpr } from './format.js';
import type { IrExpr, IrFromItem, IrJoin, IrQuery, IrSelectColumn } from './ir.js';
import { TRUE, allOf, column, constant, op, outputColumns, select } from './ir.js';
import { compilePropertyFilters } from './property-filters.js';
import { ExprResolver, type FieldScope, literal } from './resolver.js';
import { TABLES, isTableName } from './schema.js';
import type { HogQLType } from './types.js';

/** More FROM items, CTEs or subqueries than this in one statement is not a real query. */
const MAX_SOURCES = 50;

/** What fills a statement's placeholders (HogQLQuery's `filters`, `values` and `variables`). */
export interface Placeholders {
  /** `{filters}`: property filters and time bounds (DateTime text) on the statement's events table. */
  filters: { properties: unknown[]; after: string | null; before: string | null } | null;
  /** `{name}` → a constant; variables are here as `variables.<code_name>`. */
  values: Record<string, unknown>;
}

export interface CompiledStatement {
  query: IrQuery;
  /** Output column names as the user sees them: the alias, or the expression's HogQL text. */
  names: string[];
}

/** A named result a FROM clause can read: a CTE or a subquery. */
interface Derived {
  names: string[];
  columns: IrSelectColumn[];
}

interface Source {
  /** The name fields may be qualified with (the alias, or the table / CTE name). */
  name: string | null;
  item: IrFromItem;
  table?: TableBinding;
  derived?: Derived;
}

export class StatementCompiler {
  private tables = 0;
  private ctes = 0;

  constructor(
    private readonly ctx: CompileContext,
    private readonly projectId: number,
    readonly placeholders: Placeholders | null = null,
  ) {}

  compile(statement: SelectStatement, ctes: ReadonlyMap<string, Derived & { irName: string }> = new Map()): CompiledStatement {
    if (statement.kind === 'union') {
      const parts = statement.queries.map((q) => this.compile(q, ctes));
      const width = parts[0].names.length;
      parts.forEach((part, i) => {
        if (part.names.length !== width) {
          throw errorAt(`Every query of a UNION must have the same number of columns (${width}, but query ${i + 1} has ${part.names.length})`, statement.queries[i].start);
        }
      });
      return { query: { kind: 'union', all: statement.all, queries: parts.map((p) => p.query) }, names: parts[0].names };
    }
    return this.core(statement, ctes);
  }

  private core(core: SelectCore, inherited: ReadonlyMap<string, Derived & { irName: string }>): CompiledStatement {
    const ctes = new Map(inherited);
    const irCtes: Array<{ name: string; query: IrQuery }> = [];
    for (const cte of core.ctes) {
      const compiled = this.compile(cte.query, ctes);
      const irName = `w${this.count('ctes')}`;
      irCtes.push({ name: irName, query: compiled.query });
      ctes.set(cte.name, { irName, names: compiled.names, columns: outputColumns(compiled.query) });
    }

    const sources: Source[] = [];
    const joins: Array<{ source: Source; type: IrJoin['type']; on: Expr | null }> = [];
    if (core.from) sources.push(this.source(core.from, ctes));
    for (const join of core.joins) {
      const source = this.source(join.item, ctes);
      sources.push(source);
      joins.push({ source, type: join.type, on: join.on });
    }

    const aliases = new Map<string, IrExpr>();
    const scope = new StatementScope(this, this.ctx, sources, aliases, ctes);
    const resolve = (expr: Expr) => new ExprResolver(this.ctx, scope).resolve(expr);
    const condition = (expr: Expr) => new ExprResolver(this.ctx, scope).condition(expr);

    const columns: IrSelectColumn[] = [];
    const names: string[] = [];
    for (const item of core.columns) {
      if (item.expr.kind === 'star') {
        if (sources.length === 0) throw errorAt("'*' needs a FROM clause", item.expr.start);
        for (const source of sources) {
          for (const [name, expr] of starColumns(source)) {
            columns.push({ expr, name: `c${columns.length}` });
            names.push(name);
          }
        }
        continue;
      }
      const expr = resolve(item.expr);
      columns.push({ expr, name: `c${columns.length}` });
      names.push(item.alias ?? formatExpr(item.expr));
      if (item.alias !== null) aliases.set(item.alias, expr);
    }

    const irJoins: IrJoin[] = [];
    const on = joins.map((join) => (join.on ? condition(join.on) : null));
    const where = core.where ? condition(core.where) : null;
    const groupBy = core.groupBy.map(resolve);
    const having = core.having ? condition(core.having) : null;
    const orderBy = core.orderBy.map((o) => ({ expr: resolve(o.expr), desc: o.desc }));
    const limit = core.limit ? countConstant(core.limit, 'LIMIT') : null;
    const limitBy = core.limitBy ? { count: countConstant(core.limitBy.count, 'LIMIT BY'), by: core.limitBy.by.map(resolve) } : null;
    const offset = core.offset ? countConstant(core.offset, 'OFFSET') : null;

    // Lazy joins (person_id, person.properties) come right after the table that needs them.
    const [first] = sources;
    if (first?.table) irJoins.push(...lazyJoins(first.table));
    joins.forEach((join, i) => {
      irJoins.push({ type: join.type, item: join.source.item, on: on[i] });
      if (join.source.table) irJoins.push(...lazyJoins(join.source.table));
    });

    const query = select({
      ctes: irCtes,
      distinct: core.distinct,
      columns,
      from: first?.item ?? null,
      joins: irJoins,
      where,
      groupBy,
      having,
      orderBy,
      limitBy,
      limit: limit === null ? null : { kind: 'const', value: limit, type: 'Integer' },
      offset: offset === null ? null : { kind: 'const', value: offset, type: 'Integer' },
    });
    return { query, names };
  }

  private source(item: FromItem, ctes: ReadonlyMap<string, Derived & { irName: string }>): Source {
    const alias = `t${this.count('tables')}`;
    if (item.kind === 'subquery') {
      const compiled = this.compile(item.query, ctes);
      return { name: item.alias, item: { kind: 'subquery', query: compiled.query, alias }, derived: { names: compiled.names, columns: outputColumns(compiled.query) } };
    }
    const cte = ctes.get(item.name);
    if (cte) return { name: item.alias ?? item.name, item: { kind: 'cte', name: cte.irName, alias }, derived: cte };
    if (!isTableName(item.name)) {
      throw errorAt(`Unknown table ${quoteForMessage(item.name)}; the tables are ${Object.keys(TABLES).join(', ')}`, item.start);
    }
    const table = binding(alias, item.name, this.projectId);
    return { name: item.alias ?? item.name, item: { kind: 'table', table: item.name, alias, projectId: this.projectId }, table };
  }

  /** A subquery used as a value: its first column's type is the value's. */
  subquery(query: SelectStatement, start: number, ctes: ReadonlyMap<string, Derived & { irName: string }>): IrExpr {
    const compiled = this.compile(query, ctes);
    const columns = outputColumns(compiled.query);
    if (columns.length !== 1) throw errorAt(`A subquery used as a value must have one column, not ${columns.length}`, start);
    return { kind: 'subquery', query: compiled.query, type: columns[0].expr.type };
  }

  private count(what: 'tables' | 'ctes'): number {
    if (this.tables + this.ctes >= MAX_SOURCES) throw errorAt(`Too many tables, subqueries and CTEs (limit ${MAX_SOURCES})`, 0);
    return this[what]++;
  }
}

class StatementScope implements FieldScope {
  constructor(
    private readonly compiler: StatementCompiler,
    private readonly ctx: CompileContext,
    private readonly sources: Source[],
    private readonly aliases: Map<string, IrExpr>,
    private readonly ctes: ReadonlyMap<string, Derived & { irName: string }>,
  ) {}

  field(names: string[], start: number): IrExpr {
    // ClickHouse lets a select alias be used anywhere in its SELECT, before column names.
    if (names.length === 1 && this.aliases.has(names[0])) return this.aliases.get(names[0])!;
    if (names.length >= 2) {
      const qualified = this.sources.find((s) => s.name === names[0]);
      if (qualified) {
        const ir = this.lookup(qualified, names.slice(1));
        if (!ir) throw unknownField(names, start);
        return ir;
      }
    }
    for (const source of this.sources) {
      const ir = this.lookup(source, names);
      if (ir) return ir;
    }
    throw unknownField(names, start);
  }

  subquery(query: SelectStatement, start: number): IrExpr {
    return this.compiler.subquery(query, start, this.ctes);
  }

  placeholder(name: string, start: number, resolver: ExprResolver): IrExpr {
    const fill = this.compiler.placeholders;
    if (!fill) throw errorAt(`Placeholder {${name}} has no value here`, start);
    if (name === 'filters') return this.filters(fill.filters, start, resolver);
    if (!Object.hasOwn(fill.values, name)) throw errorAt(`Placeholder {${name}} has no value: give it in values (or variables)`, start);
    const value = fill.values[name];
    if (value !== null && !['string', 'number', 'boolean'].includes(typeof value)) throw errorAt(`Placeholder {${name}} must be a string, number, boolean or null`, start);
    return literal(value as string | number | boolean | null, Number.isSafeInteger(value));
  }

  /** `{filters}`: the query's property filters and date range, on the first events table in FROM. */
  private filters(filters: Placeholders['filters'], start: number, resolver: ExprResolver): IrExpr {
    const events = this.sources.find((s) => s.table?.table === 'events')?.table;
    if (!events) throw errorAt('{filters} needs the events table in FROM', start);
    if (!filters) return TRUE;
    const timestamp = column(events.alias, 'events', 'timestamp', 'DateTime');
    const reader = (names: string[]) => ({
      typed: resolveTableField(events, names, (access) => typedProperty(this.ctx, access))!,
      text: resolveTableField(events, names, (access) => access.ir)!,
    });
    const properties = compilePropertyFilters(filters.properties, { resolver, event: (key) => reader(['properties', key]), person: (key) => reader(['person', 'properties', key]) }, 'query');
    return (
      allOf([
        filters.after ? op('>=', [timestamp, constant(filters.after, 'DateTime')]) : null,
        filters.before ? op('<=', [timestamp, constant(filters.before, 'DateTime')]) : null,
        properties,
      ]) ?? TRUE
    );
  }

  private lookup(source: Source, names: string[]): IrExpr | null {
    if (source.table) return resolveTableField(source.table, names, (access) => typedProperty(this.ctx, access));
    const derived = source.derived!;
    if (names.length !== 1) return null;
    const index = derived.names.indexOf(names[0]);
    if (index === -1) return null;
    const { name, expr } = derived.columns[index];
    const ir = column(source.item.alias, null, name, expr.type);
    return 'item' in expr && expr.item ? { ...ir, item: expr.item } : ir;
  }
}

/** `SELECT *`: a table's public columns (the event's own, not the lazy person ones), or a subquery's. */
function starColumns(source: Source): Array<[string, IrExpr]> {
  if (source.derived) {
    return source.derived.columns.map((c, i) => [source.derived!.names[i], column(source.item.alias, null, c.name, c.expr.type as HogQLType)]);
  }
  const table = source.table!;
  return Object.entries(TABLES[table.table])
    .filter(([, spec]) => !spec.internal)
    .map(([name, spec]) => [name, column(table.alias, table.table, name, spec.type)]);
}

function countConstant(expr: Expr, what: string): number {
  if (expr.kind !== 'constant' || typeof expr.value !== 'number' || !expr.integer || expr.value < 0) {
    throw errorAt(`${what} must be a non-negative whole number`, expr.start);
  }
  return expr.value;
}
