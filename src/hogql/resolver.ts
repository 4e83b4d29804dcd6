/**
 * HogQL expressions → typed IR: names resolved through a scope, functions through the
 * whitelist (arity, aggregates, constant checks), operands brought to one type. Every check a
 * query can fail is made here, before any dialect prints SQL.
 */
import type { ArithmeticOp, Call, Compare, Expr, In, Like, SelectStatement } from './ast.js';
import { asBool, asDate, asDateTime, asFloat, asNumber, asText, unify } from './coerce.js';
import { type CompileContext, timeZoneOf } from './context.js';
import { errorAt, quoteForMessage } from './errors.js';
import { type FunctionSpec, findFunction } from './functions.js';
import { type IrExpr, type IrLambdaArg, type IrOrder, type IrWindow, call, cast, constant, op } from './ir.js';
import { type HogQLType, intervalUnit, isNumeric, isTemporal } from './types.js';

/** Where field names are looked up. */
export interface FieldScope {
  /** The field's IR; throws "Unknown field" when nothing in scope has it. */
  field(names: string[], start: number): IrExpr;
  /** A SELECT used as a value; absent where only expressions are allowed (the events API). */
  subquery?(query: SelectStatement, start: number): IrExpr;
  /** `{name}`: absent where there is nothing to fill it with. */
  placeholder?(name: string, start: number, resolver: ExprResolver): IrExpr;
}

export class ExprResolver {
  /** Set once any aggregate function is resolved. */
  hasAggregate = false;
  /** The first field read outside any aggregate (the events API refuses it next to one). */
  fieldOutsideAggregate: { text: string; start: number } | null = null;
  private aggregate: FunctionSpec | null = null;
  /** Lambda parameters in scope, innermost last: the user's name → the generated one. */
  private readonly lambdaScopes: Array<Map<string, IrLambdaArg>> = [];
  private lambdaCount = 0;

  constructor(
    readonly ctx: CompileContext,
    private readonly scope: FieldScope,
  ) {}

  get timeZone(): string {
    return timeZoneOf(this.ctx);
  }

  resolve(expr: Expr): IrExpr {
    switch (expr.kind) {
      case 'constant':
        return literal(expr.value, expr.integer);
      case 'field':
      case 'index': {
        const param = expr.kind === 'field' && expr.chain.length === 1 ? this.lambdaParam(expr.chain[0].name) : null;
        if (param) return param;
        const names = fieldNames(expr);
        const ir = this.scope.field(names, expr.start);
        if (!this.aggregate && !this.fieldOutsideAggregate) {
          this.fieldOutsideAggregate = { text: expr.kind === 'field' ? names.join('.') : 'properties[…]', start: expr.start };
        }
        return ir;
      }
      case 'star':
        throw errorAt("'*' is only allowed in count(*)", expr.start);
      case 'call':
        return this.call(expr);
      case 'negate':
        return this.negate(expr.expr);
      case 'not':
        return op('not', [asBool(this.resolve(expr.expr), expr.expr.start)]);
      case 'arithmetic':
        return this.arithmetic(expr.op, expr.left, expr.right);
      case 'compare':
        return this.compare(expr);
      case 'like':
        return this.like(expr);
      case 'in':
        return this.in(expr);
      case 'isNull':
        return op(expr.negated ? 'isNotNull' : 'isNull', [this.resolve(expr.expr)]);
      case 'and':
      case 'or':
        return op(expr.kind, expr.exprs.map((item) => asBool(this.resolve(item), item.start)));
      case 'interval': {
        const unit = intervalUnit(expr.unit);
        if (!unit) throw errorAt(`Unknown interval unit ${quoteForMessage(expr.unit)}`, expr.start);
        const amount = this.resolve(expr.amount);
        if (!isNumeric(amount.type) && amount.type !== 'String') throw errorAt(`INTERVAL needs a number, got ${amount.type}`, expr.amount.start);
        return { kind: 'interval', amount: asNumber(amount), unit, type: 'Interval' };
      }
      case 'placeholder':
        if (!this.scope.placeholder) throw errorAt(`Placeholder {${expr.name}} is only allowed in a HogQL query`, expr.start);
        return this.scope.placeholder(expr.name, expr.start, this);
      case 'array': {
        const items = expr.items.map((item) => this.resolve(item));
        const { exprs, type } = unify(items, expr.items.map((item) => item.start), this.timeZone);
        return { kind: 'array', items: exprs, type: 'Array', item: type === 'Null' ? 'Any' : type };
      }
      case 'lambda':
        throw errorAt('A lambda is only allowed as the first argument of an array function (arrayMap, arrayFilter, arrayExists)', expr.start);
      case 'subquery':
        if (!this.scope.subquery) throw errorAt('Subqueries are only allowed in a HogQL query', expr.start);
        return this.scope.subquery(expr.query, expr.start);
    }
  }

