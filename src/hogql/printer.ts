/**
 * Validated AST → DuckDB SQL. Every literal and property key becomes a bound parameter via
 * the context's ParamSink; identifiers and function names come only from the whitelists in
 * fields.ts and functions.ts. Every compound expression is parenthesised.
 */
import type { Compare, Expr, In, Like, Logical } from './ast.js';
import { asBool, asDouble, asText, boolFromText, timestampFromText, unify } from './coerce.js';
import { errorAt, quoteForMessage } from './errors.js';
import { type PropertyRef, resolveField } from './fields.js';
import { findFunction } from './functions.js';
import { type Operand, computed, literal } from './operand.js';
import type { CompileContext } from './params.js';
import { isNumeric } from './types.js';

export { ParamSink } from './params.js';
export type { CompileContext, ParamValue, PropertyKind, PropertyValueType } from './params.js';

export class Printer {
  constructor(private readonly ctx: CompileContext) {}

  /** SQL plus best-effort type of an expression that validateExpr has accepted. */
  print(expr: Expr): Operand {
    switch (expr.kind) {
      case 'constant':
        return literal(expr.value, this.ctx.params, expr.start, expr.integer);
      case 'field':
      case 'index': {
        const ref = resolveField(expr);
        return ref.kind === 'column' ? computed(ref.sql, ref.type, expr.start) : this.property(ref, expr.start);
      }
      case 'star':
        throw errorAt("'*' is only allowed in count(*)", expr.start);
      case 'call':
        return this.call(expr);
      case 'negate':
        return this.negate(expr.expr, expr.start);
      case 'not':
        return computed(`(NOT ${asBool(this.print(expr.expr))})`, 'Boolean', expr.start);
      case 'arithmetic':
        return this.arithmetic(expr.op, this.print(expr.left), this.print(expr.right), expr.start);
      case 'compare':
        return this.compare(expr);
      case 'like':
        return this.like(expr);
      case 'in':
        return this.in(expr);
      case 'isNull':
        return computed(`(${this.print(expr.expr).sql} IS ${expr.negated ? 'NOT ' : ''}NULL)`, 'Boolean', expr.start);
      case 'and':
      case 'or':
        return this.logical(expr);
    }
  }

  /** The expression as a boolean condition (for WHERE / HAVING). */
  condition(expr: Expr): string {
    return asBool(this.print(expr));
  }

  /** A property read, typed by its declared definition (Numeric → DOUBLE, and so on). */
  property(ref: PropertyRef, start: number): Operand {
    const text = this.propertyText(ref, start);
    // Declared types only describe top-level keys.
    const declared = ref.path.length === 1 ? this.ctx.propertyType(ref.source, ref.path[0]) : null;
    switch (declared) {
      case 'Numeric':
        return computed(`TRY_CAST(${text.sql} AS DOUBLE)`, 'Float', start);
      case 'Boolean':
        return computed(boolFromText(text.sql), 'Boolean', start);
      case 'DateTime':
        return computed(timestampFromText(text.sql), 'DateTime', start);
      default:
        return text;
    }
  }

  /** The property's raw text (NULL when missing or JSON null); the key path is a bound JSON pointer. */
  propertyText(ref: PropertyRef, start: number): Operand {
    const column = ref.source === 'person' ? 'p.properties' : 'e.properties';
    const pointer = `/${ref.path.map(escapePointerSegment).join('/')}`;
    return computed(`json_extract_string(${column}, ${this.ctx.params.add(pointer)})`, 'String', start);
  }

  /** `a <op> b` with both sides brought to one type; `= NULL` means IS NULL, as in HogQL. */
  comparison(op: Compare['op'], left: Operand, right: Operand, start: number): Operand {
    const nullSide = isNullLiteral(left) ? right : isNullLiteral(right) ? left : null;
    if (nullSide) {
      if (op === '=') return computed(`(${nullSide.sql} IS NULL)`, 'Boolean', start);
      if (op === '!=') return computed(`(${nullSide.sql} IS NOT NULL)`, 'Boolean', start);
      return computed('CAST(NULL AS BOOLEAN)', 'Boolean', start);
    }
    const { sql } = unify([left, right], this.ctx.params);
    return computed(`(${sql[0]} ${op === '!=' ? '<>' : op} ${sql[1]})`, 'Boolean', start);
  }

  membership(left: Operand, list: Operand[], negated: boolean, start: number): Operand {
    const { sql } = unify([left, ...list], this.ctx.params);
    const [head, ...items] = sql;
    return computed(`(${head} ${negated ? 'NOT IN' : 'IN'} (${items.join(', ')}))`, 'Boolean', start);
  }

