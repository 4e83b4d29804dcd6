/**
 * Conditions on an event's autocapture elements, read from `elements_chain` (PostHog's text
 * form: `a.btn.primary:attr__id="buy"href="/x"nth-child="1"text="Buy";div:…`, innermost element
 * first, classes and attributes sorted, `"` inside values escaped as `\"`).
 *
 * Everything is a regular expression over that text, built here from constants and escaped
 * user values — RE2 semantics in every dialect, so no pattern can backtrack. A user's own
 * pattern (`text_matching: regex`) is applied to each extracted value on its own, never spliced
 * into a larger pattern.
 */
import { HogQLError, quoteForMessage } from './errors.js';
import { type IrExpr, call, constant } from './ir.js';
import { escapeRegex } from './re2.js';

export type ElementAttribute = 'text' | 'href' | 'tag_name';

/**
 * First group of each: one value per element that has the attribute. Tags are read from the chain
 * with a `;` put in front, so no pattern needs `^`: ClickHouse 18.16's extractAll matches `^` at
 * each new search position and so found only the first element's tag.
 */
const VALUE_PATTERNS: Record<ElementAttribute, string> = {
  text: '[:"]text="((?:[^"\\\\]|\\\\.)*)"',
  href: '[:"]href="((?:[^"\\\\]|\\\\.)*)"',
  tag_name: ';([^.:;"]*)',
};

/** Matches when some element has the attribute (a tag: some element has one). */
const SET_PATTERNS: Record<ElementAttribute, string> = {
  text: '[:"]text="',
  href: '[:"]href="',
  tag_name: '(?:^|;)[^.:;"]',
};

/** The attribute's values over the chain's elements (an Array of String). */
export function elementValues(chain: IrExpr, attribute: ElementAttribute): IrExpr {
  const text = attribute === 'tag_name' ? call('concat', [constant(';', 'String'), chain], 'String') : chain;
  return call('extractAll', [text, constant(VALUE_PATTERNS[attribute], 'String')], 'Array', { item: 'String' });
}

/** True when some element's attribute value passes `test` (given the unescaped value). */
export function anyElement(chain: IrExpr, attribute: ElementAttribute, test: (value: IrExpr) => IrExpr): IrExpr {
  const arg: IrExpr = { kind: 'lambdaArg', name: 'el', type: 'String' };
  const value = attribute === 'tag_name' ? arg : call('replaceAll', [arg, constant('\\"', 'String'), constant('"', 'String')], 'String');
  const lambda: IrExpr = { kind: 'lambda', params: ['el'], body: test(value), type: 'Boolean' };
  return call('arrayExists', [lambda, elementValues(chain, attribute)], 'Boolean');
}

/** Some element has the attribute at all. */
export function hasElementValue(chain: IrExpr, attribute: ElementAttribute): IrExpr {
  return call('match', [chain, constant(SET_PATTERNS[attribute], 'String')], 'Boolean');
}

/** The chain has elements matching the CSS selector (`div > a.buy`, `#main [data-attr="x"]`). */
export function selectorCondition(chain: IrExpr, selector: string): IrExpr {
  return call('match', [chain, constant(selectorPattern(selector), 'String')], 'Boolean');
}

// --- CSS selectors -----------------------------------------------------------------------------

interface Compound {
  tag: string | null;
  classes: string[];
  /** Attribute key (as the chain names it) → value; null: present with any value. */
  attributes: Map<string, string | null>;
  /** How it relates to the compound before it: `>` a direct child, ' ' any descendant. */
  combinator: '>' | ' ' | null;
}

const MAX_SELECTOR_LENGTH = 1_000;
const NAME = /^[A-Za-z0-9_-]+/;

/**
 * The selector as a pattern over the chain. Supported: type (`a`, `*`), `.class`, `#id`,
 * `[attr]`, `[attr="value"]`, and the descendant and child combinators — what PostHog's action
 * selectors use. Anything else is refused rather than matched loosely.
 */
