/**
 * Action steps as a request gives them, checked into ActionStep: a 400 naming the field
 * (`steps.1.url_matching`) for anything a query could not use later — a matching mode PostHog
 * does not have, a pattern RE2 would refuse, a selector we cannot match, property filters the
 * compiler rejects. The whole action is then compiled once, so what is saved always compiles.
 */
import { validationError } from '../kernel/errors.js';
import { isPlainObject, type JsonObject } from '../kernel/json.js';
import { EventsScope, HogQLError, re2SyntaxError } from '../hogql/index.js';
import type { ActionStep, StepMatching } from '../store/types.js';
import { stepCondition } from './condition.js';

export const MAX_STEPS = 50;
const MAX_TEXT = 10_000;
const MATCHING: readonly StepMatching[] = ['contains', 'regex', 'exact'];

export function parseSteps(value: unknown): ActionStep[] {
  if (!Array.isArray(value)) throw validationError('steps must be a list of steps.', 'steps');
  if (value.length > MAX_STEPS) throw validationError(`An action has at most ${MAX_STEPS} steps.`, 'steps');
  const steps = value.map((raw, index) => parseStep(raw, `steps.${index}`));
  checkCompiles(steps);
  return steps;
}

function parseStep(raw: unknown, attr: string): ActionStep {
  if (!isPlainObject(raw)) throw validationError(`${attr} must be an object.`, attr);
  const step: ActionStep = {
    event: text(raw, 'event', attr),
    properties: properties(raw.properties, `${attr}.properties`),
    url: text(raw, 'url', attr),
    url_matching: matching(raw, 'url_matching', attr),
    text: text(raw, 'text', attr),
    text_matching: matching(raw, 'text_matching', attr),
    href: text(raw, 'href', attr),
    href_matching: matching(raw, 'href_matching', attr),
    selector: text(raw, 'selector', attr),
    tag_name: text(raw, 'tag_name', attr),
  };
  if (step.url !== null && step.url_matching === null) step.url_matching = 'contains';
  for (const field of ['url', 'text', 'href'] as const) {
    const pattern = step[field];
    if (pattern !== null && step[`${field}_matching`] === 'regex') {
      const problem = re2SyntaxError(pattern);
      if (problem) throw validationError(`Invalid regular expression: ${problem}.`, `${attr}.${field}`);
    }
  }
  return step;
}

/** A string field; absent, null and '' are "not checked" (PostHog's forms send ''). */
function text(raw: JsonObject, field: string, attr: string): string | null {
  const value = raw[field];
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string') throw validationError(`${attr}.${field} must be a string.`, `${attr}.${field}`);
  if (value.length > MAX_TEXT) throw validationError(`${attr}.${field} is too long (limit ${MAX_TEXT} characters).`, `${attr}.${field}`);
  return value;
}

function matching(raw: JsonObject, field: string, attr: string): StepMatching | null {
  const value = raw[field];
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string' || !MATCHING.includes(value as StepMatching)) {
    throw validationError(`${attr}.${field} must be one of ${MATCHING.join(', ')}.`, `${attr}.${field}`, 'invalid_choice');
  }
  return value as StepMatching;
}

function properties(value: unknown, attr: string): JsonObject[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every(isPlainObject)) throw validationError(`${attr} must be a list of property filters.`, attr);
  return value;
}

/** Compiles the steps once against a scratch scope: a selector or filter we cannot use is a 400 now. */
function checkCompiles(steps: ActionStep[]): void {
  const scope = new EventsScope({ propertyType: () => null, now: new Date() }, 0);
  steps.forEach((step, index) => {
    const attr = `steps.${index}`;
    try {
      stepCondition(step, scope.filterSources(), attr);
    } catch (error) {
      if (!(error instanceof HogQLError)) throw error;
      // Property filters name their field; the selector is the only other part that can fail.
      throw validationError(error.message, error.attr ?? `${attr}.selector`);
    }
  });
}
