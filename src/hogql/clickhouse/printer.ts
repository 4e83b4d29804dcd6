/**
 * IR → ClickHouse SQL, in the subset that ClickHouse 18.16 (Debian's) and current servers both
 * run (docs/scale-out-cluster.md, "ClickHouse dialect"). Values are escaped literals (18.16 has
 * no server-side parameters); identifiers are only the IR's generated names and the physical
 * names below, all quoted. Each base table is filtered to its project here, and read
 * de-duplicated (FINAL; the mirror's deletions are rows with is_deleted = 1).
 *
 * What 18.16 cannot run is refused with a HogQLError (a 400 naming the gap), never printed:
 * window functions other than a whole-result `count() OVER ()` (printed as a scalar subquery),
 * more than one join unless it is the person lookup (pdi then persons, printed as one join of
 * a joined subquery), and the groups table. A current server (22.1 and later,
 * `ClickHouseTables.current`) gets window functions and any joins printed, so every insight
 * kind runs there.
 */
import type { PrintedQuery } from '../dialect.js';
import type { IrCast, IrExpr, IrFromItem, IrJoin, IrOp, IrOrder, IrProperty, IrQuery, IrSelect, IrTable, IrWindow, TableName } from '../ir.js';
import type { HogQLType } from '../types.js';
import { printFunction } from './functions.js';
import { literal } from './values.js';
import { type SqlWriter, boolFromText, floatText, intFromFloat, propertyText, timestampFromText, unsupported } from './sql.js';

/** Where the store keeps its tables, and whose flush position `__storeSeq` reads. */
export interface ClickHouseTables {
  database: string;
  node: string;
  /** Top-level event property keys kept in columns of their own → those columns (store/clickhouse/materialized.ts). */
  materialized?: ReadonlyMap<string, string>;
  /**
   * A server of 22.1 or later (the store asks its version): window functions, several joins, other
   * join conditions and the JSONExtract functions are printed; unset, the 18.16 subset.
   */
  current?: boolean;
}

/**
 * Window functions whose ClickHouse spelling differs. lag/lead read their frame there, so they get
 * the whole partition; the value is made Nullable so that a missing row is NULL, as in SQL, rather
 * than the type's default.
 */
const SHIFTS: Record<string, string> = { lag: 'lagInFrame', lead: 'leadInFrame' };

/** Aggregates whose value over a set of rows does not depend on the order they are read in. */
const ORDER_FREE = new Set(['min', 'max', 'sum', 'count', 'avg']);

/**
 * ClickHouse aggregates a frame whose start moves with the current row afresh at every row:
 * quadratic in the partition (a frame from the current row to the end took 3 s over 200,000 rows,
 * 12 s over 400,000). A frame that runs to the partition's end holds the same rows as one from the
 * start in the reversed order, which ClickHouse extends row by row; so an order-free aggregate
 * over such a frame is printed that way (funnels read "the first step-k event from here on").
 */
function runningFrame(w: IrWindow): IrWindow {
  const { frame } = w;
  if (!frame || frame.end !== null || frame.start === null || w.orderBy.length === 0 || !ORDER_FREE.has(w.call.fn)) return w;
  const orderBy = w.orderBy.map((o) => ({ ...o, desc: !o.desc, nullsFirst: !o.nullsFirst }));
  return { ...w, orderBy, frame: { unit: frame.unit, start: null, end: -frame.start } };
}
const RANKINGS = new Set(['row_number', 'rank', 'dense_rank']);

/** Physical names of the logical columns that differ (store/clickhouse/schema.ts). */
const EVENT_COLUMNS: Record<string, string> = { $stored_person_id: 'stored_person_id', $flush_seq: 'flush_seq', $row_key: 'uuid' };
const PHYSICAL: Partial<Record<TableName, string>> = { events: 'events', persons: 'persons', person_distinct_ids: 'person_distinct_ids', cohort_people: 'cohort_people' };

export const SQL_TYPE: Record<string, string> = {
  String: 'String',
  Integer: 'Int64',
  Float: 'Float64',
  Boolean: 'UInt8',
  DateTime: 'Int64',
  Date: 'Date',
  UUID: 'String',
};

const NAME = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

export function ident(name: string): string {
  if (!NAME.test(name)) throw new Error(`refusing to print identifier ${JSON.stringify(name)}`);
  return `\`${name}\``;
}