export function selectorPattern(selector: string): string {
  if (selector.length > MAX_SELECTOR_LENGTH) throw new HogQLError(`Selector is too long (limit ${MAX_SELECTOR_LENGTH} characters)`);
  const compounds = parseSelector(selector);
  // The chain lists the innermost element first: the selector's last compound comes first.
  let pattern = '(?:^|;)';
  for (let i = compounds.length - 1; i >= 0; i--) {
    pattern += elementPattern(compounds[i]);
    const link = compounds[i].combinator;
    if (link === '>') pattern += ';';
    else if (link === ' ') pattern += ';(?:[^;]*;)*?';
  }
  return `${pattern}(?:;|$)`;
}

function parseSelector(text: string): Compound[] {
  const compounds: Compound[] = [];
  let rest = text.trim();
  let combinator: Compound['combinator'] = null;
  if (rest === '') throw new HogQLError('Selector is empty');
  while (rest !== '') {
    const compound: Compound = { tag: null, classes: [], attributes: new Map(), combinator };
    const tag = rest.startsWith('*') ? '*' : NAME.exec(rest)?.[0];
    if (tag) {
      compound.tag = tag === '*' ? null : tag.toLowerCase();
      rest = rest.slice(tag.length);
    }
    let parts = 0;
    for (;;) {
      const name = NAME.exec(rest.slice(1))?.[0];
      if ((rest[0] === '.' || rest[0] === '#') && name) {
        if (rest[0] === '.') compound.classes.push(name);
        else compound.attributes.set('attr__id', name);
        rest = rest.slice(1 + name.length);
      } else if (rest[0] === '[') {
        const match = /^\[\s*([A-Za-z0-9_-]+)\s*(?:=\s*(?:"([^"]*)"|'([^']*)'|([^\]\s"']+))\s*)?\]/.exec(rest);
        if (!match) throw unsupported(text);
        compound.attributes.set(`attr__${match[1]}`, match[2] ?? match[3] ?? match[4] ?? null);
        rest = rest.slice(match[0].length);
      } else break;
      parts++;
    }
    if (!tag && parts === 0) throw unsupported(text);
    compounds.push(compound);
    const gap = /^\s*(>)?\s*/.exec(rest)!;
    if (gap[0] === '' && rest !== '') throw unsupported(text);
    rest = rest.slice(gap[0].length);
    combinator = gap[1] ? '>' : ' ';
    if (rest === '' && gap[1]) throw unsupported(text);
  }
  return compounds;
}

const unsupported = (selector: string) =>
  new HogQLError(`Selector ${quoteForMessage(selector)} is not supported (use tags, .class, #id, [attr] or [attr="value"], joined by spaces or >)`);

/**
 * One element's text, from its start to just before its `;`. Each class must be whole (the next
 * character starts another class, the attributes, or the next element), attributes are sorted
 * as the chain sorts them, and a value is matched in its escaped form.
 */
function elementPattern(compound: Compound): string {
  let pattern = compound.tag === null ? '[^.:;"]*' : escapeRegex(compound.tag);
  for (const name of [...compound.classes].sort()) pattern += `(?:\\.[^.;"]*)*?\\.${escapeRegex(name)}`;
  const attributes = [...compound.attributes].sort(([a], [b]) => a.localeCompare(b));
  attributes.forEach(([key, value], i) => {
    // The first follows the classes' `:` (or another attribute's closing quote); a later one
    // follows the previous constraint's closing quote directly, or skips whole attributes.
    pattern += i === 0 ? '(?:[.:][^;]*?)?[:"]' : '(?:[^;]*?")?';
    const escapedValue = value === null ? '(?:[^"\\\\]|\\\\.)*' : escapeRegex(value.replace(/"/g, '\\"'));
    pattern += `${escapeRegex(key)}="${escapedValue}"`;
  });
  return pattern + (attributes.length > 0 ? '[^;]*' : '(?:[.:][^;]*)?');
}
