/**
 * IR → DuckDB SQL. Values are bound parameters (`CAST($n AS …)`); identifiers are only the
 * generated names of the IR and the physical names of schema.ts, all quoted; every compound
 * expression is parenthesised. Each base table is filtered to its project here, whatever the
 * query around it says.
 */
import type { PrintOptions, PrintedQuery } from '../dialect.js';
import type {
  IrCall,
  IrCast,
  IrExpr,
  IrFromItem,
  IrJoin,
  IrOp,
  IrOrder,
  IrProperty,
  IrQuery,
  IrSelect,
  IrTable,
  IrWindow,
  TableName,
} from '../ir.js';
import { irChildren } from '../ir.js';
import type { HogQLType } from '../types.js';
import { printFunction } from './functions.js';
import { LocalTime } from './local-time.js';
import { jsonPointer, type SqlWriter } from './writer.js';

/** Physical names of the logical tables and columns (store/duckdb/schema.ts). */
const PHYSICAL: Record<TableName, { table: string; columns: Record<string, string> }> = {
  events: {
    table: 'events',
    columns: { $stored_person_id: 'person_id', $flush_seq: 'flush_seq', $row_key: 'rowid' },
  },
  persons: { table: 'persons', columns: {} },
  person_distinct_ids: { table: 'person_distinct_ids', columns: {} },
  groups: { table: 'groups', columns: { index: 'group_type_index', key: 'group_key' } },
  cohort_people: { table: 'cohort_people', columns: {} },
};
const PROJECT_COLUMN = 'project_id';

/** What the store's schema adds to PHYSICAL. */
export interface DuckDbTables {
  /**
   * Top-level event property keys whose columns every row has → those columns
   * (store/duckdb/materialized.ts); empty while they are being filled.
   */
  materialized?: ReadonlyMap<string, string>;
}

export const SQL_TYPE: Record<string, string> = {
  String: 'VARCHAR',
  Integer: 'BIGINT',
  Float: 'DOUBLE',
  Boolean: 'BOOLEAN',
  DateTime: 'TIMESTAMP',
  Date: 'DATE',
  UUID: 'UUID',
};

const NAME = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** A name the IR or the schema supplied, quoted; anything else is a bug, never printed. */
export function ident(name: string): string {
  if (!NAME.test(name)) throw new Error(`refusing to print identifier ${JSON.stringify(name)}`);
  return `"${name}"`;
}

export class Printer implements SqlWriter {
  /** Distinct bound values; a value bound twice is one parameter (GROUP BY text must match SELECT's). */
  private readonly values: unknown[] = [];
  private readonly indexOf = new Map<string, number>();
  readonly local: LocalTime;

  constructor(
    options: PrintOptions = {},
    private readonly tables: DuckDbTables = {},
  ) {
    this.local = new LocalTime(this, options.timeSpan ?? null);
  }

  /**
   * The statement with its parameters numbered by first appearance: a value bound while
   * printing a part that was then not used leaves no parameter behind.
   */
  printed(sql: string): PrintedQuery {
    const params: unknown[] = [];
    const numbers = new Map<string, number>();
    const text = sql.replace(/\u0001(\d+)\u0001/g, (_token, index: string) => {
      let n = numbers.get(index);
      if (n === undefined) {
        params.push(this.values[Number(index)]);
        n = params.length;
        numbers.set(index, n);
      }
      return `$${n}`;
    });
    return { sql: text, params };
  }

