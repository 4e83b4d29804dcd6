/**
 * HogQL expression tree. Every node keeps the [start, end) offsets of its source text so
 * later stages can report errors where the user wrote the problem.
 */
export interface Span {
  start: number;
  end: number;
}

export type ConstantValue = string | number | boolean | null;

export interface Constant extends Span {
  kind: 'constant';
  value: ConstantValue;
  /** Numbers only: false when written with a fraction or exponent (`1.0`, `1e3`). */
  integer?: boolean;
}

export interface FieldPart extends Span {
  name: string;
}

/** A dotted identifier chain: `event`, `properties.$browser`, `person.properties.email`. */
export interface Field extends Span {
  kind: 'field';
  chain: FieldPart[];
}

/** `target[index]`, e.g. `properties['$browser']`. */
export interface Index extends Span {
  kind: 'index';
  target: Expr;
  index: Expr;
}

/** Only valid as the sole argument of `count(*)`. */
export interface Star extends Span {
  kind: 'star';
}

export interface Call extends Span {
  kind: 'call';
  name: string;
  args: Expr[];
  /** `count(DISTINCT x)`. */
  distinct?: boolean;
  /** Parameters of a parametric aggregate: `quantile(0.9)(x)` has params [0.9]. */
  params?: Expr[];
  /** `f(x) OVER (PARTITION BY … ORDER BY …)`. */
  over?: WindowSpec;
}

export interface OrderItem {
  expr: Expr;
  desc: boolean;
}

export interface WindowSpec {
  partitionBy: Expr[];
  orderBy: OrderItem[];
}

/** `INTERVAL 7 DAY`. */
export interface IntervalExpr extends Span {
  kind: 'interval';
  amount: Expr;
  unit: string;
}

/** `{filters}`, `{name}`, `{variables.code}`: filled in by the HogQLQuery's filters and values. */
export interface Placeholder extends Span {
  kind: 'placeholder';
  name: string;
}

/** A SELECT used as a value: `(SELECT max(timestamp) FROM events)`, `x IN (SELECT …)`. */
export interface SubqueryExpr extends Span {
  kind: 'subquery';
  query: SelectStatement;
}

/** `[a, b, c]`. */
export interface ArrayLiteral extends Span {
  kind: 'array';
  items: Expr[];
}

/** `x -> body` / `(x, y) -> body`: only as the function argument of the array functions. */
export interface Lambda extends Span {
  kind: 'lambda';
  params: FieldPart[];
  body: Expr;
}

export interface Negate extends Span {
  kind: 'negate';
  expr: Expr;
}

export interface Not extends Span {
  kind: 'not';
  expr: Expr;
}

export type ArithmeticOp = '+' | '-' | '*' | '/' | '%';

export interface Arithmetic extends Span {
  kind: 'arithmetic';
  op: ArithmeticOp;
  left: Expr;
  right: Expr;
}

/** `==` is stored as `=` and `<>` as `!=`. */
export type CompareOp = '=' | '!=' | '<' | '<=' | '>' | '>=';

export interface Compare extends Span {
  kind: 'compare';
  op: CompareOp;
  left: Expr;
  right: Expr;
}

export interface Like extends Span {
  kind: 'like';
  caseInsensitive: boolean;
  negated: boolean;
  left: Expr;
  pattern: Expr;
}

export interface In extends Span {
  kind: 'in';
  negated: boolean;
  left: Expr;
  list: Expr[];
}

export interface IsNull extends Span {
  kind: 'isNull';
  negated: boolean;
  expr: Expr;
}

/** AND / OR chains are flattened so long chains do not make deep trees. */
export interface Logical extends Span {
  kind: 'and' | 'or';
  exprs: Expr[];
}

export type Expr =
  | Constant
  | Field
  | Index
  | Star
  | Call
  | Negate
  | Not
  | Arithmetic
  | Compare
  | Like
  | In
  | IsNull
  | Logical
  | IntervalExpr
  | SubqueryExpr
  | Placeholder
  | ArrayLiteral
  | Lambda;

/** One entry of a `select` list: an expression with an optional `AS alias`. */
export interface SelectItem {
  expr: Expr;
  alias: string | null;
}

// --- statements (HogQLQuery) -----------------------------------------------------------------

export type JoinKind = 'INNER' | 'LEFT' | 'RIGHT' | 'FULL' | 'CROSS';

export type FromItem =
  | { kind: 'table'; name: string; alias: string | null; start: number }
  | { kind: 'subquery'; query: SelectStatement; alias: string | null; start: number };

export interface JoinClause {
  type: JoinKind;
  item: FromItem;
  on: Expr | null;
}

export interface SelectCore extends Span {
  kind: 'select';
  /** `WITH name AS (SELECT …)`. */
  ctes: Array<{ name: string; query: SelectStatement; start: number }>;
  distinct: boolean;
  /** `*` is an item whose expr is a Star. */
  columns: SelectItem[];
  from: FromItem | null;
  joins: JoinClause[];
  where: Expr | null;
  groupBy: Expr[];
  having: Expr | null;
  orderBy: OrderItem[];
  /** `LIMIT n BY a, b`: at most n rows per distinct (a, b), in ORDER BY order. */
  limitBy: { count: Expr; by: Expr[] } | null;
  limit: Expr | null;
  offset: Expr | null;
}

export interface SelectUnion extends Span {
  kind: 'union';
  all: boolean;
  queries: SelectStatement[];
}

export type SelectStatement = SelectCore | SelectUnion;

/** Direct children of a node, in source order. */
export function children(expr: Expr): Expr[] {
  switch (expr.kind) {
    case 'constant':
    case 'field':
    case 'star':
    case 'placeholder':
      return [];
    case 'index':
      return [expr.target, expr.index];
    case 'call':
      return [...expr.args, ...(expr.params ?? []), ...(expr.over ? [...expr.over.partitionBy, ...expr.over.orderBy.map((o) => o.expr)] : [])];
    case 'interval':
      return [expr.amount];
    case 'array':
      return expr.items;
    case 'lambda':
      return [expr.body];
    case 'subquery':
      // Its own expressions were bounded when it was parsed.
      return [];
    case 'negate':
    case 'not':
    case 'isNull':
      return [expr.expr];
    case 'arithmetic':
    case 'compare':
      return [expr.left, expr.right];
    case 'like':
      return [expr.left, expr.pattern];
    case 'in':
      return [expr.left, ...expr.list];
    case 'and':
    case 'or':
      return expr.exprs;
  }
}

/** Depth of the tree, measured without recursion so hostile input cannot exhaust the stack. */
export function treeDepth(root: Expr): number {
  let max = 0;
  const stack: Array<[Expr, number]> = [[root, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > max) max = depth;
    for (const child of children(node)) stack.push([child, depth + 1]);
  }
  return max;
}
