/**
 * A path's item, as PostHog's PathsQuery makes it: the raw item (a pageview's URL, a screen's
 * name, else the event name or the `pathsHogQLExpression`), rewritten by each
 * `localPathCleaningFilters` rule in order (`replaceRegexpAll`), then replaced by the first
 * `pathGroupings` pattern it contains (`*` any text). User patterns run only in the engine's RE2
 * (linear time) after re2SyntaxError accepted them; nothing here runs them in V8.
 */
import { escapeRegex, ir, re2SyntaxError, type EventsScope } from '../../hogql/index.js';
import { validationError } from '../../kernel/errors.js';
import { hogqlValueText } from '../events-scope.js';
import { type Obj, isObject } from '../node-fields.js';

type Expr = ir.IrExpr;

export type PathEventType = '$pageview' | '$screen' | 'custom_event' | 'hogql';

export interface PathCleaning {
  regex: string;
  alias: string;
}

export interface PathItemRules {
  includeEventTypes: PathEventType[];
  /** Wildcard patterns (`/product/*`), each with its RE2 form. */
  pathGroupings: Array<{ pattern: string; regex: string }>;
  localPathCleaningFilters: PathCleaning[];
  pathsHogQLExpression: string | null;
}

const MAX_RULES = 100;
const MAX_TEXT = 2000;
const TYPES: readonly PathEventType[] = ['$pageview', '$screen', 'custom_event', 'hogql'];

export function parsePathItemRules(raw: Obj): PathItemRules {
  const types = list(raw.includeEventTypes, 'pathsFilter.includeEventTypes');
  types.forEach((t, i) => {
    if (!TYPES.includes(t as PathEventType)) throw validationError('pathsFilter.includeEventTypes items must be $pageview, $screen, custom_event or hogql.', `pathsFilter.includeEventTypes.${i}`, 'invalid_choice');
  });
  const pathGroupings = list(raw.pathGroupings, 'pathsFilter.pathGroupings').map((pattern, i) => {
    const attr = `pathsFilter.pathGroupings.${i}`;
    if (typeof pattern !== 'string' || pattern === '' || pattern.length > MAX_TEXT) throw validationError(`${attr} must be a non-empty pattern such as "/product/*".`, attr);
    // `(?s)`: `*` spans line breaks too, in every engine.
    const regex = `(?s)${pattern.split('*').map(escapeRegex).join('.*')}`;
    const problem = re2SyntaxError(regex);
    if (problem) throw validationError(`${attr} cannot be matched: ${problem}.`, attr);
    return { pattern, regex };
  });
  const localPathCleaningFilters = list(raw.localPathCleaningFilters, 'pathsFilter.localPathCleaningFilters').map((rule, i) => parseCleaning(rule, `pathsFilter.localPathCleaningFilters.${i}`));
  const expression = raw.pathsHogQLExpression;
  if (expression !== undefined && expression !== null && (typeof expression !== 'string' || expression.length > MAX_TEXT)) {
    throw validationError('pathsFilter.pathsHogQLExpression must be a HogQL expression.', 'pathsFilter.pathsHogQLExpression');
  }
  return { includeEventTypes: types as PathEventType[], pathGroupings, localPathCleaningFilters, pathsHogQLExpression: expression ? expression : null };
}

function list(v: unknown, attr: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw validationError(`${attr} must be a list.`, attr);
  if (v.length > MAX_RULES) throw validationError(`${attr} takes at most ${MAX_RULES} items.`, attr);
  return v;
}