  /** A bound value, cast to the SQL type of `type` so overloads do not depend on the driver. */
  bind(value: unknown, type: HogQLType, sqlType?: string): string {
    if (value === null) return type === 'Null' || !SQL_TYPE[type] ? 'NULL' : `CAST(NULL AS ${SQL_TYPE[type]})`;
    // The driver binds integral JS numbers as BIGINT, which fails beyond 2^63; text always casts.
    const bindable = typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value) ? String(value) : value;
    const key = `${typeof bindable}:${String(bindable)}`;
    let index = this.indexOf.get(key);
    if (index === undefined) {
      index = this.values.push(bindable) - 1;
      this.indexOf.set(key, index);
    }
    return `CAST(\u0001${index}\u0001 AS ${sqlType ?? SQL_TYPE[type] ?? 'VARCHAR'})`;
  }

  /** The project id, typed as the column is (a wider type would cast the column instead). */
  private project(projectId: number): string {
    return this.bind(projectId, 'Integer', 'INTEGER');
  }

  // --- statements -----------------------------------------------------------------------------

  query(query: IrQuery): string {
    if (query.kind === 'union') {
      const joiner = query.all ? ' UNION ALL ' : ' UNION ';
      return query.queries.map((q) => `SELECT * FROM (${this.query(q)})`).join(joiner);
    }
    return this.select(query);
  }

  private select(q: IrSelect): string {
    const parts: string[] = [];
    if (q.ctes.length > 0) parts.push(`WITH ${q.ctes.map((cte) => `${ident(cte.name)} AS (${this.query(cte.query)})`).join(', ')}`);
    const columns = q.columns.map((c) => `${this.expr(c.expr)} AS ${ident(c.name)}`).join(', ');
    parts.push(`SELECT ${q.distinct ? 'DISTINCT ' : ''}${columns}`);
    const where: string[] = [];
    if (q.from) {
      // A project filter in WHERE would also drop the null-extended rows of an outer join.
      const wrapFrom = q.joins.some((join) => join.type === 'RIGHT' || join.type === 'FULL');
      parts.push(`FROM ${this.fromItem(q.from, wrapFrom, where)}`);
      for (const join of q.joins) parts.push(this.join(join));
    }
    if (q.where) where.push(this.expr(q.where));
    if (where.length > 0) parts.push(`WHERE ${where.join(' AND ')}`);
    // DuckDB allows UNNEST (arrayJoin) only in the select list: other clauses name its output column.
    const unnested = new Map(q.columns.filter((c) => containsArrayJoin(c.expr)).map((c) => [c.expr, ident(c.name)]));
    const clause = (e: IrExpr) => unnested.get(e) ?? this.expr(e);
    if (q.groupBy.length > 0) parts.push(`GROUP BY ${q.groupBy.map(clause).join(', ')}`);
    if (q.having) parts.push(`HAVING ${this.expr(q.having)}`);
    if (q.limitBy) {
      // LIMIT n BY x: the first n rows of each x in the statement's order.
      const order = q.orderBy.length > 0 ? ` ORDER BY ${this.orderList(q.orderBy, clause)}` : '';
      parts.push(`QUALIFY row_number() OVER (PARTITION BY ${q.limitBy.by.map(clause).join(', ')}${order}) <= ${q.limitBy.count}`);
    }
    if (q.orderBy.length > 0) parts.push(`ORDER BY ${this.orderList(q.orderBy, clause)}`);
    if (q.limit) parts.push(`LIMIT ${this.count(q.limit)}`);
    if (q.offset) parts.push(`OFFSET ${this.count(q.offset)}`);
    return parts.join(' ');
  }

  /** LIMIT/OFFSET: a number is written as digits (DuckDB plans a top-N only for constants). */
  private count(expr: IrExpr): string {
    if (expr.kind === 'const' && typeof expr.value === 'number' && Number.isSafeInteger(expr.value) && expr.value >= 0) return String(expr.value);
    return `CAST(${this.expr(expr)} AS BIGINT)`;
  }

  private orderList(items: IrOrder[], print = (e: IrExpr) => this.expr(e)): string {
    return items.map((o) => `${print(o.expr)} ${o.desc ? 'DESC' : 'ASC'} ${o.nullsFirst ? 'NULLS FIRST' : 'NULLS LAST'}`).join(', ');
  }

  /** The project filter of a base table goes into `where` when given, else the table is wrapped. */
  private fromItem(item: IrFromItem, wrap: boolean, where: string[] | null): string {
    switch (item.kind) {
      case 'table':
        if (!wrap && where) {
          where.push(this.projectFilter(item));
          return `${ident(PHYSICAL[item.table].table)} AS ${ident(item.alias)}`;
        }
        return `(SELECT * FROM ${ident(PHYSICAL[item.table].table)} WHERE ${ident(PROJECT_COLUMN)} = ${this.project(item.projectId)}) AS ${ident(item.alias)}`;
      case 'subquery':
        return `(${this.query(item.query)}) AS ${ident(item.alias)}`;
      case 'cte':
        return `${ident(item.name)} AS ${ident(item.alias)}`;
      case 'numbers':
        return `(SELECT range AS "number" FROM range(${this.count(item.count)})) AS ${ident(item.alias)}`;
    }
  }

  private projectFilter(item: IrTable): string {
    return `${ident(item.alias)}.${ident(PROJECT_COLUMN)} = ${this.project(item.projectId)}`;
  }

  private join(join: IrJoin): string {
    const { item } = join;
    if (join.type === 'CROSS') return `CROSS JOIN ${this.fromItem(item, true, null)}`;
    // Inner and left joins filter a base table in ON; right and full joins need it wrapped.
    const inOn = item.kind === 'table' && (join.type === 'INNER' || join.type === 'LEFT');
    const on: string[] = [];
    const from = inOn ? `${ident(PHYSICAL[(item as IrTable).table].table)} AS ${ident(item.alias)}` : this.fromItem(item, true, null);
    if (inOn) on.push(this.projectFilter(item as IrTable));
    if (join.on) on.push(this.expr(join.on));
    return `${join.type} JOIN ${from} ON ${on.length > 0 ? on.join(' AND ') : 'TRUE'}`;
  }

  // --- expressions ----------------------------------------------------------------------------

  expr(e: IrExpr): string {
    switch (e.kind) {
      case 'const':
        return this.bind(e.value, e.type);
      case 'column':
        return this.column(e.table, e.base, e.name);
      case 'property':
        return this.materializedProperty(e) ?? `json_extract_string(${this.column(e.table, e.base, e.column)}, ${this.bind(jsonPointer(e.path), 'String')})`;
      case 'call':
        return printFunction(this, e);
      case 'cast':
        return this.cast(e);
      case 'op':
        return this.op(e);
      case 'case':
        return `(CASE ${e.branches.map(([when, then]) => `WHEN ${this.expr(when)} THEN ${this.expr(then)}`).join(' ')} ELSE ${this.expr(e.otherwise)} END)`;
      case 'array':
        return `[${e.items.map((item) => this.expr(item)).join(', ')}]`;
      case 'tuple':
        return `row(${e.items.map((item) => this.expr(item)).join(', ')})`;
      case 'interval':
        return this.interval(e.amount, e.unit);
      case 'lambda':
        return `(${e.params.length === 1 ? ident(e.params[0]) : `(${e.params.map(ident).join(', ')})`} -> ${this.expr(e.body)})`;
      case 'lambdaArg':
        return ident(e.name);
      case 'subquery':
        return `(${this.query(e.query)})`;
      case 'window':
        return this.window(e);
    }
  }

  /**
   * `properties.<key>` of an event, for a key with a filled column of its own: that column, which
   * holds what json_extract_string reads (it was filled by it), without parsing the JSON.
   */
  private materializedProperty(e: IrProperty): string | null {
    if (e.base !== 'events' || e.column !== 'properties' || e.path.length !== 1) return null;
    const physical = this.tables.materialized?.get(e.path[0]);
    return physical ? this.column(e.table, e.base, physical) : null;
  }

  column(table: string, base: TableName | null, name: string): string {
    const physical = base ? (PHYSICAL[base].columns[name] ?? name) : name;
    return `${ident(table)}.${ident(physical)}`;
  }

  interval(amount: IrExpr, unit: string): string {
    // Quarters are three months; DuckDB's to_* functions take integers for the calendar units.
    const [fn, factor] =
      unit === 'quarter' ? ['to_months', 3] : unit === 'week' ? ['to_days', 7] : [`to_${unit}s`, 1];
    const value = unit === 'second' ? `CAST(${this.expr(amount)} AS DOUBLE)` : `CAST(${this.expr(amount)} AS INTEGER)`;
    return `${fn}(${factor === 1 ? value : `${value} * ${factor}`})`;
  }

  private window(w: IrWindow): string {
    const over: string[] = [];
    if (w.partitionBy.length > 0) over.push(`PARTITION BY ${w.partitionBy.map((e) => this.expr(e)).join(', ')}`);
    if (w.orderBy.length > 0) over.push(`ORDER BY ${this.orderList(w.orderBy)}`);
    if (w.frame) {
      const bound = (n: number | null, side: 'start' | 'end') =>
        n === null ? (side === 'start' ? 'UNBOUNDED PRECEDING' : 'UNBOUNDED FOLLOWING') : n === 0 ? 'CURRENT ROW' : n < 0 ? `${-n} PRECEDING` : `${n} FOLLOWING`;
      over.push(`${w.frame.unit.toUpperCase()} BETWEEN ${bound(w.frame.start, 'start')} AND ${bound(w.frame.end, 'end')}`);
    }
    return `(${printFunction(this, w.call)} OVER (${over.join(' ')}))`;
  }

  private op(e: IrOp): string {
    const [a, b] = e.args;
    switch (e.op) {
      case 'and':
      case 'or':
        return `(${e.args.map((arg) => this.expr(arg)).join(e.op === 'and' ? ' AND ' : ' OR ')})`;
      case 'not':
        return `(NOT ${this.expr(a)})`;
      case 'neg':
        // BIGINT overflow becomes NULL instead of failing the whole query: computed in HUGEINT,
        // then TRY_CAST back (TRY() would refuse an aggregate inside it, as in `count() * 10`).
        return e.type === 'Integer' ? `TRY_CAST(- CAST(${this.expr(a)} AS HUGEINT) AS BIGINT)` : `(- ${this.expr(a)})`;
      case '+':
      case '-':
      case '*':
      case '%':
        return e.type === 'Integer' ? `TRY_CAST((CAST(${this.expr(a)} AS HUGEINT) ${e.op} ${this.expr(b)}) AS BIGINT)` : `(${this.expr(a)} ${e.op} ${this.expr(b)})`;
      case '/':
        return `(${this.expr(a)} / ${this.expr(b)})`;
      case '=':
      case '<':
      case '<=':
      case '>':
      case '>=':
        return `(${this.expr(a)} ${e.op} ${this.expr(b)})`;
      case '!=':
        return `(${this.expr(a)} <> ${this.expr(b)})`;
      case 'isNull':
        return `(${this.expr(a)} IS NULL)`;
      case 'isNotNull':
        return `(${this.expr(a)} IS NOT NULL)`;
      case 'like':
      case 'notLike':
      case 'ilike':
      case 'notIlike': {
        const keyword = { like: 'LIKE', notLike: 'NOT LIKE', ilike: 'ILIKE', notIlike: 'NOT ILIKE' }[e.op];
        // Backslash escapes % and _ in ClickHouse patterns; DuckDB needs to be told. A pattern
        // computed per row may end in a lone escape, which DuckDB refuses: TRY makes that NULL.
        const sql = `(${this.expr(a)} ${keyword} ${this.expr(b)} ESCAPE '\\')`;
        return b.kind === 'const' ? sql : `TRY${sql}`;
      }
      case 'in':
      case 'notIn': {
        const keyword = e.op === 'in' ? 'IN' : 'NOT IN';
        if (e.args.length === 2 && b.kind === 'subquery') return `(${this.expr(a)} ${keyword} ${this.expr(b)})`;
        return `(${this.expr(a)} ${keyword} (${e.args.slice(1).map((arg) => this.expr(arg)).join(', ')}))`;
      }
    }
  }

  private cast(e: IrCast): string {
    const from = e.expr.type;
    const to = e.type;
    const x = () => this.expr(e.expr);
    if (from === 'Null') return SQL_TYPE[to] ? `CAST(NULL AS ${SQL_TYPE[to]})` : 'NULL';
    if (from === to) return x();
    switch (to) {
      case 'Float':
        if (from === 'Integer' || from === 'Boolean') return `CAST(${x()} AS DOUBLE)`;
        if (from === 'DateTime') return `epoch(${x()})`;
        if (from === 'Date') return `epoch(CAST(${x()} AS TIMESTAMP))`;
        if (from === 'UUID') return 'CAST(NULL AS DOUBLE)';
        return `TRY_CAST(${x()} AS DOUBLE)`;
      case 'Integer':
        if (from === 'Float') return `TRY_CAST(trunc(${x()}) AS BIGINT)`;
        if (from === 'String' || from === 'Any') return `TRY_CAST(trunc(TRY_CAST(${x()} AS DOUBLE)) AS BIGINT)`;
        return `TRY_CAST(${x()} AS BIGINT)`;
      case 'Boolean':
        if (from === 'String') return boolFromText(x());
        if (from === 'Integer' || from === 'Float') return `(${x()} <> 0)`;
        return `TRY_CAST(${x()} AS BOOLEAN)`;
      case 'String':
        if (from === 'DateTime') return `strftime(${x()}, '%Y-%m-%d %H:%M:%S')`;
        return `CAST(${x()} AS VARCHAR)`;
      case 'DateTime':
        if (from === 'Integer' || from === 'Float') return timestampFromSeconds(x());
        if (from === 'Date') return `CAST(${x()} AS TIMESTAMP)`;
        if (from === 'String' || from === 'Any') return timestampFromText(x());
        return `TRY_CAST(${x()} AS TIMESTAMP)`;
      case 'Date':
        if (from === 'DateTime') return `CAST(${x()} AS DATE)`;
        return `TRY_CAST(${x()} AS DATE)`;
      case 'UUID':
        return `TRY_CAST(${x()} AS UUID)`;
      default:
        return x();
    }
  }

  /** A call's SQL arguments. */
  args(c: IrCall): string[] {
    return c.args.map((arg) => this.expr(arg));
  }
}

/** JSON booleans read back as 'true'/'false'; any other text is NULL. */
export function boolFromText(sql: string): string {
  return `(CASE lower(${sql}) WHEN 'true' THEN TRUE WHEN 'false' THEN FALSE ELSE NULL END)`;
}

/** Property text as a timestamp: an ISO date-time, or a number of Unix seconds. */
export function timestampFromText(sql: string): string {
  return `COALESCE(TRY_CAST(${sql} AS TIMESTAMP), ${timestampFromSeconds(`TRY_CAST(${sql} AS DOUBLE)`)})`;
}

function timestampFromSeconds(sql: string): string {
  return `make_timestamp(TRY_CAST((${sql}) * 1000000 AS BIGINT))`;
}

export function printQuery(query: IrQuery, options?: PrintOptions, tables?: DuckDbTables): PrintedQuery {
  const printer = new Printer(options, tables);
  return printer.printed(printer.query(query));
}

function containsArrayJoin(expr: IrExpr): boolean {
  return (expr.kind === 'call' && expr.fn === 'arrayJoin') || irChildren(expr).some(containsArrayJoin);
}
