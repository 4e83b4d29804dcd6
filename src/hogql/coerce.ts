/**
 * Conversions between HogQL types, decided here and printed by a dialect. Values that do not
 * convert become NULL (a cast node), never a query error; constants convert in JS, so a bad
 * date literal is a HogQLError at its position.
 */
import { errorAt, quoteForMessage } from './errors.js';
import { parseLiteral, timestampText } from './dates.js';
import { type IrExpr, call, cast as castNode, constant, op } from './ir.js';
import { type HogQLType, isNumeric } from './types.js';

const cast = (expr: IrExpr, type: HogQLType): IrExpr => castNode(expr, type);

export function asFloat(expr: IrExpr): IrExpr {
  if (isNumeric(expr.type)) return expr;
  return cast(expr, 'Float');
}

/** Integers stay integers; anything else converts to a float. */
export function asNumber(expr: IrExpr): IrExpr {
  return expr.type === 'Integer' ? expr : asFloat(expr);
}

export function asBool(expr: IrExpr, at: number): IrExpr {
  switch (expr.type) {
    case 'Boolean':
      return expr;
    case 'Null':
    case 'String':
    case 'Any':
      return cast(expr, 'Boolean');
    case 'Integer':
    case 'Float':
      return op('!=', [expr, constant(0, expr.type)]);
    default:
      throw errorAt(`Expected a boolean expression, got ${expr.type}`, at);
  }
}

export function asText(expr: IrExpr): IrExpr {
  return expr.type === 'String' ? expr : cast(expr, 'String');
}

/** A DateTime; text constants are parsed now (naive ones in `timeZone`). */
export function asDateTime(expr: IrExpr, at: number, timeZone: string): IrExpr {
  switch (expr.type) {
    case 'DateTime':
      return expr;
    case 'Date':
      return call('toDateTime', [expr, constant(timeZone, 'String')], 'DateTime');
    case 'Null':
    case 'Integer':
    case 'Float':
    case 'Any':
      return cast(expr, 'DateTime');
    case 'String': {
      if (expr.kind === 'const' && typeof expr.value === 'string') {
        const parsed = parseLiteral(expr.value, timeZone);
        if (!parsed) throw errorAt(`Cannot parse ${quoteForMessage(expr.value)} as a DateTime`, at);
        return constant(timestampText(new Date(parsed.ms), parsed.micros), 'DateTime');
      }
      return cast(expr, 'DateTime');
    }
    default:
      throw errorAt(`Cannot convert ${expr.type} to DateTime`, at);
  }
}

/** A Date: the calendar date in `timeZone` of a DateTime. */
export function asDate(expr: IrExpr, at: number, timeZone: string): IrExpr {
  if (expr.type === 'Date') return expr;
  if (expr.type === 'String' && expr.kind === 'const' && typeof expr.value === 'string') {
    const parsed = parseLiteral(expr.value, timeZone);
    if (!parsed) throw errorAt(`Cannot parse ${quoteForMessage(expr.value)} as a DateTime`, at);
    // A date written alone is that date; a time with an offset is its date where the project is.
    const text = parsed.dateOnly ? expr.value.trim() : localDateText(parsed.ms, timeZone);
    return constant(parsed.dateOnly ? normaliseDate(text) : text, 'Date');
  }
  if (expr.type === 'Null') return cast(expr, 'Date');
  return call('toDate', [asDateTime(expr, at, timeZone), constant(timeZone, 'String')], 'Date');
}

function normaliseDate(text: string): string {
  const [y, m, d] = text.split('-');
  return `${y}-${m.padStart(2, '0')}-${d.padStart(2, '0')}`;
}

/** `YYYY-MM-DD` of an instant in a time zone. */
export function localDateText(ms: number, timeZone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date(ms));
}

/**
 * Brings the operands of a comparison, IN list, coalesce or if() to one type, the way a reader
 * expects: dates beat text, booleans beat text, numbers beat text (so an untyped property
 * compared with a number compares numerically).
 */
export function unify(operands: IrExpr[], positions: number[], timeZone: string): { exprs: IrExpr[]; type: HogQLType } {
  const types = new Set(operands.map((e) => e.type).filter((type) => type !== 'Null'));
  if (types.size === 0) return { exprs: operands, type: 'Null' };
  if (types.size === 1) return { exprs: operands, type: [...types][0] };
  if (types.has('DateTime')) return { exprs: operands.map((e, i) => asDateTime(e, positions[i], timeZone)), type: 'DateTime' };
  if (types.has('Date')) return { exprs: operands.map((e, i) => asDate(e, positions[i], timeZone)), type: 'Date' };
  if (types.has('Boolean')) return { exprs: operands.map((e, i) => asBool(e, positions[i])), type: 'Boolean' };
  if ([...types].every(isNumeric)) return { exprs: operands.map(asFloat), type: 'Float' };
  if (types.has('Integer') || types.has('Float')) return { exprs: operands.map(asFloat), type: 'Float' };
  if (types.has('UUID')) {
    // UUIDs print lower-case; compare as text so a malformed string is simply unequal.
    return { exprs: operands.map((e) => (e.type === 'UUID' ? asText(e) : call('lower', [asText(e)], 'String'))), type: 'String' };
  }
  if (types.has('Array') || types.has('Tuple')) return { exprs: operands, type: [...types].includes('Array') ? 'Array' : 'Tuple' };
  return { exprs: operands.map(asText), type: 'String' };
}
