/**
 * A FunnelsQuery node (query-api.md §1.8.1) checked and given its defaults. Every refusal is a
 * 400 whose attr names the field (`series.1.event`, `funnelsFilter.exclusions.0.funnelToStep`).
 * What Sightline does not compute yet (first-time math, other attributions, optional steps
 * outside ordered steps views) is refused by name rather than silently answered differently.
 */
import { validationError } from '../../kernel/errors.js';
import { type DateRangeInput, type Interval, INTERVALS } from '../time/index.js';
import { type Obj, type PropertyBreakdown, choiceField, integerField, isObject, parsePropertyBreakdown } from '../node-fields.js';
import { actionOfNode, type ResolvedAction } from '../series/node.js';

export type FunnelOrder = 'ordered' | 'strict' | 'unordered';
export type FunnelViz = 'steps' | 'trends' | 'time_to_convert';
export type WindowUnit = 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month';

/** Fixed lengths, as PostHog's funnel UDF measures windows (a month is 31 days). */
export const WINDOW_UNIT_SECONDS: Record<WindowUnit, number> = {
  second: 1,
  minute: 60,
  hour: 3_600,
  day: 86_400,
  week: 7 * 86_400,
  month: 31 * 86_400,
};

export interface FunnelStep {
  /** null: any event (always null for an ActionsNode). */
  event: string | null;
  /** ActionsNode: the action (null while unresolved); undefined for an EventsNode. */
  action?: ResolvedAction | null;
  customName: string | null;
  properties: unknown;
  /** optionalInFunnel: the step may be skipped (never the first). */
  optional: boolean;
}

export interface FunnelExclusion {
  event: string | null;
  action?: ResolvedAction | null;
  properties: unknown;
  fromStep: number;
  toStep: number;
}

export type FunnelBreakdown = PropertyBreakdown;

export interface FunnelsNode {
  kind: 'FunnelsQuery';
  steps: FunnelStep[];
  dateRange: DateRangeInput | null;
  interval: Interval;
  properties: unknown;
  filterTestAccounts: boolean;
  /** `$group_N` instead of the person. */
  groupTypeIndex: number | null;
  /** funnelsFilter.funnelAggregateByHogQL: the actor is this expression's value (as text) instead of the person. */
  aggregateByHogQL: string | null;
  breakdown: FunnelBreakdown | null;
  order: FunnelOrder;
  viz: FunnelViz;
  windowSeconds: number;
  fromStep: number;
  toStep: number;
  exclusions: FunnelExclusion[];
  binCount: number | null;
}

export const MAX_STEPS = 20;
const MAX_EXCLUSIONS = 20;
/** The value of the funnel that merges the breakdown values past the limit (not trends' marker). */
export const OTHER_BREAKDOWN = 'Other';

function optionalObject(v: unknown, attr: string): Obj | null {
  if (v === undefined || v === null) return null;
  if (!isObject(v)) throw validationError(`${attr} must be an object.`, attr);
  return v;
}

function eventName(v: unknown, attr: string): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' || v.length > 400) throw validationError(`${attr} must be an event name or null (any event).`, attr);
  return v;
}

function parseStep(raw: unknown, index: number): FunnelStep {
  const attr = `series.${index}`;
  if (!isObject(raw)) throw validationError(`${attr} must be an EventsNode or ActionsNode.`, attr);
  if (raw.kind !== 'EventsNode' && raw.kind !== 'ActionsNode') throw validationError(`${attr}.kind must be EventsNode or ActionsNode.`, `${attr}.kind`, 'invalid_choice');
  const math = raw.math ?? 'total';
  if (math !== 'total') throw validationError('Funnel steps count every matching event (math "total"); first-time math is not supported yet.', `${attr}.math`, 'invalid_choice');
  const optional = raw.optionalInFunnel === true;
  if (optional && index === 0) throw validationError('The first step of a funnel cannot be optional.', `${attr}.optionalInFunnel`);
  const customName = raw.custom_name ?? null;
  if (customName !== null && typeof customName !== 'string') throw validationError(`${attr}.custom_name must be a string.`, `${attr}.custom_name`);
  if (raw.kind === 'ActionsNode') return { event: null, action: actionOfNode(raw, attr), customName, properties: raw.properties ?? [], optional };
  return { event: eventName(raw.event, `${attr}.event`), customName, properties: raw.properties ?? [], optional };
}