const MICROS: Record<string, number> = { second: 1e6, minute: 60e6, hour: 3600e6, day: 86400e6, week: 7 * 86400e6 };
const MONTHS: Record<string, number> = { month: 1, quarter: 3, year: 12 };

/** Column references to the persons side of a merged person lookup (see `personLookup`). */
interface MergedLookup {
  pdiAlias: string;
  personAlias: string;
}

export class Printer implements SqlWriter {
  private readonly ctes = new Map<string, IrQuery>();
  private readonly merged: MergedLookup[] = [];
  /**
   * Aliases of the events table read directly: its columns are printed unqualified, because
   * 18.16 loses the alias when it rewrites a joined query over a Distributed table for the
   * shards ("Unknown identifier: e.distinct_id"). Unqualified names resolve to the left table.
   */
  private readonly bare = new Set<string>();
  /**
   * Aliases of FROM subqueries, whose columns are named `<alias>_<name>`: 18.16 reads `t0.c1`
   * as the alias `c1` when the outer SELECT also names a column `c1` (the IR names every
   * statement's columns c0, c1, …), which gave wrong types and answers.
   */
  private readonly subqueries = new Set<string>();

  constructor(readonly tables: ClickHouseTables) {}

  table(name: string): string {
    return `${ident(this.tables.database)}.${ident(name)}`;
  }

  literal(value: unknown, type: HogQLType): string {
    return literal(value, type);
  }

  // --- statements -----------------------------------------------------------------------------

  /** `prefix`: put before the names of the statement's columns (a FROM subquery's, see `subqueries`). */
  query(query: IrQuery, prefix = ''): string {
    if (query.kind === 'union') {
      const all = query.queries.map((q) => `SELECT * FROM (${this.query(q, prefix)})`).join(' UNION ALL ');
      // 18.16 has only UNION ALL.
      return query.all ? all : `SELECT DISTINCT * FROM (${all})`;
    }
    return this.select(query, prefix);
  }

  private select(q: IrSelect, prefix = ''): string {
    // 18.16 has no WITH subqueries: a CTE is printed where it is used.
    for (const cte of q.ctes) this.ctes.set(cte.name, cte.query);
    // FROM first: it registers the aliases (bare, merged) that the column references depend on.
    const where: string[] = [];
    const from: string[] = [];
    if (q.from) {
      from.push(`FROM ${this.fromItem(q.from, where, true)}`);
      from.push(...this.joins(q.joins, where));
    } else if (q.joins.length > 0) {
      throw new Error('joins without a FROM item');
    }
    const columns = q.columns.map((c) => `${c.expr.kind === 'window' && !this.tables.current ? this.wholeCount(c.expr, q) : this.expr(c.expr)} AS ${ident(prefix + c.name)}`).join(', ');
    const parts = [`SELECT ${q.distinct ? 'DISTINCT ' : ''}${columns}`, ...from];
    if (q.where) where.push(this.expr(q.where));
    if (where.length > 0) parts.push(`WHERE ${where.join(' AND ')}`);
    if (q.groupBy.length > 0) parts.push(`GROUP BY ${q.groupBy.map((e) => this.expr(e)).join(', ')}`);
    if (q.having) parts.push(`HAVING ${this.expr(q.having)}`);
    if (q.orderBy.length > 0) parts.push(`ORDER BY ${this.orderList(q.orderBy)}`);
    if (q.limitBy) parts.push(`LIMIT ${q.limitBy.count} BY ${q.limitBy.by.map((e) => this.expr(e)).join(', ')}`);
    if (q.limit || q.offset) {
      const offset = q.offset ? this.count(q.offset) : '0';
      parts.push(`LIMIT ${offset}, ${q.limit ? this.count(q.limit) : '18446744073709551615'}`);
    }
    return parts.join(' ');
  }

