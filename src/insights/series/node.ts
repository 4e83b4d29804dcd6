/**
 * The series nodes insights take (query-api.md §1.4.3): EventsNode, and ActionsNode once the
 * query service has resolved its action (query/actions.ts puts the steps on the node). Shared
 * by trends, stickiness and lifecycle.
 */
import { validationError } from '../../kernel/errors.js';
import type { ActionStep } from '../../store/types.js';
import type { DateRangeInput } from '../time/index.js';

/** The action an ActionsNode names, as the query service resolved it. */
export interface ResolvedAction {
  id: number;
  name: string;
  steps: ActionStep[];
}

export interface SeriesNode {
  kind: 'EventsNode' | 'ActionsNode';
  /** null = all events (always null for an ActionsNode). */
  event: string | null;
  /** ActionsNode: the action; null while unresolved (a saved insight being checked). */
  action: ResolvedAction | null;
  name: string | null;
  custom_name: string | null;
  math: string;
  math_property: string | null;
  math_property_type: string | null;
  math_hogql: string | null;
  math_group_type_index: number | null;
  /** Property filters of this series only (raw; compiled with the query's). */
  properties: unknown;
}

/** More series than this is not an insight anyone reads. */
export const MAX_SERIES = 50;

export const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

export function optionalString(value: unknown, attr: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw validationError(`${attr} must be a string.`, attr);
  return value;
}

export function optionalInteger(value: unknown, attr: string, min: number, max: number): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw validationError(`${attr} must be an integer from ${min} to ${max}.`, attr);
  }
  return value;
}

export function optionalBoolean(value: unknown, attr: string): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw validationError(`${attr} must be true or false.`, attr);
  return value;
}

export function choice<T extends string>(value: unknown, choices: readonly T[], fallback: T, attr: string): T {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'string' || !choices.includes(value as T)) {
    throw validationError(`${attr} must be one of ${choices.join(', ')}.`, attr, 'invalid_choice');
  }
  return value as T;
}

/** `series`: a non-empty list of EventsNode; `maths` lists the math values the kind computes. */
export function parseSeries(value: unknown, maths: readonly string[], attr = 'series'): SeriesNode[] {
  if (value === undefined || value === null) throw validationError(`${attr} is required.`, attr, 'required');
  if (!Array.isArray(value) || value.length === 0) throw validationError(`${attr} must be a non-empty list of EventsNode.`, attr);
  if (value.length > MAX_SERIES) throw validationError(`${attr} has too many series (limit ${MAX_SERIES}).`, attr);
  return value.map((item, index) => parseSeriesNode(item, maths, `${attr}.${index}`));
}

function parseSeriesNode(item: unknown, maths: readonly string[], attr: string): SeriesNode {
  if (!isRecord(item)) throw validationError(`${attr} must be an EventsNode or ActionsNode object.`, attr);
  if (item.kind !== 'EventsNode' && item.kind !== 'ActionsNode') throw validationError(`${attr}.kind must be EventsNode or ActionsNode.`, `${attr}.kind`, 'invalid_choice');
  const math = choice(item.math, maths, 'total', `${attr}.math`);
  const action = item.kind === 'ActionsNode' ? actionOfNode(item, attr) : null;
  const node: SeriesNode = {
    kind: item.kind,
    event: item.kind === 'ActionsNode' ? null : optionalString(item.event, `${attr}.event`),
    action,
    name: optionalString(item.name, `${attr}.name`) ?? action?.name ?? null,
    custom_name: optionalString(item.custom_name, `${attr}.custom_name`),
    math,
    math_property: optionalString(item.math_property, `${attr}.math_property`),
    math_property_type: optionalString(item.math_property_type, `${attr}.math_property_type`),
    math_hogql: optionalString(item.math_hogql, `${attr}.math_hogql`),
    math_group_type_index: optionalInteger(item.math_group_type_index, `${attr}.math_group_type_index`, 0, 4),
    properties: item.properties ?? null,
  };
  if (math === 'unique_group' && node.math_group_type_index === null) {
    throw validationError('math unique_group needs math_group_type_index (0 to 4).', `${attr}.math_group_type_index`, 'required');
  }
  return node;
}

/** The series' name in results: `All events` for event null. */
export const seriesName = (series: SeriesNode): string => series.name ?? series.action?.name ?? series.event ?? 'All events';

/** `action.id` and `type` of a series in results: the event name, or the action id. */
export const seriesId = (series: SeriesNode): string | number | null => series.action?.id ?? series.event;
export const seriesType = (series: SeriesNode): 'events' | 'actions' => (series.kind === 'ActionsNode' ? 'actions' : 'events');

/**
 * An ActionsNode's `id` (or another field naming an action), and the action the query service
 * resolved for it under RESOLVED_ACTION (never the request's own: the service overwrites it). Unresolved: null, and only a
 * saved insight's check may get that far.
 */
export function actionOfNode(item: Record<string, unknown>, attr: string, field = 'id'): ResolvedAction | null {
  const raw = item[field];
  const id = typeof raw === 'string' && /^\d{1,15}$/.test(raw) ? Number(raw) : raw;
  const at = attr === '' ? field : `${attr}.${field}`;
  if (typeof id !== 'number' || !Number.isSafeInteger(id)) throw validationError(`${at} must be an action id.`, at, 'required');
  const resolved = item[RESOLVED_ACTION];
  return isRecord(resolved) && resolved.id === id ? (resolved as unknown as ResolvedAction) : null;
}

/** Where the query service puts the resolved action on an ActionsNode. */
export const RESOLVED_ACTION = '__resolved_action';

export function record(value: unknown, attr: string): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (!isRecord(value)) throw validationError(`${attr} must be an object.`, attr);
  return value;
}

export function parseDateRange(value: unknown, attr = 'dateRange'): DateRangeInput {
  const range = record(value, attr);
  return {
    date_from: optionalString(range.date_from, `${attr}.date_from`),
    date_to: optionalString(range.date_to, `${attr}.date_to`),
    explicitDate: optionalBoolean(range.explicitDate, `${attr}.explicitDate`),
  };
}