/** Do two nodes match the same events: the same event name (or action) and the same filters? */
function sameMatch(a: Pick<FunnelStep, 'event' | 'action' | 'properties'>, b: Pick<FunnelStep, 'event' | 'action' | 'properties'>): boolean {
  const sameMatcher = a.action === undefined ? b.action === undefined && b.event === a.event : b.action?.id === a.action?.id;
  return sameMatcher && JSON.stringify(a.properties) === JSON.stringify(b.properties);
}

/**
 * Optional steps (PostHog: ordered or strict steps views only; Sightline: ordered so far), none
 * identical to the next required step, which would always take its events.
 */
function checkOptionalSteps(steps: FunnelStep[], order: FunnelOrder, viz: FunnelViz): void {
  const first = steps.findIndex((step) => step.optional);
  if (first < 0) return;
  const attr = `series.${first}.optionalInFunnel`;
  if (order !== 'ordered') throw validationError('Optional steps are supported in ordered funnels only.', attr, 'invalid_choice');
  if (viz !== 'steps') throw validationError('Optional steps are shown by the steps view only.', 'funnelsFilter.funnelVizType', 'invalid_choice');
  steps.forEach((step, i) => {
    if (!step.optional) return;
    const next = steps.findIndex((later, j) => j > i && !later.optional);
    if (next >= 0 && sameMatch(step, steps[next])) throw validationError('An optional step cannot be the same as the next required step.', `series.${i}.optionalInFunnel`);
  });
}

function parseExclusion(raw: unknown, index: number, steps: FunnelStep[], order: FunnelOrder): FunnelExclusion {
  const attr = `funnelsFilter.exclusions.${index}`;
  if (!isObject(raw)) throw validationError(`${attr} must be an EventsNode or ActionsNode.`, attr);
  const last = steps.length - 1;
  const fromStep = integerField(raw.funnelFromStep, 0, 0, last - 1, `${attr}.funnelFromStep`)!;
  const toStep = integerField(raw.funnelToStep, last, 1, last, `${attr}.funnelToStep`)!;
  if (fromStep >= toStep) throw validationError('An exclusion must end at a later step than it starts.', `${attr}.funnelToStep`);
  if (order === 'unordered' && (fromStep !== 0 || toStep !== last)) {
    throw validationError('Unordered funnels only allow exclusions spanning all steps.', `${attr}.funnelFromStep`);
  }
  const action = raw.kind === 'ActionsNode' ? actionOfNode(raw, attr) : undefined;
  const event = action === undefined ? eventName(raw.event, `${attr}.event`) : null;
  const properties = raw.properties ?? [];
  for (const [at, end] of [[fromStep, 'funnelFromStep'], [toStep, 'funnelToStep']] as const) {
    if (steps[at].optional) throw validationError('An exclusion must start and end at required (not optional) steps.', `${attr}.${end}`);
  }
  for (let i = fromStep; i <= toStep; i++) {
    if (sameMatch({ event, action, properties }, steps[i])) {
      throw validationError("Exclusion steps cannot contain an event that's part of funnel steps.", `${attr}.${action === undefined ? 'event' : 'id'}`);
    }
  }
  return { event, action, properties, fromStep, toStep };
}