  /**
   * `count() OVER ()`: the number of rows of the whole result, which is what the events API
   * asks for (its groups' total). 18.16 has no window functions; the same statement without
   * its order and page, counted in a scalar subquery, is that number.
   */
  private wholeCount(w: IrWindow, q: IrSelect): string {
    if (w.call.fn !== 'count' || w.call.args.length > 0 || w.partitionBy.length > 0 || w.orderBy.length > 0 || w.frame) throw unsupported('A window function');
    const inner: IrSelect = { ...q, ctes: [], columns: q.columns.filter((c) => c.expr.kind !== 'window'), orderBy: [], limit: null, offset: null };
    if (inner.columns.length === 0) inner.columns = [{ expr: { kind: 'const', value: 1, type: 'Integer' }, name: 'one' }];
    return `(SELECT count() FROM (${this.select(inner)}))`;
  }

  /** LIMIT/OFFSET: constants only (18.16 takes no expressions there). */
  private count(expr: IrExpr): string {
    if (expr.kind === 'const' && typeof expr.value === 'number' && Number.isSafeInteger(expr.value) && expr.value >= 0) return String(expr.value);
    throw unsupported('A computed LIMIT or OFFSET');
  }

  orderList(items: IrOrder[]): string {
    return items.map((o) => `${this.expr(o.expr)} ${o.desc ? 'DESC' : 'ASC'} ${o.nullsFirst ? 'NULLS FIRST' : 'NULLS LAST'}`).join(', ');
  }

  /** A base table, de-duplicated and scoped to its project; mirror tables as a subquery. */
  private baseTable(item: IrTable): string {
    const physical = PHYSICAL[item.table];
    if (!physical) throw unsupported(`The ${item.table} table`);
    const project = `project_id = ${literal(item.projectId, 'Integer')}`;
    const live = item.table === 'events' ? '' : ' AND is_deleted = 0';
    return `(SELECT * FROM ${this.table(physical)} FINAL WHERE ${project}${live})`;
  }

  private fromItem(item: IrFromItem, where: string[] | null, first: boolean): string {
    switch (item.kind) {
      case 'table':
        if (item.table === 'events' && where && first) {
          // The events table itself (not a subquery), so that its sorting key prunes parts. Its
          // columns are unqualified on 18.16 only: a current server finds them ambiguous beside
          // a joined table's of the same name.
          if (!this.tables.current) this.bare.add(item.alias);
          where.push(`${this.tables.current ? `${ident(item.alias)}.` : ''}project_id = ${literal(item.projectId, 'Integer')}`);
          return `${this.table('events')} AS ${ident(item.alias)} FINAL`;
        }
        return `${this.baseTable(item)} AS ${ident(item.alias)}`;
      case 'subquery':
        this.subqueries.add(item.alias);
        return `(${this.query(item.query, subqueryPrefix(item.alias))}) AS ${ident(item.alias)}`;
      case 'cte': {
        const query = this.ctes.get(item.name);
        if (!query) throw new Error(`unknown CTE ${item.name}`);
        this.subqueries.add(item.alias);
        return `(${this.query(query, subqueryPrefix(item.alias))}) AS ${ident(item.alias)}`;
      }
      case 'numbers':
        return `(SELECT number FROM system.numbers LIMIT ${this.count(item.count)}) AS ${ident(item.alias)}`;
    }
  }

  /** `where`: the statement's WHERE, which takes an inner join's conditions other than equalities. */
  private joins(joins: IrJoin[], where: string[]): string[] {
    if (joins.length === 0) return [];
    if (joins.length === 1) return [this.join(joins[0], where)];
    const lookup = this.personLookup(joins);
    if (lookup) return [lookup];
    if (!this.tables.current) throw unsupported('A query with more than one join');
    return joins.map((join) => this.join(join, where));
  }

  private join(join: IrJoin, where: string[]): string {
    const { item } = join;
    if (join.type === 'CROSS') return `CROSS JOIN ${this.fromItem(item, null, false)}`;
    if (!join.on) throw unsupported('A join without a condition');
    if (join.type === 'ASOF LEFT' && !this.tables.current) throw unsupported('An as-of join');
    const right = this.fromItem(item, null, false);
    const { equalities, others } = this.splitCondition(join.on);
    // An inner join's other conditions filter its result: the same rows from WHERE, which 18.16 takes.
    if (join.type === 'INNER' && equalities.length > 0) where.push(...others.map((e) => this.expr(e)));
    else if (others.length > 0 && this.tables.current) equalities.push(...others.map((e) => `(${this.expr(e)})`));
    else if (others.length > 0 || equalities.length === 0) throw unsupported('A join condition other than equalities');
    // 18.16 takes the equalities unparenthesised.
    const kind = join.type === 'ASOF LEFT' ? 'LEFT ASOF' : join.type === 'INNER' || join.type === 'LEFT' ? `ALL ${join.type}` : join.type;
    return `${kind} JOIN ${right} ON ${equalities.join(' AND ')}`;
  }

