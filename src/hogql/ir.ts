/**
 * The resolved, typed query tree every caller hands to a dialect: HogQL after name resolution
 * and type checking, and the statements the events API and the insights build themselves.
 *
 * It is dialect-neutral: columns are logical (a dialect maps them to its physical schema),
 * functions are HogQL's names, casts say only which type is wanted. No user-written text is in
 * it except as constant values: every table, column and lambda name a dialect prints is one the
 * resolver generated (t0, c0, x0) or a logical name from the schema.
 */
import type { HogQLType, IntervalUnit } from './types.js';

export type ConstValue = string | number | boolean | null;

/** A constant; a dialect binds it as a parameter (NULL may be written as is). */
export interface IrConst {
  kind: 'const';
  /**
   * DateTime: `YYYY-MM-DD HH:MM:SS.ffffff` in UTC; Date: `YYYY-MM-DD`; Integer: a number, or
   * decimal text beyond 2^53; UUID: lower-case text.
   */
  value: ConstValue;
  type: HogQLType;
}

export type TableName = 'events' | 'persons' | 'person_distinct_ids' | 'groups' | 'cohort_people';

/**
 * A column of a FROM item. `base` names the table when the item is a base table (the dialect
 * maps the logical column to its physical one); null for subqueries and CTEs, whose columns are
 * the generated output names.
 */
export interface IrColumn {
  kind: 'column';
  table: string;
  base: TableName | null;
  name: string;
  type: HogQLType;
  item?: HogQLType;
}

/** The text of a key path inside a JSON properties column (NULL when missing or JSON null). */
export interface IrProperty {
  kind: 'property';
  table: string;
  base: TableName;
  /** Physical JSON column, logical name (`properties`). */
  column: string;
  path: string[];
  type: 'String';
}

export interface IrCall {
  kind: 'call';
  /** HogQL's function name, or one of the internal names (functions.ts). */
  fn: string;
  args: IrExpr[];
  type: HogQLType;
  item?: HogQLType;
  /** `count(DISTINCT x)`. */
  distinct?: boolean;
  /** Parametric aggregates: `quantile(0.9)(x)` has params [0.9]. */
  params?: IrConst[];
}

/** Conversion to `type`; NULL where the value does not convert. */
export interface IrCast {
  kind: 'cast';
  expr: IrExpr;
  type: HogQLType;
}

export type OpName =
  | 'and'
  | 'or'
  | 'not'
  | 'neg'
  | '+'
  | '-'
  | '*'
  | '/'
  | '%'
  | '='
  | '!='
  | '<'
  | '<='
  | '>'
  | '>='
  | 'isNull'
  | 'isNotNull'
  | 'like'
  | 'notLike'
  | 'ilike'
  | 'notIlike'
  | 'in'
  | 'notIn';

/** Operators on operands of one type (the resolver has inserted the casts). */
export interface IrOp {
  kind: 'op';
  op: OpName;
  args: IrExpr[];
  type: HogQLType;
}

export interface IrCase {
  kind: 'case';
  branches: Array<[IrExpr, IrExpr]>;
  otherwise: IrExpr;
  type: HogQLType;
  item?: HogQLType;
}

export interface IrArray {
  kind: 'array';
  items: IrExpr[];
  type: 'Array';
  item: HogQLType;
}

export interface IrTuple {
  kind: 'tuple';
  items: IrExpr[];
  type: 'Tuple';
}

export interface IrInterval {
  kind: 'interval';
  amount: IrExpr;
  unit: IntervalUnit;
  type: 'Interval';
}

/** `(x0, x1) -> body`; only as an argument of the array functions. */
export interface IrLambda {
  kind: 'lambda';
  params: string[];
  body: IrExpr;
  type: HogQLType;
}

export interface IrLambdaArg {
  kind: 'lambdaArg';
  name: string;
  type: HogQLType;
  item?: HogQLType;
}

/** A subquery used as a value: scalar, or the right side of IN. */
export interface IrSubquery {
  kind: 'subquery';
  query: IrQuery;
  type: HogQLType;
}

export interface IrOrder {
  expr: IrExpr;
  desc: boolean;
  /** Where NULLs go; absent: the dialect's default for the direction is not relied on, ClickHouse's (last) is printed. */
  nullsFirst?: boolean;
}

export interface IrFrame {
  unit: 'rows' | 'range';
  /** null = UNBOUNDED; 0 = CURRENT ROW; negative = n PRECEDING; positive = n FOLLOWING. */
  start: number | null;
  end: number | null;
}

/** A function over a window: `row_number() OVER (PARTITION BY … ORDER BY …)`. */
export interface IrWindow {
  kind: 'window';
  call: IrCall;
  partitionBy: IrExpr[];
  orderBy: IrOrder[];
  frame: IrFrame | null;
  type: HogQLType;
}

export type IrExpr =
  | IrConst
  | IrColumn
  | IrProperty
  | IrCall
  | IrCast
  | IrOp
  | IrCase
  | IrArray
  | IrTuple
  | IrInterval
  | IrLambda
  | IrLambdaArg
  | IrSubquery
  | IrWindow;