  /** The expression as a condition (WHERE, HAVING, ON). */
  condition(expr: Expr): IrExpr {
    return asBool(this.resolve(expr), expr.start);
  }

  /** `a <op> b` with both sides brought to one type; `= NULL` means IS NULL, as in HogQL. */
  comparison(operator: Compare['op'], left: IrExpr, right: IrExpr, at: [number, number]): IrExpr {
    const nullSide = isNullLiteral(left) ? right : isNullLiteral(right) ? left : null;
    if (nullSide) {
      if (operator === '=') return op('isNull', [nullSide]);
      if (operator === '!=') return op('isNotNull', [nullSide]);
      return { kind: 'cast', expr: constant(null, 'Null'), type: 'Boolean' };
    }
    const { exprs } = unify([left, right], at, this.timeZone);
    return op(operator, exprs);
  }

  membership(left: IrExpr, list: IrExpr[], negated: boolean, at: number[]): IrExpr {
    const { exprs } = unify([left, ...list], at, this.timeZone);
    return op(negated ? 'notIn' : 'in', exprs);
  }

  private call(expr: Call): IrExpr {
    const spec = findFunction(expr.name);
    if (!spec) throw errorAt(`Unknown function ${quoteForMessage(expr.name)}`, expr.start);
    const star = expr.args.length === 1 && expr.args[0].kind === 'star';
    if (star && spec.name !== 'count') throw errorAt("'*' is only allowed in count(*)", expr.args[0].start);
    const arity = star ? 0 : expr.args.length;
    if (arity < spec.minArgs || arity > spec.maxArgs) {
      throw errorAt(`Function '${spec.name}' ${describeArity(spec)}, got ${arity}`, expr.start);
    }
    if (spec.windowOnly && !expr.over) throw errorAt(`Function '${spec.name}' needs an OVER (…) window`, expr.start);
    if (expr.over && !spec.windowOnly && !spec.aggregate) throw errorAt(`Function '${spec.name}' cannot be used over a window`, expr.start);
    if (expr.distinct && !spec.distinct) throw errorAt(`Function '${spec.name}' does not take DISTINCT`, expr.start);
    if (expr.params && !['quantile', 'quantiles'].includes(spec.name)) throw errorAt(`Function '${spec.name}' takes no parameters`, expr.start);
    if (expr.over) return this.window(expr, spec);
    if (spec.aggregate) {
      if (this.aggregate) {
        throw errorAt(`Aggregate function '${spec.name}' cannot be used inside aggregate function '${this.aggregate.name}'`, expr.start);
      }
      this.hasAggregate = true;
    }
    spec.check?.(expr);
    const outer = this.aggregate;
    if (spec.aggregate) this.aggregate = spec;
    try {
      const args = star ? [] : spec.lambda ? this.lambdaArguments(expr, spec) : expr.args.map((arg) => ({ ir: this.resolve(arg), at: arg.start }));
      const ir = spec.resolve(args, { timeZone: this.timeZone, now: this.ctx.now }, expr);
      return expr.distinct && ir.kind === 'call' ? { ...ir, distinct: true } : ir;
    } finally {
      this.aggregate = outer;
    }
  }

  private lambdaParam(name: string): IrLambdaArg | null {
    for (let i = this.lambdaScopes.length - 1; i >= 0; i--) {
      const param = this.lambdaScopes[i].get(name);
      if (param) return param;
    }
    return null;
  }

