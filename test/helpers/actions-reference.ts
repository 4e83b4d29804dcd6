/**
 * The simplest possible matcher of actions and element filters, over events whose autocapture
 * elements are kept as objects (never as chain text): the property tests compare the server's
 * compiled conditions with it. Patterns use re2js, RE2 semantics like the server.
 */
import { RE2JS } from 're2js';

export interface RefElement {
  tag_name: string;
  classes: string[];
  text: string | null;
  href: string | null;
  id: string | null;
  /** `data-x` attribute value, as `[data-x="v"]` selects it. */
  dataX: string | null;
}

export interface RefEvent {
  uuid: string;
  event: string;
  url: string | null;
  plan: string | null;
  /** Innermost first, as autocapture sends them. */
  elements: RefElement[];
}

export type Matching = 'exact' | 'contains' | 'regex';

export interface RefStep {
  event?: string;
  url?: string;
  url_matching?: Matching;
  text?: string;
  text_matching?: Matching;
  href?: string;
  href_matching?: Matching;
  tag_name?: string;
  selector?: string;
  properties?: { key: 'plan'; value: string; type: 'event' }[];
}

/** `$elements` as posthog-js sent them before elements_chain; the server builds the chain. */
export const asCaptured = (el: RefElement) => ({
  tag_name: el.tag_name,
  ...(el.classes.length > 0 && { attr__class: el.classes.join(' ') }),
  ...(el.text !== null && { $el_text: el.text }),
  ...(el.href !== null && { attr__href: el.href }),
  ...(el.id !== null && { attr__id: el.id }),
  ...(el.dataX !== null && { 'attr__data-x': el.dataX }),
  nth_child: 1,
  nth_of_type: 1,
});

/** `contains` ignores case for element text and href, not for URLs (PostHog's ILIKE and LIKE). */
const matches = (value: string | null, pattern: string, matching: Matching, ignoreCase = true): boolean => {
  if (value === null) return false;
  if (matching === 'exact') return value === pattern;
  if (matching === 'contains') return ignoreCase ? value.toLowerCase().includes(pattern.toLowerCase()) : value.includes(pattern);
  return RE2JS.compile(pattern).matcher(value).find();
};

export function stepMatches(step: RefStep, e: RefEvent): boolean {
  if (step.event !== undefined && e.event !== step.event) return false;
  if (step.url !== undefined && !matches(e.url, step.url, step.url_matching ?? 'contains', false)) return false;
  if (step.text !== undefined && !e.elements.some((el) => matches(el.text, step.text!, step.text_matching ?? 'exact'))) return false;
  if (step.href !== undefined && !e.elements.some((el) => matches(el.href, step.href!, step.href_matching ?? 'exact'))) return false;
  if (step.tag_name !== undefined && !e.elements.some((el) => el.tag_name === step.tag_name)) return false;
  if (step.selector !== undefined && !selectorMatches(step.selector, e.elements)) return false;
  for (const filter of step.properties ?? []) if (e.plan !== filter.value) return false;
  return true;
}

export const refMatches = matches;
export const actionMatches = (steps: RefStep[], e: RefEvent) => steps.some((step) => stepMatches(step, e));

// --- CSS selectors over element objects

export interface RefCompound {
  tag: string | null;
  classes: string[];
  id: string | null;
  dataX: string | null;
  /** Relation to the compound before it. */
  combinator: '>' | ' ' | null;
}

export function selectorText(compounds: RefCompound[]): string {
  return compounds
    .map((c, i) => {
      const own = `${c.tag ?? (c.classes.length === 0 && c.id === null && c.dataX === null ? '*' : '')}${c.classes.map((x) => `.${x}`).join('')}${c.id === null ? '' : `#${c.id}`}${c.dataX === null ? '' : `[data-x="${c.dataX}"]`}`;
      return i === 0 ? own : `${c.combinator === '>' ? ' > ' : ' '}${own}`;
    })
    .join('');
}

const compoundMatches = (c: RefCompound, el: RefElement) =>
  (c.tag === null || c.tag === el.tag_name) &&
  c.classes.every((x) => el.classes.includes(x)) &&
  (c.id === null || c.id === el.id) &&
  (c.dataX === null || c.dataX === el.dataX);

/** Some element matches the last compound, with its ancestors matching the ones before it. */
export function refSelectorMatches(compounds: RefCompound[], elements: RefElement[]): boolean {
  const from = (k: number, i: number): boolean => {
    if (!compoundMatches(compounds[k], elements[i])) return false;
    if (k === 0) return true;
    if (compounds[k].combinator === '>') return i + 1 < elements.length && from(k - 1, i + 1);
    for (let j = i + 1; j < elements.length; j++) if (from(k - 1, j)) return true;
    return false;
  };
  return elements.some((_, i) => from(compounds.length - 1, i));
}

/** Selectors in tests are always written by selectorText; they are parsed back here. */
const selectors = new Map<string, RefCompound[]>();
export const rememberSelector = (compounds: RefCompound[]) => {
  const text = selectorText(compounds);
  selectors.set(text, compounds);
  return text;
};
const selectorMatches = (text: string, elements: RefElement[]) => refSelectorMatches(selectors.get(text)!, elements);