export function parseFunnelsQuery(node: Obj): FunnelsNode {
  if (!Array.isArray(node.series) || node.series.length < 2) throw validationError('A funnel needs at least 2 steps in series.', 'series');
  if (node.series.length > MAX_STEPS) throw validationError(`A funnel has at most ${MAX_STEPS} steps.`, 'series');
  const steps = node.series.map(parseStep);
  const last = steps.length - 1;
  const filter = optionalObject(node.funnelsFilter, 'funnelsFilter') ?? {};
  const order = choiceField(filter.funnelOrderType, ['ordered', 'strict', 'unordered'] as const, 'ordered', 'funnelsFilter.funnelOrderType');
  const viz = choiceField(filter.funnelVizType, ['steps', 'trends', 'time_to_convert'] as const, 'steps', 'funnelsFilter.funnelVizType');
  const windowInterval = integerField(filter.funnelWindowInterval, 14, 1, 100_000, 'funnelsFilter.funnelWindowInterval')!;
  const unit = choiceField(filter.funnelWindowIntervalUnit, Object.keys(WINDOW_UNIT_SECONDS) as WindowUnit[], 'day', 'funnelsFilter.funnelWindowIntervalUnit');
  const fromStep = integerField(filter.funnelFromStep, 0, 0, last - 1, 'funnelsFilter.funnelFromStep')!;
  const toStep = integerField(filter.funnelToStep, last, 1, last, 'funnelsFilter.funnelToStep')!;
  if (fromStep >= toStep) throw validationError('funnelToStep must be after funnelFromStep.', 'funnelsFilter.funnelToStep');
  const aggregateBy = filter.funnelAggregateByHogQL;
  if (aggregateBy !== undefined && aggregateBy !== null && (typeof aggregateBy !== 'string' || aggregateBy.length > 2000)) {
    throw validationError('funnelsFilter.funnelAggregateByHogQL must be a HogQL expression, such as "properties.$session_id".', 'funnelsFilter.funnelAggregateByHogQL');
  }
  const attribution = filter.breakdownAttributionType ?? 'first_touch';
  if (attribution !== 'first_touch') {
    throw validationError('Only first_touch breakdown attribution is supported.', 'funnelsFilter.breakdownAttributionType', 'invalid_choice');
  }
  const rawExclusions = filter.exclusions ?? [];
  if (!Array.isArray(rawExclusions) || rawExclusions.length > MAX_EXCLUSIONS) {
    throw validationError(`funnelsFilter.exclusions must be a list of at most ${MAX_EXCLUSIONS} EventsNodes.`, 'funnelsFilter.exclusions');
  }
  checkOptionalSteps(steps, order, viz);
  const groupTypeIndex = integerField(node.aggregation_group_type_index, null, 0, 4, 'aggregation_group_type_index');
  const dateRange = optionalObject(node.dateRange, 'dateRange') as DateRangeInput | null;
  return {
    kind: 'FunnelsQuery',
    steps,
    dateRange,
    interval: choiceField(node.interval, INTERVALS, 'day', 'interval'),
    properties: node.properties ?? [],
    filterTestAccounts: node.filterTestAccounts === true,
    groupTypeIndex,
    // A group type wins over the expression, as in PostHog; "person_id" is the default.
    aggregateByHogQL: groupTypeIndex === null && aggregateBy && aggregateBy.trim() !== 'person_id' ? aggregateBy : null,
    breakdown: parsePropertyBreakdown(optionalObject(node.breakdownFilter, 'breakdownFilter'), ['event', 'person', 'group', 'hogql'], 3),
    order,
    viz,
    windowSeconds: windowInterval * WINDOW_UNIT_SECONDS[unit],
    fromStep,
    toStep,
    exclusions: rawExclusions.map((raw, i) => parseExclusion(raw, i, steps, order)),
    binCount: binCount(filter.binCount),
  };
}

/** PostHog clamps binCount to 1–90 rather than refusing it. */
function binCount(v: unknown): number | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw validationError('funnelsFilter.binCount must be a number.', 'funnelsFilter.binCount');
  return Math.min(90, Math.max(1, Math.round(v)));
}

/** The required step before step k (k > 0): optional steps are skipped. */
export function previousRequired(steps: FunnelStep[], k: number): number {
  let j = k - 1;
  while (j > 0 && steps[j].optional) j--;
  return j;
}

/** The required step after step k, or null. */
export function nextRequired(steps: FunnelStep[], k: number): number | null {
  for (let j = k + 1; j < steps.length; j++) if (!steps[j].optional) return j;
  return null;
}