  /**
   * `arrayMap(x -> body, arr)`: the arrays first, then the lambda with each parameter typed as
   * its array's item. Parameters get generated names, so no user text reaches SQL.
   */
  private lambdaArguments(expr: Call, spec: FunctionSpec): Array<{ ir: IrExpr; at: number }> {
    const [fn, ...rest] = expr.args;
    if (fn.kind !== 'lambda') throw errorAt(`Function '${spec.name}' takes a lambda (x -> …) as its first argument`, fn.start);
    const arrays = rest.map((arg) => {
      const ir = this.resolve(arg);
      if (ir.type !== 'Array' && ir.type !== 'Null') throw errorAt(`Function '${spec.name}' needs an array, got ${ir.type}`, arg.start);
      return { ir, at: arg.start };
    });
    if (fn.params.length !== arrays.length) {
      throw errorAt(`The lambda of '${spec.name}' takes ${fn.params.length} parameters but is given ${arrays.length} arrays`, fn.start);
    }
    const params = new Map<string, IrLambdaArg>();
    fn.params.forEach((param, i) => {
      const item = (arrays[i].ir as { item?: HogQLType }).item ?? 'Any';
      params.set(param.name, { kind: 'lambdaArg', name: `x${this.lambdaCount++}`, type: item });
    });
    this.lambdaScopes.push(params);
    try {
      const body = this.resolve(fn.body);
      const lambda: IrExpr = { kind: 'lambda', params: [...params.values()].map((p) => p.name), body, type: body.type };
      return [{ ir: lambda, at: fn.start }, ...arrays];
    } finally {
      this.lambdaScopes.pop();
    }
  }

  /**
   * `f(x) OVER (PARTITION BY … ORDER BY …)`: computed per row after grouping, so it neither
   * makes the query aggregate nor may it sit inside an aggregate.
   */
  private window(expr: Call, spec: FunctionSpec): IrExpr {
    if (this.aggregate) throw errorAt(`Window function '${spec.name}' cannot be used inside aggregate function '${this.aggregate.name}'`, expr.start);
    const { over, ...plain } = expr;
    const hadAggregate = this.hasAggregate;
    spec.check?.(plain);
    const args = plain.args.length === 1 && plain.args[0].kind === 'star' ? [] : plain.args.map((arg) => ({ ir: this.resolve(arg), at: arg.start }));
    const resolved = spec.resolve(args, { timeZone: this.timeZone, now: this.ctx.now }, plain);
    if (resolved.kind !== 'call') throw errorAt(`Function '${spec.name}' cannot be used over a window`, expr.start);
    this.hasAggregate = hadAggregate;
    const partitionBy = over!.partitionBy.map((e) => this.resolve(e));
    const orderBy: IrOrder[] = over!.orderBy.map((o) => ({ expr: this.resolve(o.expr), desc: o.desc }));
    const window: IrWindow = { kind: 'window', call: expr.distinct ? { ...resolved, distinct: true } : resolved, partitionBy, orderBy, frame: null, type: resolved.type };
    return window;
  }

  private negate(inner: Expr): IrExpr {
    if (inner.kind === 'constant' && typeof inner.value === 'number') return literal(-inner.value, inner.integer);
    const value = this.resolve(inner);
    if (value.type === 'Integer') return op('neg', [value], 'Integer');
    return op('neg', [asFloat(value)], 'Float');
  }

  private arithmetic(operator: ArithmeticOp, leftExpr: Expr, rightExpr: Expr): IrExpr {
    const left = this.resolve(leftExpr);
    const right = this.resolve(rightExpr);
    const dated = operator === '+' || operator === '-' ? this.dateArithmetic(operator, left, right) : null;
    if (dated) return dated;
    // Integer arithmetic stays integral except `/`, which is always a float division in ClickHouse.
    if (left.type === 'Integer' && right.type === 'Integer' && operator !== '/') return op(operator, [left, right], 'Integer');
    return op(operator, [asFloat(left), asFloat(right)], 'Float');
  }

  /**
   * ClickHouse date arithmetic: Date ± n shifts by days, DateTime ± n by seconds, and the
   * difference of two dates is a number of days / seconds. Null for anything else.
   */
  private dateArithmetic(operator: '+' | '-', left: IrExpr, right: IrExpr): IrExpr | null {
    const interval = right.type === 'Interval' ? right : operator === '+' && left.type === 'Interval' ? left : null;
    if (interval) {
      const date = interval === right ? left : right;
      if (date.type === 'DateTime') return op(operator, [date, interval], 'DateTime');
      if (date.type === 'Date') {
        // A Date moved by whole days stays a Date, as in ClickHouse; by hours it becomes a DateTime.
        const unit = (interval as { unit: string }).unit;
        const moved = op(operator, [date, interval], 'DateTime');
        return ['second', 'minute', 'hour'].includes(unit) ? moved : cast(moved, 'Date');
      }
      throw errorAt(`Cannot add an interval to ${date.type}`, 0);
    }
    if (operator === '-' && left.type === right.type && isTemporal(left.type)) {
      const unit = left.type === 'Date' ? 'day' : 'second';
      return call('dateDiff', [constant(unit, 'String'), right, left, constant('UTC', 'String')], 'Integer');
    }
    const [date, amount] =
      isTemporal(left.type) && isNumeric(right.type) ? [left, right] : operator === '+' && isNumeric(left.type) && isTemporal(right.type) ? [right, left] : [null, null];
    if (!date || !amount) return null;
    const signed = operator === '-' ? (amount.kind === 'const' && typeof amount.value === 'number' ? constant(-amount.value, amount.type) : op('neg', [amount], amount.type)) : amount;
    if (date.type === 'Date') return call('addDays', [date, signed], 'Date');
    return call('addSeconds', [date, asFloat(signed)], 'DateTime');
  }

