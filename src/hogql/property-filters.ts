/**
 * PostHog's property filters — a list of `{key, value, operator, type}` (ANDed) or a group
 * `{type: "AND"|"OR", values: [...]}`, nested — as one IR condition. Negative operators
 * (`is_not`, `not_icontains`, `not_regex`) also match rows where the property is missing, as in
 * HogQL. Used by the events API and by every insight.
 *
 * A filter type resolves through `FilterSources`: event and person properties are there for any
 * caller; group properties and cohorts are added by callers that can read them (a cohort is one
 * more `cohort(id)` source returning a condition, and this file stays as it is).
 */
import { HogQLError, quoteForMessage } from './errors.js';
import { parseLiteral, timestampText } from './dates.js';
import { asText } from './coerce.js';
import { type IrExpr, TRUE, allOf, anyOf, call, constant, op } from './ir.js';
import { parseExpression } from './parser.js';
import type { ExprResolver } from './resolver.js';
import { literal } from './resolver.js';
import { re2SyntaxError } from './re2.js';
import { anyElement, hasElementValue, selectorCondition } from './elements.js';
import { parseFilterDate } from '../util/relative-date.js';

const MAX_GROUP_DEPTH = 10;
const MAX_FILTERS = 500;
const MAX_KEY_LENGTH = 1_000;

type Scalar = string | number | boolean;

/** Where a filter's property is read: typed (declared type applied) or as raw text. */
export interface PropertyReader {
  typed: IrExpr;
  text: IrExpr;
}

export interface FilterSources {
  /** Resolves HogQL conditions (`type: hogql`) and types comparisons. */
  resolver: ExprResolver;
  event(key: string): PropertyReader;
  person(key: string): PropertyReader;
  /** Group properties of the event's group of that type index; absent where groups cannot be read. */
  group?: (key: string, groupTypeIndex: number) => PropertyReader;
  /** Membership of a cohort; absent until cohorts exist. */
  cohort?: (id: number, negated: boolean) => IrExpr;
  /** The event's `elements_chain`, for `element` filters; absent where there are no events. */
  elementsChain?: IrExpr;
}

export function compilePropertyFilters(json: unknown, sources: FilterSources, attr = 'properties'): IrExpr | null {
  return new FilterCompiler(sources, attr).node(typeof json === 'string' ? parseJson(json, attr) : json, 0);
}

function parseJson(text: string, attr: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new HogQLError(`${attr} must be valid JSON holding a list of property filters, e.g. [{"key": "plan", "value": "pro"}]`, null, attr);
  }
}

class FilterCompiler {
  private count = 0;

  constructor(
    private readonly sources: FilterSources,
    private readonly attr: string,
  ) {}

  private invalid(message: string): HogQLError {
    return new HogQLError(message, null, this.attr);
  }

  node(value: unknown, depth: number): IrExpr | null {
    if (value === undefined || value === null) return null;
    if (depth > MAX_GROUP_DEPTH) throw this.invalid(`Property groups are nested too deeply (limit ${MAX_GROUP_DEPTH})`);
    if (Array.isArray(value)) return this.combine('AND', value, depth);
    if (typeof value !== 'object') throw this.invalid('Property filters must be a list or a property group object');
    const record = value as Record<string, unknown>;
    if ((record.type === 'AND' || record.type === 'OR') && 'values' in record) {
      if (!Array.isArray(record.values)) throw this.invalid('Property group values must be a list');
      return this.combine(record.type, record.values, depth);
    }
    return this.filter(record);
  }

  private combine(joiner: 'AND' | 'OR', items: unknown[], depth: number): IrExpr | null {
    const parts = items.map((item) => this.node(item, depth + 1) ?? TRUE);
    if (parts.length === 0) return null;
    return joiner === 'AND' ? allOf(parts) : anyOf(parts);
  }

