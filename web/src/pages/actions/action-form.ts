/**
 * An action's steps as the editor shows them (every field as text, '' for "not checked"), and
 * back as the actions API takes them (docs/actions.md): fields left empty are not sent.
 * (Imports carry `.js`: the unit tests compile this file with the server's NodeNext settings.)
 */
import type { ActionStep, PropertyFilter, StepMatching } from '../../api/types.js';
import { completeProperties } from '../activity/filters.js';

export interface StepDraft {
  event: string;
  url: string;
  urlMatching: StepMatching;
  text: string;
  textMatching: StepMatching;
  href: string;
  hrefMatching: StepMatching;
  selector: string;
  tagName: string;
  properties: PropertyFilter[];
}

export const MATCHING: { value: StepMatching; label: string }[] = [
  { value: 'contains', label: 'contains' },
  { value: 'exact', label: 'equals' },
  { value: 'regex', label: 'matches regex' },
];

export const NEW_STEP: StepDraft = {
  event: '$pageview',
  url: '',
  urlMatching: 'contains',
  text: '',
  textMatching: 'exact',
  href: '',
  hrefMatching: 'exact',
  selector: '',
  tagName: '',
  properties: [],
};

/** The step as the API takes it; a field left empty is not sent (so it is not checked). */
export function stepOf(draft: StepDraft): ActionStep {
  const step: ActionStep = {};
  if (draft.event !== '') step.event = draft.event;
  if (draft.url !== '') Object.assign(step, { url: draft.url, url_matching: draft.urlMatching });
  if (draft.text !== '') Object.assign(step, { text: draft.text, text_matching: draft.textMatching });
  if (draft.href !== '') Object.assign(step, { href: draft.href, href_matching: draft.hrefMatching });
  if (draft.selector !== '') step.selector = draft.selector;
  if (draft.tagName !== '') step.tag_name = draft.tagName;
  const properties = completeProperties(draft.properties);
  if (properties.length > 0) step.properties = properties;
  return step;
}

export function stepDraftOf(step: ActionStep): StepDraft {
  return {
    event: step.event ?? '',
    url: step.url ?? '',
    urlMatching: step.url_matching ?? 'contains',
    text: step.text ?? '',
    textMatching: step.text_matching ?? 'exact',
    href: step.href ?? '',
    hrefMatching: step.href_matching ?? 'exact',
    selector: step.selector ?? '',
    tagName: step.tag_name ?? '',
    properties: (step.properties ?? []).map((p) => ({ ...p })),
  };
}

/** What a step matches, in a few words, for the list. */
export function stepSummary(step: ActionStep): string {
  const parts = [step.event ? step.event : 'any event'];
  if (step.url) parts.push(`URL ${step.url_matching ?? 'contains'} “${step.url}”`);
  if (step.text) parts.push(`text ${step.text_matching ?? 'exact'} “${step.text}”`);
  if (step.href) parts.push(`link ${step.href_matching ?? 'exact'} “${step.href}”`);
  if (step.selector) parts.push(`element ${step.selector}`);
  if (step.tag_name) parts.push(`<${step.tag_name}>`);
  if (step.properties?.length) parts.push(`${step.properties.length} propert${step.properties.length === 1 ? 'y' : 'ies'}`);
  return parts.join(', ');
}
