/**
 * The events API `properties` parameter: a list of `{key, value, operator, type}` filters
 * (ANDed), or a group `{type: "AND"|"OR", values: [...]}`, nested. Semantics follow HogQL's
 * property filters: negative operators (`is_not`, `not_icontains`, `not_regex`) also match
 * events where the property is missing.
 */
import { HogQLError, quoteForMessage } from './errors.js';
import { parseDateLiteral, toSqlTimestamp } from './dates.js';
import { asText, timestampFromText } from './coerce.js';
import type { PropertyRef } from './fields.js';
import { type Operand, literal } from './operand.js';
import { parseExpression } from './parser.js';
import type { CompileContext, PropertyKind } from './params.js';
import { Printer } from './printer.js';
import { re2SyntaxError } from './re2.js';
import { validateExpr } from './validate.js';
import { parseFilterDate } from '../util/relative-date.js';

const ATTR = 'properties';
const MAX_GROUP_DEPTH = 10;
const MAX_FILTERS = 500;
const MAX_KEY_LENGTH = 1_000;

type Scalar = string | number | boolean;

export function compilePropertyFilters(json: unknown, ctx: CompileContext): { sql: string; needsPerson: boolean } {
  const compiler = new FilterCompiler(ctx);
  const sql = compiler.node(typeof json === 'string' ? parseJson(json) : json, 0);
  return { sql, needsPerson: compiler.needsPerson };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw invalid('properties must be valid JSON');
  }
}

function invalid(message: string): HogQLError {
  return new HogQLError(message, null, ATTR);
}

class FilterCompiler {
  needsPerson = false;
  private count = 0;
  private readonly printer: Printer;

  constructor(private readonly ctx: CompileContext) {
    this.printer = new Printer(ctx);
  }

  node(value: unknown, depth: number): string {
    if (value === undefined || value === null) return 'TRUE';
    if (depth > MAX_GROUP_DEPTH) throw invalid(`Property groups are nested too deeply (limit ${MAX_GROUP_DEPTH})`);
    if (Array.isArray(value)) return this.combine('AND', value, depth);
    if (typeof value !== 'object') throw invalid('Property filters must be a list or a property group object');
    const record = value as Record<string, unknown>;
    if ((record.type === 'AND' || record.type === 'OR') && 'values' in record) {
      if (!Array.isArray(record.values)) throw invalid('Property group values must be a list');
      return this.combine(record.type, record.values, depth);
    }
    return this.filter(record);
  }

  private combine(joiner: 'AND' | 'OR', items: unknown[], depth: number): string {
    const parts = items.map((item) => this.node(item, depth + 1));
    if (parts.length === 0) return 'TRUE';
    return parts.length === 1 ? parts[0] : `(${parts.join(` ${joiner} `)})`;
  }

  private filter(filter: Record<string, unknown>): string {
    if (++this.count > MAX_FILTERS) throw invalid(`Too many property filters (limit ${MAX_FILTERS})`);
    const type = filter.type ?? 'event';
    if (type === 'hogql') return this.hogql(filter.key);
    if (type !== 'event' && type !== 'person') {
      throw invalid(`Property filter type ${quoteForMessage(String(type))} is not supported (use event, person or hogql)`);
    }
    const key = filter.key;
    if (typeof key !== 'string' || key === '') throw invalid('Property filter key must be a non-empty string');
    if (key.length > MAX_KEY_LENGTH) throw invalid(`Property filter key is too long (limit ${MAX_KEY_LENGTH})`);
    if (type === 'person') this.needsPerson = true;
    const operator = filter.operator ?? 'exact';
    if (typeof operator !== 'string') throw invalid('Property filter operator must be a string');
    const ref: PropertyRef = { kind: 'property', source: type as PropertyKind, path: [key] };
    return this.operator(operator, ref, filter.value);
  }

  private hogql(key: unknown): string {
    if (typeof key !== 'string') throw invalid('HogQL property filter key must be an expression string');
    try {
      const expr = parseExpression(key);
      const info = validateExpr(expr);
      if (info.hasAggregate) throw invalid('HogQL property filters cannot use aggregate functions');
      this.needsPerson ||= info.needsPerson;
      return this.printer.condition(expr);
    } catch (error) {
      if (error instanceof HogQLError) throw error.withSource(ATTR);
      throw error;
    }
  }