  /** A join condition's equalities, printed as 18.16 takes them (unparenthesised), and its other parts. */
  private splitCondition(on: IrExpr): { equalities: string[]; others: IrExpr[] } {
    const equalities: string[] = [];
    const others: IrExpr[] = [];
    for (const part of conjuncts(on)) {
      if (part.kind === 'op' && part.op === '=') equalities.push(`${this.expr(part.args[0])} = ${this.expr(part.args[1])}`);
      else others.push(part);
    }
    return { equalities, others };
  }

  /**
   * The lazy person joins (events → person_distinct_ids → persons, fields.ts) as one join: 18.16
   * runs one JOIN per SELECT. The right side joins the mirror's two tables itself and names the
   * person's columns `person__<name>`, which column references to the persons alias then read.
   */
  private personLookup(joins: IrJoin[]): string | null {
    const [pdi, person] = joins;
    if (joins.length !== 2 || pdi.type !== 'LEFT' || person.type !== 'LEFT') return null;
    if (pdi.item.kind !== 'table' || pdi.item.table !== 'person_distinct_ids' || person.item.kind !== 'table' || person.item.table !== 'persons') return null;
    if (!pdi.on || !person.on) return null;
    const { equalities, others } = this.splitCondition(pdi.on);
    if (others.length > 0 || equalities.length === 0) return null;
    const pdiAlias = pdi.item.alias;
    const personAlias = person.item.alias;
    const personColumns = ['id', 'properties', 'is_identified', 'created_at'].map((c) => `p.${ident(c)} AS ${ident(`person__${c}`)}`).join(', ');
    const right =
      `(SELECT d.distinct_id AS distinct_id, d.person_id AS person_id, ${personColumns} ` +
      `FROM ${this.baseTable(pdi.item)} AS d ALL LEFT JOIN ${this.baseTable(person.item)} AS p ON p.id = d.person_id)`;
    this.merged.push({ pdiAlias, personAlias });
    return `ALL LEFT JOIN ${right} AS ${ident(pdiAlias)} ON ${equalities.join(' AND ')}`;
  }

  // --- expressions ----------------------------------------------------------------------------

  expr(e: IrExpr): string {
    switch (e.kind) {
      case 'const':
        return literal(e.value, e.type);
      case 'column':
        return this.column(e.table, e.base, e.name);
      case 'property':
        return this.materializedProperty(e) ?? propertyText(this.column(e.table, e.base, e.column), e.path);
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
        return `tuple(${e.items.map((item) => this.expr(item)).join(', ')})`;
      case 'interval':
        throw unsupported('An interval outside date arithmetic');
      case 'lambda':
        return `(${e.params.length === 1 ? ident(e.params[0]) : `(${e.params.map(ident).join(', ')})`} -> ${this.expr(e.body)})`;
      case 'lambdaArg':
        return ident(e.name);
      case 'subquery':
        return `(${this.query(e.query)})`;
      case 'window':
        if (!this.tables.current) throw unsupported('A window function');
        return this.window(e);
    }
  }

  private window(window: IrWindow): string {
    const w = runningFrame(window);
    const over: string[] = [];
    if (w.partitionBy.length > 0) over.push(`PARTITION BY ${w.partitionBy.map((e) => this.expr(e)).join(', ')}`);
    if (w.orderBy.length > 0) over.push(`ORDER BY ${this.orderList(w.orderBy)}`);
    const shift = SHIFTS[w.call.fn];
    const frame = shift ? { unit: 'rows' as const, start: null, end: null } : w.frame;
    if (frame) {
      const bound = (n: number | null, side: 'start' | 'end') =>
        n === null ? (side === 'start' ? 'UNBOUNDED PRECEDING' : 'UNBOUNDED FOLLOWING') : n === 0 ? 'CURRENT ROW' : n < 0 ? `${-n} PRECEDING` : `${n} FOLLOWING`;
      over.push(`${frame.unit.toUpperCase()} BETWEEN ${bound(frame.start, 'start')} AND ${bound(frame.end, 'end')}`);
    }
    let call: string;
    if (shift) {
      const [value, offset] = w.call.args;
      call = `${shift}(toNullable(${this.expr(value)})${offset ? `, ${this.expr(offset)}` : ''})`;
    } else if (RANKINGS.has(w.call.fn)) {
      call = `${w.call.fn}()`;
    } else {
      call = printFunction(this, w.call);
    }
    return `(${call} OVER (${over.join(' ')}))`;
  }