  private call(expr: Extract<Expr, { kind: 'call' }>): Operand {
    const spec = findFunction(expr.name);
    if (!spec) throw errorAt(`Unknown function ${quoteForMessage(expr.name)}`, expr.start);
    const args = expr.args.filter((arg) => arg.kind !== 'star').map((arg) => this.print(arg));
    return spec.print(args, { params: this.ctx.params, now: this.ctx.now }, expr);
  }

  private negate(inner: Expr, start: number): Operand {
    if (inner.kind === 'constant' && typeof inner.value === 'number') {
      return literal(-inner.value, this.ctx.params, start, inner.integer);
    }
    const value = this.print(inner);
    // TRY: BIGINT overflow becomes NULL instead of failing the whole query.
    if (value.type === 'Integer') return computed(`TRY(- ${value.sql})`, 'Integer', start);
    return computed(`(- ${asDouble(value)})`, 'Float', start);
  }

  private arithmetic(op: string, left: Operand, right: Operand, start: number): Operand {
    const dated = op === '+' || op === '-' ? dateArithmetic(op, left, right, start) : null;
    if (dated) return dated;
    // Integer arithmetic stays integral except `/`, which is always a float division in ClickHouse.
    if (left.type === 'Integer' && right.type === 'Integer' && op !== '/') {
      return computed(`TRY(${left.sql} ${op} ${right.sql})`, 'Integer', start);
    }
    return computed(`(${asDouble(left)} ${op} ${asDouble(right)})`, 'Float', start);
  }

  private compare(expr: Compare): Operand {
    return this.comparison(expr.op, this.print(expr.left), this.print(expr.right), expr.start);
  }

  private like(expr: Like): Operand {
    const operator = `${expr.negated ? 'NOT ' : ''}${expr.caseInsensitive ? 'ILIKE' : 'LIKE'}`;
    const left = asText(this.print(expr.left));
    const pattern = this.print(expr.pattern);
    // Backslash escapes % and _ in ClickHouse patterns; DuckDB needs to be told, and refuses
    // a pattern that ends in a lone escape: reject that up front, or let TRY turn it into NULL.
    const sql = `(${left} ${operator} ${asText(pattern)} ESCAPE '\\')`;
    if (pattern.constant && typeof pattern.constant.value === 'string') {
      if (/(^|[^\\])(\\\\)*\\$/.test(pattern.constant.value)) {
        throw errorAt('LIKE pattern must not end with an unescaped backslash', expr.pattern.start);
      }
      return computed(sql, 'Boolean', expr.start);
    }
    return computed(`TRY${sql}`, 'Boolean', expr.start);
  }

  private in(expr: In): Operand {
    return this.membership(this.print(expr.left), expr.list.map((item) => this.print(item)), expr.negated, expr.start);
  }

  private logical(expr: Logical): Operand {
    const joiner = expr.kind === 'and' ? ' AND ' : ' OR ';
    return computed(`(${expr.exprs.map((item) => this.condition(item)).join(joiner)})`, 'Boolean', expr.start);
  }
}

/**
 * ClickHouse date arithmetic: Date ± n shifts by days, DateTime ± n by seconds, and the
 * difference of two dates is a number of days / seconds. Null for anything else.
 */
function dateArithmetic(op: '+' | '-', left: Operand, right: Operand, start: number): Operand | null {
  const isDate = (type: string) => type === 'Date' || type === 'DateTime';
  if (op === '-' && left.type === right.type && isDate(left.type)) {
    const unit = left.type === 'Date' ? 'day' : 'second';
    return computed(`date_diff('${unit}', ${right.sql}, ${left.sql})`, 'Integer', start);
  }
  const [date, amount] = isDate(left.type) && isNumeric(right.type) ? [left, right]
    : op === '+' && isNumeric(left.type) && isDate(right.type) ? [right, left]
    : [null, null];
  if (!date || !amount) return null;
  // TRY: a shift out of the representable range becomes NULL.
  return date.type === 'Date'
    ? computed(`TRY(${date.sql} ${op} TRY_CAST(${amount.sql} AS INTEGER))`, 'Date', start)
    : computed(`TRY(${date.sql} ${op} to_seconds(${asDouble(amount)}))`, 'DateTime', start);
}

/** RFC 6901: `~` → `~0`, `/` → `~1`. Works for every key, including empty and `$`-prefixed ones. */
export function escapePointerSegment(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

function isNullLiteral(op: Operand): boolean {
  return op.constant !== undefined && op.constant.value === null;
}
