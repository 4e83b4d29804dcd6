/**
 * A printed SQL fragment with its HogQL type. Literals bind their parameter only when their
 * SQL is actually used, so a literal that a cast replaces never leaves an unused `$n`.
 */
import type { ConstantValue } from './ast.js';
import type { ParamSink } from './params.js';
import type { HogQLType } from './types.js';

export interface Operand {
  readonly sql: string;
  readonly type: HogQLType;
  /** Source offset, for errors raised while coercing. */
  readonly start: number;
  /** Set for literals: lets coercions convert the value in JS instead of in SQL. */
  readonly constant?: { value: ConstantValue };
}

export function computed(sql: string, type: HogQLType, start: number): Operand {
  return { sql, type, start };
}

export function literal(value: ConstantValue, params: ParamSink, start: number, integer = false): Operand {
  return new Literal(value, params, start, integer);
}

class Literal implements Operand {
  readonly type: HogQLType;
  readonly constant: { value: ConstantValue };
  private bound: string | null = null;

  constructor(
    value: ConstantValue,
    private readonly params: ParamSink,
    readonly start: number,
    integer: boolean,
  ) {
    this.constant = { value };
    this.type = literalType(value, integer);
  }

  get sql(): string {
    const { value } = this.constant;
    if (value === null) return 'NULL';
    // Typed casts keep DuckDB's overload resolution independent of how the driver binds JS values.
    // The driver binds integral JS numbers as BIGINT, which fails beyond 2^63; text always casts.
    const bindable = typeof value === 'number' && !Number.isSafeInteger(value) && Number.isInteger(value) ? String(value) : value;
    this.bound ??= `CAST(${this.params.add(bindable)} AS ${SQL_TYPE[this.type]})`;
    return this.bound;
  }
}

const SQL_TYPE: Partial<Record<HogQLType, string>> = {
  String: 'VARCHAR',
  Integer: 'BIGINT',
  Float: 'DOUBLE',
  Boolean: 'BOOLEAN',
};

function literalType(value: ConstantValue, integer: boolean): HogQLType {
  if (value === null) return 'Null';
  if (typeof value === 'boolean') return 'Boolean';
  if (typeof value === 'number') return integer && Number.isSafeInteger(value) ? 'Integer' : 'Float';
  return 'String';
}