function parseCleaning(rule: unknown, attr: string): PathCleaning {
  if (!isObject(rule)) throw validationError(`${attr} must be {regex, alias}.`, attr);
  const { regex, alias } = rule;
  if (typeof regex !== 'string' || regex === '') throw validationError(`${attr}.regex must be a regular expression.`, `${attr}.regex`, 'required');
  const problem = re2SyntaxError(regex);
  if (problem) throw validationError(`${attr}.regex is not a valid regular expression: ${problem}.`, `${attr}.regex`);
  const text = alias ?? '';
  if (typeof text !== 'string' || text.length > MAX_TEXT) throw validationError(`${attr}.alias must be text.`, `${attr}.alias`);
  // RE2 and ClickHouse read `\0`…`\9` in the replacement as capture groups and `\\` as a backslash;
  // anything else after a backslash, or a group the regex lacks, is an engine error: refuse it here.
  const groups = captureGroups(regex);
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== '\\') continue;
    const next = text[++i];
    if (next === '\\') continue;
    if (next === undefined || !/[0-9]/.test(next) || Number(next) > groups) {
      throw validationError(`${attr}.alias may use \\0 to \\${groups} (the regex's groups) and \\\\ after a backslash.`, `${attr}.alias`);
    }
  }
  return { regex, alias: text };
}

/** Capturing groups of a pattern re2SyntaxError accepted: `(` not escaped, outside classes, not `(?` unless `(?P<name>`. */
function captureGroups(pattern: string): number {
  let count = 0;
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      // `\Q…\E` quotes everything up to `\E`.
      if (pattern[i + 1] === 'Q') {
        const end = pattern.indexOf('\\E', i + 2);
        i = end < 0 ? pattern.length : end + 1;
      } else i++;
    } else if (inClass) {
      if (c === ']') inClass = false;
    } else if (c === '[') {
      inClass = true;
      // A `]` first in the class (after an optional `^`) is literal.
      if (pattern[i + 1] === '^') i++;
      if (pattern[i + 1] === ']') i++;
    } else if (c === '(' && (pattern[i + 1] !== '?' || pattern.startsWith('?P<', i + 1))) {
      count++;
    }
  }
  return count;
}

const str = (s: string) => ir.constant(s, 'String');

/**
 * The item of an event of `e`: pageviews' URL without a trailing slash and screens' name, else
 * the HogQL expression (given one) or the event name — each when its type is listed or none is,
 * as in PostHog; then cleaned (groupings are a level up: groupedItem). A null item is ''.
 */
export function pathItem(rules: PathItemRules, scope: EventsScope): Expr {
  const types = rules.includeEventTypes;
  const event = ir.column('e', 'events', 'event', 'String');
  const property = (key: string) => scope.filterSources().event(key).text;
  const listed = (type: PathEventType) => types.length === 0 || types.includes(type);
  const hogql = listed('hogql') && rules.pathsHogQLExpression !== null ? hogqlValueText(scope, rules.pathsHogQLExpression, 'pathsFilter.pathsHogQLExpression') : null;
  const branches: Array<[Expr, Expr]> = [];
  if (listed('$pageview')) branches.push([ir.op('=', [event, str('$pageview')]), ir.call('__trimTrailingSlash', [ir.call('coalesce', [property('$current_url'), str('')], 'String')], 'String')]);
  if (listed('$screen')) branches.push([ir.op('=', [event, str('$screen')]), ir.call('coalesce', [property('$screen_name'), str('')], 'String')]);
  const otherwise = hogql ? ir.call('coalesce', [hogql, str('')], 'String') : event;
  let item: Expr = branches.length === 0 ? otherwise : { kind: 'case', branches, otherwise, type: 'String' };
  for (const rule of rules.localPathCleaningFilters) item = ir.call('replaceRegexpAll', [item, str(rule.regex), str(rule.alias)], 'String');
  return item;
}

/** `item` replaced by the first grouping pattern it contains; null when there are no groupings. */
export function groupedItem(rules: PathItemRules, item: Expr): Expr | null {
  if (rules.pathGroupings.length === 0) return null;
  return {
    kind: 'case',
    branches: rules.pathGroupings.map(({ pattern, regex }) => [ir.call('match', [item, str(regex)], 'Boolean'), str(pattern)] as [Expr, Expr]),
    otherwise: item,
    type: 'String',
  };
}