  private compare(expr: Compare): IrExpr {
    return this.comparison(expr.op, this.resolve(expr.left), this.resolve(expr.right), [expr.left.start, expr.right.start]);
  }

  private like(expr: Like): IrExpr {
    const left = asText(this.resolve(expr.left));
    const pattern = asText(this.resolve(expr.pattern));
    if (pattern.kind === 'const' && typeof pattern.value === 'string' && /(^|[^\\])(\\\\)*\\$/.test(pattern.value)) {
      throw errorAt('LIKE pattern must not end with an unescaped backslash', expr.pattern.start);
    }
    const name = expr.caseInsensitive ? (expr.negated ? 'notIlike' : 'ilike') : expr.negated ? 'notLike' : 'like';
    return op(name, [left, pattern]);
  }

  private in(expr: In): IrExpr {
    if (expr.list.length === 1 && expr.list[0].kind === 'subquery') {
      // The subquery's column type decides; the left side is brought to it.
      const sub = this.resolve(expr.list[0]);
      const left = this.resolve(expr.left);
      const [converted] = sub.type === left.type || sub.type === 'Null' ? [left] : unify([left, constant(null, sub.type)], [expr.left.start, expr.list[0].start], this.timeZone).exprs;
      return op(expr.negated ? 'notIn' : 'in', [converted, sub]);
    }
    return this.membership(
      this.resolve(expr.left),
      expr.list.map((item) => this.resolve(item)),
      expr.negated,
      [expr.left.start, ...expr.list.map((item) => item.start)],
    );
  }

  /** Converters for callers that build conditions around resolved expressions. */
  asDateTime(expr: IrExpr, at: number): IrExpr {
    return asDateTime(expr, at, this.timeZone);
  }

  asDate(expr: IrExpr, at: number): IrExpr {
    return asDate(expr, at, this.timeZone);
  }
}

export function literal(value: string | number | boolean | null, integer?: boolean): IrExpr {
  if (value === null) return constant(null, 'Null');
  if (typeof value === 'boolean') return constant(value, 'Boolean');
  if (typeof value === 'number') return constant(value, integer && Number.isSafeInteger(value) ? 'Integer' : 'Float');
  return constant(value, 'String');
}

function isNullLiteral(expr: IrExpr): boolean {
  return expr.kind === 'const' && expr.value === null;
}

/** `a.b['c']` → ['a', 'b', 'c']; only string keys may appear inside brackets. */
export function fieldNames(expr: Expr): string[] {
  if (expr.kind === 'field') return expr.chain.map((part) => part.name);
  if (expr.kind === 'index') {
    if (expr.index.kind !== 'constant' || typeof expr.index.value !== 'string') {
      throw errorAt('Only string keys are supported inside []', expr.index.start);
    }
    if (expr.target.kind !== 'field' && expr.target.kind !== 'index') throw errorAt('[] can only be applied to properties', expr.start);
    return [...fieldNames(expr.target), expr.index.value];
  }
  throw errorAt('[] can only be applied to properties', expr.start);
}

function describeArity({ minArgs, maxArgs }: FunctionSpec): string {
  const plural = (n: number) => (n === 1 ? 'argument' : 'arguments');
  if (minArgs === maxArgs) return `takes ${minArgs} ${plural(minArgs)}`;
  if (maxArgs === Infinity) return `takes at least ${minArgs} ${plural(minArgs)}`;
  return `takes ${minArgs} to ${maxArgs} arguments`;
}

export type { HogQLType };