  /**
   * `properties.<key>` of an event, for a key with a column of its own: that column, which holds
   * the same text (NULL when missing or JSON null) without reading the properties JSON.
   */
  private materializedProperty(e: IrProperty): string | null {
    if (e.base !== 'events' || e.column !== 'properties' || e.path.length !== 1) return null;
    const physical = this.tables.materialized?.get(e.path[0]);
    return physical ? this.column(e.table, e.base, physical) : null;
  }

  column(table: string, base: TableName | null, name: string): string {
    const merged = this.merged.find((m) => m.personAlias === table);
    if (merged) return `${ident(merged.pdiAlias)}.${ident(`person__${name}`)}`;
    const physical = base === 'events' ? (EVENT_COLUMNS[name] ?? name) : name;
    if (base === 'groups') throw unsupported('The groups table');
    if (base === 'events' && this.bare.has(table)) return ident(physical);
    if (base === null && this.subqueries.has(table)) return `${ident(table)}.${ident(subqueryPrefix(table) + name)}`;
    return `${ident(table)}.${ident(physical)}`;
  }

  /** A date-time as µs; a Date as its midnight in UTC (a Date moved by an interval, resolver.ts). */
  private instant(e: IrExpr): string {
    return e.type === 'Date' ? `(toInt64(toUInt32(toDateTime(${this.expr(e)}, 'UTC'))) * 1000000)` : this.expr(e);
  }