// --- statements -------------------------------------------------------------------------------

/** A base table, always scoped to one project: the dialect must print the project filter. */
export interface IrTable {
  kind: 'table';
  table: TableName;
  alias: string;
  projectId: number;
}

export interface IrDerived {
  kind: 'subquery';
  query: IrQuery;
  alias: string;
}

export interface IrCteRef {
  kind: 'cte';
  name: string;
  alias: string;
}

/** `numbers(n)`: rows 0 … n−1 in column `number`. */
export interface IrNumbers {
  kind: 'numbers';
  count: IrExpr;
  alias: string;
}

export type IrFromItem = IrTable | IrDerived | IrCteRef | IrNumbers;

/**
 * `ASOF LEFT`: each left row meets at most one right row, the closest by the one inequality in ON
 * (for `left.x <= right.y`, the right row with the smallest y at or after x); NULLs where none does.
 */
export type JoinType = 'INNER' | 'LEFT' | 'RIGHT' | 'FULL' | 'CROSS' | 'ASOF LEFT';

export interface IrJoin {
  type: JoinType;
  item: IrFromItem;
  on: IrExpr | null;
}

export interface IrSelectColumn {
  expr: IrExpr;
  /** SQL name of the output column: generated (`c0`) or one of our own statements' names. */
  name: string;
}

export interface IrSelect {
  kind: 'select';
  ctes: Array<{ name: string; query: IrQuery }>;
  distinct: boolean;
  columns: IrSelectColumn[];
  from: IrFromItem | null;
  joins: IrJoin[];
  where: IrExpr | null;
  groupBy: IrExpr[];
  having: IrExpr | null;
  orderBy: IrOrder[];
  /** ClickHouse's `LIMIT n BY x, y`: at most n rows per distinct (x, y), taken in ORDER BY order. */
  limitBy?: { count: number; by: IrExpr[] } | null;
  limit: IrExpr | null;
  offset: IrExpr | null;
}

export interface IrUnion {
  kind: 'union';
  /** UNION ALL keeps duplicates; UNION DISTINCT drops them. */
  all: boolean;
  queries: IrQuery[];
}

export type IrQuery = IrSelect | IrUnion;

// --- small builders ---------------------------------------------------------------------------

export const constant = (value: ConstValue, type: HogQLType): IrConst => ({ kind: 'const', value, type });
export const NULL: IrConst = { kind: 'const', value: null, type: 'Null' };
export const TRUE: IrConst = { kind: 'const', value: true, type: 'Boolean' };

export function call(fn: string, args: IrExpr[], type: HogQLType, extra: Partial<IrCall> = {}): IrCall {
  return { kind: 'call', fn, args, type, ...extra };
}

export const cast = (expr: IrExpr, type: HogQLType): IrCast => ({ kind: 'cast', expr, type });

export const op = (name: OpName, args: IrExpr[], type: HogQLType = 'Boolean'): IrOp => ({ kind: 'op', op: name, args, type });

/** Conjunction of the conditions that are there (TRUE constants dropped); null when none. */
export function allOf(conditions: Array<IrExpr | null | undefined>): IrExpr | null {
  const parts = conditions.filter((c): c is IrExpr => c !== null && c !== undefined && !(c.kind === 'const' && c.value === true));
  if (parts.length === 0) return null;
  return parts.length === 1 ? parts[0] : op('and', parts);
}

export const anyOf = (conditions: IrExpr[]): IrExpr => (conditions.length === 1 ? conditions[0] : op('or', conditions));

export function select(parts: Partial<IrSelect> & Pick<IrSelect, 'columns'>): IrSelect {
  return {
    kind: 'select',
    ctes: [],
    distinct: false,
    from: null,
    joins: [],
    where: null,
    groupBy: [],
    having: null,
    orderBy: [],
    limit: null,
    offset: null,
    ...parts,
  };
}

export const column = (table: string, base: TableName | null, name: string, type: HogQLType): IrColumn => ({ kind: 'column', table, base, name, type });

/** Output columns of a query (a union's are its first query's). */
export function outputColumns(query: IrQuery): IrSelectColumn[] {
  return query.kind === 'select' ? query.columns : outputColumns(query.queries[0]);
}

/** Direct sub-expressions of a node (not descending into subqueries). */
export function irChildren(expr: IrExpr): IrExpr[] {
  switch (expr.kind) {
    case 'const':
    case 'column':
    case 'property':
    case 'lambdaArg':
    case 'subquery':
      return [];
    case 'call':
      return expr.args;
    case 'cast':
      return [expr.expr];
    case 'op':
      return expr.args;
    case 'case':
      return [...expr.branches.flat(), expr.otherwise];
    case 'array':
    case 'tuple':
      return expr.items;
    case 'interval':
      return [expr.amount];
    case 'lambda':
      return [expr.body];
    case 'window':
      return [expr.call, ...expr.partitionBy, ...expr.orderBy.map((o) => o.expr)];
  }
}