  private operator(operator: string, ref: PropertyRef, value: unknown): string {
    const property = () => this.printer.property(ref, 0);
    const text = () => this.printer.propertyText(ref, 0);
    switch (operator) {
      case 'exact':
        return this.equality(property(), scalarList(value, ref), false);
      case 'is_not':
        return orMissing(this.equality(property(), scalarList(value, ref), true));
      case 'icontains':
        return this.contains(text(), scalar(value, ref));
      case 'not_icontains':
        return orMissing(`(NOT ${this.contains(text(), scalar(value, ref))})`);
      case 'regex':
        return this.regex(text(), scalar(value, ref));
      case 'not_regex':
        return orMissing(`(NOT ${this.regex(text(), scalar(value, ref))})`);
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte':
        return this.range(operator, ref, property(), scalar(value, ref));
      case 'is_set':
        return `(${text().sql} IS NOT NULL)`;
      case 'is_not_set':
        return `(${text().sql} IS NULL)`;
      case 'is_date_before':
      case 'is_date_after':
        return this.dateBound(operator === 'is_date_before' ? '<' : '>', text(), value, ref);
      default:
        throw invalid(`Property filter operator ${quoteForMessage(operator)} is not supported`);
    }
  }

  private equality(property: Operand, values: Scalar[], negated: boolean): string {
    const literals = values.map((item) => this.literal(item));
    if (literals.length === 1) return this.printer.comparison(negated ? '!=' : '=', property, literals[0], 0).sql;
    return this.printer.membership(property, literals, negated, 0).sql;
  }

  private contains(text: Operand, value: Scalar): string {
    // strpos rather than ILIKE so % and _ in the value stay literal.
    return `contains(lower(${asText(text)}), lower(CAST(${this.ctx.params.add(String(value))} AS VARCHAR)))`;
  }

  private regex(text: Operand, value: Scalar): string {
    const pattern = String(value);
    const problem = re2SyntaxError(pattern);
    if (problem) throw invalid(`Invalid regular expression ${quoteForMessage(pattern)}: ${problem}`);
    return `regexp_matches(${asText(text)}, CAST(${this.ctx.params.add(pattern)} AS VARCHAR))`;
  }

  /** Numbers (or numeric strings) compare numerically; other values as dates or text. */
  private range(operator: string, ref: PropertyRef, property: Operand, value: Scalar): string {
    const op = ({ gt: '>', gte: '>=', lt: '<', lte: '<=' } as const)[operator as 'gt' | 'gte' | 'lt' | 'lte'];
    const numeric = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
    if (Number.isFinite(numeric)) {
      return this.printer.comparison(op, property, literal(numeric, this.ctx.params, 0, false), 0).sql;
    }
    if (property.type === 'DateTime' && (typeof value !== 'string' || !parseDateLiteral(value))) {
      throw invalid(`Property filter value for ${quoteForMessage(ref.path[0])} must be a number or a date`);
    }
    return this.printer.comparison(op, property, this.literal(value), 0).sql;
  }

  private dateBound(op: '<' | '>', text: Operand, value: unknown, ref: PropertyRef): string {
    const date = parseFilterDate(value, this.ctx.now);
    if (!date) throw invalid(`Property filter value for ${quoteForMessage(ref.path[0])} must be a date or a relative date like -7d`);
    const bound = `CAST(${this.ctx.params.add(toSqlTimestamp(date))} AS TIMESTAMP)`;
    return `(${timestampFromText(text.sql)} ${op} ${bound})`;
  }

  private literal(value: Scalar): Operand {
    return literal(value, this.ctx.params, 0, typeof value === 'number' && Number.isSafeInteger(value));
  }
}

/** HogQL semantics for negative operators: a missing property counts as a match. */
function orMissing(sql: string): string {
  return `COALESCE(${sql}, TRUE)`;
}

function scalar(value: unknown, ref: PropertyRef): Scalar {
  if (Array.isArray(value) && value.length === 1) return scalar(value[0], ref);
  if (typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) {
    return value;
  }
  throw invalid(`Property filter value for ${quoteForMessage(ref.path[0])} must be a string, number or boolean`);
}

function scalarList(value: unknown, ref: PropertyRef): Scalar[] {
  if (!Array.isArray(value)) return [scalar(value, ref)];
  if (value.length === 0) throw invalid(`Property filter value for ${quoteForMessage(ref.path[0])} must not be an empty list`);
  return value.map((item) => scalar(item, ref));
}