  /** A date-time (µs) shifted by an interval; calendar units through the wall clock in UTC. */
  private shifted(dt: string, interval: Extract<IrExpr, { kind: 'interval' }>, sign: 1 | -1): string {
    const amount = this.expr(interval.amount);
    const micros = MICROS[interval.unit];
    if (micros !== undefined) return `(${dt} ${sign > 0 ? '+' : '-'} toInt64(${amount} * ${micros}))`;
    const months = MONTHS[interval.unit];
    if (months === undefined) throw unsupported(`An interval of ${interval.unit}`);
    const n = `${sign > 0 ? '' : '-'}toInt64(${amount}) * ${months}`;
    return `(toInt64(toUnixTimestamp(addMonths(toDateTime(intDiv(${dt}, 1000000), 'UTC'), ${n}))) * 1000000 + (${dt} % 1000000))`;
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
        return `(- ${this.expr(a)})`;
      case '+':
      case '-':
        if (b?.kind === 'interval') return this.shifted(this.instant(a), b, e.op === '+' ? 1 : -1);
        if (a?.kind === 'interval' && e.op === '+') return this.shifted(this.instant(b), a, 1);
        return `(${this.expr(a)} ${e.op} ${this.expr(b)})`;
      case '*':
        return `(${this.expr(a)} * ${this.expr(b)})`;
      case '%':
        return `modulo(${this.expr(a)}, ${this.expr(b)})`;
      case '/':
        return `(${this.expr(a)} / ${this.expr(b)})`;
      case '=':
      case '<':
      case '<=':
      case '>':
      case '>=':
      case '!=':
        return `(${this.expr(a)} ${e.op} ${this.expr(b)})`;
      case 'isNull':
        return `isNull(${this.expr(a)})`;
      case 'isNotNull':
        return `isNotNull(${this.expr(a)})`;
      case 'like':
      case 'notLike':
      case 'ilike':
      case 'notIlike': {
        const insensitive = e.op === 'ilike' || e.op === 'notIlike';
        const [x, pattern] = insensitive ? [`lowerUTF8(${this.expr(a)})`, `lowerUTF8(${this.expr(b)})`] : [this.expr(a), this.expr(b)];
        return `(${e.op === 'like' || e.op === 'ilike' ? '' : 'NOT '}like(${x}, ${pattern}))`;
      }
      case 'in':
      case 'notIn': {
        // GLOBAL: on a cluster the subquery runs once, here, and its rows go to the shards.
        const keyword = e.op === 'in' ? 'GLOBAL IN' : 'GLOBAL NOT IN';
        // NULL IN … is NULL (as in DuckDB and current servers); 18.16 answers 0.
        const unlessNull = (test: string) => (a.type === 'Null' ? 'NULL' : `if(isNull(${this.expr(a)}), NULL, ${test})`);
        if (e.args.length === 2 && b.kind === 'subquery') return unlessNull(`${this.expr(a)} ${keyword} ${this.expr(b)}`);
        // A NULL in the list never matches (as in DuckDB); ClickHouse's IN would refuse it.
        const items = e.args.slice(1).filter((arg) => !(arg.kind === 'const' && arg.value === null));
        if (items.length === 0) return e.op === 'in' ? 'toUInt8(0)' : `isNotNull(${this.expr(a)})`;
        return unlessNull(`${this.expr(a)} ${e.op === 'in' ? 'IN' : 'NOT IN'} (${items.map((arg) => this.expr(arg)).join(', ')})`);
      }
    }
  }

  private cast(e: IrCast): string {
    const from = e.expr.type;
    const to = e.type;
    const x = () => this.expr(e.expr);
    if (from === 'Null') return SQL_TYPE[to] ? `CAST(NULL AS Nullable(${SQL_TYPE[to]}))` : 'NULL';
    if (from === to) return x();
    switch (to) {
      case 'Float':
        if (from === 'Integer' || from === 'Boolean') return `toFloat64(${x()})`;
        if (from === 'DateTime') return `(${x()} / 1000000)`;
        if (from === 'Date') return `toFloat64(toUInt32(toDateTime(${x()}, 'UTC')))`;
        if (from === 'UUID') return 'CAST(NULL AS Nullable(Float64))';
        return `toFloat64OrNull(toString(${x()}))`;
      case 'Integer':
        if (from === 'Float') return intFromFloat(x());
        if (from === 'String' || from === 'Any') return intFromFloat(`toFloat64OrNull(toString(${x()}))`);
        if (from === 'DateTime') return `intDiv(${x()}, 1000000)`;
        if (from === 'UUID') return 'CAST(NULL AS Nullable(Int64))';
        return `toInt64(${x()})`;
      case 'Boolean':
        if (from === 'String' || from === 'Any') return boolFromText(x());
        if (from === 'Integer' || from === 'Float') return `(${x()} != 0)`;
        return 'CAST(NULL AS Nullable(UInt8))';
      case 'String':
        // Not formatDateTime: its %M is the minute on 18.16 but the month's name on current servers.
        if (from === 'DateTime') return `toString(toDateTime(intDiv(${x()}, 1000000), 'UTC'))`;
        if (from === 'Float') return floatText(x());
        // NULL stays NULL (if() would read it as false).
        if (from === 'Boolean') return `multiIf(isNull(${x()}), NULL, ${x()} != 0, 'true', 'false')`;
        return `toString(${x()})`;
      case 'DateTime':
        if (from === 'Integer' || from === 'Float') return `toInt64(${x()} * 1000000)`;
        if (from === 'Date') return this.instant(e.expr);
        if (from === 'String' || from === 'Any') return timestampFromText(x());
        return 'CAST(NULL AS Nullable(Int64))';
      case 'Date':
        if (from === 'DateTime') return `toDate(toDateTime(intDiv(${x()}, 1000000), 'UTC'))`;
        return `toDateOrNull(toString(${x()}))`;
      case 'UUID': {
        // UUIDs are lower-case text in this store (schema.ts).
        const text = `lowerUTF8(toString(${x()}))`;
        return `if(match(${text}, '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'), ${text}, NULL)`;
      }
      default:
        return x();
    }
  }
}

const subqueryPrefix = (alias: string) => `${alias}_`;

/** The parts of an AND (nested ANDs flattened). */
function conjuncts(e: IrExpr): IrExpr[] {
  return e.kind === 'op' && e.op === 'and' ? e.args.flatMap(conjuncts) : [e];
}

export function printQuery(query: IrQuery, tables: ClickHouseTables): PrintedQuery {
  return { sql: new Printer(tables).query(query), params: [] };
}