  private filter(filter: Record<string, unknown>): IrExpr {
    if (++this.count > MAX_FILTERS) throw this.invalid(`Too many property filters (limit ${MAX_FILTERS})`);
    const type = filter.type ?? 'event';
    if (type === 'hogql') return this.hogql(filter.key);
    if (type === 'cohort' && this.sources.cohort) return this.cohort(filter);
    if (type === 'element' && this.sources.elementsChain) return this.element(filter, this.sources.elementsChain);
    const key = filter.key;
    const supported = ['event', 'person', ...(this.sources.group ? ['group'] : []), ...(this.sources.elementsChain ? ['element'] : [])];
    if (typeof type !== 'string' || !supported.includes(type)) {
      throw this.invalid(`Property filter type ${quoteForMessage(String(type))} is not supported (use ${supported.join(', ')} or hogql)`);
    }
    if (typeof key !== 'string' || key === '') throw this.invalid('Property filter key must be a non-empty string');
    if (key.length > MAX_KEY_LENGTH) throw this.invalid(`Property filter key is too long (limit ${MAX_KEY_LENGTH})`);
    const operator = filter.operator ?? 'exact';
    if (typeof operator !== 'string') throw this.invalid('Property filter operator must be a string');
    let reader: PropertyReader;
    if (type === 'group') {
      const index = filter.group_type_index;
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index > 4) {
        throw this.invalid('Group property filters need a group_type_index from 0 to 4');
      }
      reader = this.sources.group!(key, index);
    } else {
      reader = type === 'person' ? this.sources.person(key) : this.sources.event(key);
    }
    return this.operator(operator, key, reader, filter.value);
  }

  private cohort(filter: Record<string, unknown>): IrExpr {
    const id = typeof filter.value === 'string' && /^\d+$/.test(filter.value) ? Number(filter.value) : filter.value;
    if (typeof id !== 'number' || !Number.isSafeInteger(id)) throw this.invalid('Cohort filters need a cohort id as value');
    return this.sources.cohort!(id, filter.operator === 'not_in');
  }

  /**
   * `{type: "element", key: "text"|"href"|"tag_name"|"selector"}`: some element of the
   * autocapture chain matches. A negative operator holds when no element matches the positive one.
   */
  private element(filter: Record<string, unknown>, chain: IrExpr): IrExpr {
    const key = filter.key;
    const operator = filter.operator ?? 'exact';
    if (key === 'selector') {
      if (operator !== 'exact' && operator !== 'is_not') throw this.invalid('Selector filters take the operator exact or is_not');
      const selectors = this.scalarList(filter.value, key).map((value) => this.withAttr(() => selectorCondition(chain, String(value))));
      const matched = anyOf(selectors);
      return operator === 'exact' ? matched : op('not', [matched]);
    }
    if (key !== 'text' && key !== 'href' && key !== 'tag_name') throw this.invalid('Element filter key must be text, href, tag_name or selector');
    if (typeof operator !== 'string') throw this.invalid('Property filter operator must be a string');
    if (operator === 'is_set') return hasElementValue(chain, key);
    if (operator === 'is_not_set') return op('not', [hasElementValue(chain, key)]);
    const positive = NEGATED[operator] ?? operator;
    if (!['exact', 'icontains', 'regex'].includes(positive)) throw this.invalid(`Element filters do not take the operator ${quoteForMessage(operator)}`);
    const matched = anyElement(chain, key, (value) => this.operator(positive, key, { typed: value, text: value }, filter.value));
    return positive === operator ? matched : op('not', [matched]);
  }

  private withAttr<T>(run: () => T): T {
    try {
      return run();
    } catch (error) {
      if (error instanceof HogQLError && error.attr === null) throw error.withSource(this.attr);
      throw error;
    }
  }

  private hogql(key: unknown): IrExpr {
    if (typeof key !== 'string') throw this.invalid('HogQL property filter key must be an expression string');
    try {
      const expr = parseExpression(key);
      const resolver = this.sources.resolver;
      const before = resolver.hasAggregate;
      resolver.hasAggregate = false;
      const condition = resolver.condition(expr);
      const aggregates = resolver.hasAggregate;
      resolver.hasAggregate = before;
      if (aggregates) throw this.invalid('HogQL property filters cannot use aggregate functions');
      return condition;
    } catch (error) {
      if (error instanceof HogQLError && error.attr === null) throw error.withSource(this.attr);
      throw error;
    }
  }

  private operator(operator: string, key: string, reader: PropertyReader, value: unknown): IrExpr {
    switch (operator) {
      case 'exact':
        return this.equality(reader.typed, this.scalarList(value, key), false);
      case 'is_not':
        return orMissing(this.equality(reader.typed, this.scalarList(value, key), true));
      case 'icontains':
        return this.contains(reader.text, this.scalar(value, key));
      case 'not_icontains':
        return orMissing(op('not', [this.contains(reader.text, this.scalar(value, key))]));
      case 'regex':
        return this.regex(reader.text, this.scalar(value, key));
      case 'not_regex':
        return orMissing(op('not', [this.regex(reader.text, this.scalar(value, key))]));
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte':
        return this.range(operator, key, reader.typed, this.scalar(value, key));
      case 'is_set':
        return op('isNotNull', [reader.text]);
      case 'is_not_set':
        return op('isNull', [reader.text]);
      case 'is_date_before':
      case 'is_date_after':
      case 'is_date_exact':
        return this.dateBound(operator, reader.text, value, key);
      default:
        throw this.invalid(`Property filter operator ${quoteForMessage(operator)} is not supported`);
    }
  }

  private equality(property: IrExpr, values: Scalar[], negated: boolean): IrExpr {
    const resolver = this.sources.resolver;
    const literals = values.map((item) => literal(item, typeof item === 'number' && Number.isSafeInteger(item)));
    if (literals.length === 1) return resolver.comparison(negated ? '!=' : '=', property, literals[0], [0, 0]);
    return resolver.membership(property, literals, negated, literals.map(() => 0).concat(0));
  }

  /** Case-insensitive substring; `%` and `_` in the value stay literal. */
  private contains(text: IrExpr, value: Scalar): IrExpr {
    return call('__icontains', [asText(text), constant(String(value), 'String')], 'Boolean');
  }

  private regex(text: IrExpr, value: Scalar): IrExpr {
    const pattern = String(value);
    const problem = re2SyntaxError(pattern);
    if (problem) throw this.invalid(`Invalid regular expression ${quoteForMessage(pattern)}: ${problem}`);
    return call('match', [asText(text), constant(pattern, 'String')], 'Boolean');
  }

  /** Numbers (or numeric strings) compare numerically; other values as dates or text. */
  private range(operator: string, key: string, property: IrExpr, value: Scalar): IrExpr {
    const resolver = this.sources.resolver;
    const cmp = ({ gt: '>', gte: '>=', lt: '<', lte: '<=' } as const)[operator as 'gt' | 'gte' | 'lt' | 'lte'];
    const numeric = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
    if (Number.isFinite(numeric)) return resolver.comparison(cmp, property, constant(numeric, 'Float'), [0, 0]);
    if (property.type === 'DateTime' && (typeof value !== 'string' || !parseLiteral(value))) {
      throw this.invalid(`Property filter value for ${quoteForMessage(key)} must be a number or a date`);
    }
    return resolver.comparison(cmp, property, literal(value), [0, 0]);
  }

  private dateBound(operator: string, text: IrExpr, value: unknown, key: string): IrExpr {
    const resolver = this.sources.resolver;
    const date = parseFilterDate(value, resolver.ctx.now);
    if (!date) throw this.invalid(`Property filter value for ${quoteForMessage(key)} must be a date or a relative date like -7d`);
    const stamp = { kind: 'cast', expr: asText(text), type: 'DateTime' } as const;
    if (operator === 'is_date_exact') {
      // The same calendar day in the project's time zone.
      const day = resolver.asDate(constant(timestampText(date), 'DateTime'), 0);
      return op('=', [resolver.asDate(stamp, 0), day]);
    }
    return op(operator === 'is_date_before' ? '<' : '>', [stamp, constant(timestampText(date), 'DateTime')]);
  }

  private scalar(value: unknown, key: string): Scalar {
    if (Array.isArray(value) && value.length === 1) return this.scalar(value[0], key);
    if (typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) return value;
    throw this.invalid(`Property filter value for ${quoteForMessage(key)} must be a string, number or boolean`);
  }

  private scalarList(value: unknown, key: string): Scalar[] {
    if (!Array.isArray(value)) return [this.scalar(value, key)];
    if (value.length === 0) throw this.invalid(`Property filter value for ${quoteForMessage(key)} must not be an empty list`);
    return value.map((item) => this.scalar(item, key));
  }
}

/** The positive operator of each negative one. */
const NEGATED: Record<string, string> = { is_not: 'exact', not_icontains: 'icontains', not_regex: 'regex' };

/** HogQL semantics for negative operators: a missing property counts as a match. */
function orMissing(condition: IrExpr): IrExpr {
  return call('coalesce', [condition, TRUE], 'Boolean');
}
