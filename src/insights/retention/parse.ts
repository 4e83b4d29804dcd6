/** A RetentionQuery node (query-api.md §1.9) checked and given PostHog's defaults; 400s name the field. */
import { validationError } from '../../kernel/errors.js';
import { actionOfNode, type ResolvedAction } from '../series/node.js';
import type { DateRangeInput, Interval } from '../time/index.js';
import { type Obj, type PropertyBreakdown, isObject, integerField, parsePropertyBreakdown } from '../node-fields.js';

export type RetentionPeriod = 'Hour' | 'Day' | 'Week' | 'Month';
export const PERIOD_INTERVAL: Record<RetentionPeriod, Interval> = { Hour: 'hour', Day: 'day', Week: 'week', Month: 'month' };

export interface RetentionEntity {
  /** null: any event (always null for an action). */
  event: string | null;
  /** `{type: "actions", id}` or an ActionsNode: the action (null while unresolved). */
  action?: ResolvedAction | null;
  properties: unknown;
}

export interface RetentionNode {
  kind: 'RetentionQuery';
  period: RetentionPeriod;
  totalIntervals: number;
  firstTime: boolean;
  target: RetentionEntity;
  returning: RetentionEntity;
  minimumOccurrences: number;
  cumulative: boolean;
  dateRange: DateRangeInput | null;
  properties: unknown;
  filterTestAccounts: boolean;
  groupTypeIndex: number | null;
  /** A cohort breakdown: the rows once per cohort (`all`: everyone), or null. */
  cohorts: (number | 'all')[] | null;
  /** A property breakdown (one event, person or group property; `parts` has one item), or null. */
  breakdown: PropertyBreakdown | null;
}

/** What the runner uses when totalIntervals is absent (the UI always sends it). */
const DEFAULT_TOTAL_INTERVALS = 7;
const MAX_TOTAL_INTERVALS = 400;

function entity(v: unknown, attr: string): RetentionEntity {
  if (v === undefined || v === null) return { event: '$pageview', properties: [] };
  if (!isObject(v)) throw validationError(`${attr} must be an object such as {"id": "$pageview", "type": "events"}.`, attr);
  if (v.type === 'actions' || v.kind === 'ActionsNode') return { event: null, action: actionOfNode(v, attr), properties: v.properties ?? [] };
  if (v.type !== undefined && v.type !== null && v.type !== 'events') throw validationError(`${attr}.type must be "events".`, `${attr}.type`, 'invalid_choice');
  const id = v.id ?? v.event ?? null;
  if (id !== null && (typeof id !== 'string' || id.length > 400)) throw validationError(`${attr}.id must be an event name or null (any event).`, `${attr}.id`);
  return { event: id as string | null, properties: v.properties ?? [] };
}

export function parseRetentionQuery(node: Obj): RetentionNode {
  const filter = node.retentionFilter;
  if (filter !== undefined && filter !== null && !isObject(filter)) throw validationError('retentionFilter must be an object.', 'retentionFilter');
  const f: Obj = (filter as Obj | null | undefined) ?? {};
  const period = f.period ?? 'Day';
  if (typeof period !== 'string' || !Object.hasOwn(PERIOD_INTERVAL, period)) throw validationError('retentionFilter.period must be one of Hour, Day, Week, Month.', 'retentionFilter.period', 'invalid_choice');
  const type = f.retentionType ?? 'retention_recurring';
  if (type !== 'retention_recurring' && type !== 'retention_first_time') {
    throw validationError('retentionFilter.retentionType must be retention_recurring or retention_first_time.', 'retentionFilter.retentionType', 'invalid_choice');
  }
  if (node.breakdownFilter !== undefined && node.breakdownFilter !== null && !isObject(node.breakdownFilter)) throw validationError('breakdownFilter must be an object.', 'breakdownFilter');
  // One property at a time, as PostHog's runner; HogQL breakdowns are not among its retention breakdowns.
  const breakdown = parsePropertyBreakdown((node.breakdownFilter as Obj | undefined) ?? null, ['event', 'person', 'group'], 1);
  const dateRange = node.dateRange ?? null;
  if (dateRange !== null && !isObject(dateRange)) throw validationError('dateRange must be an object.', 'dateRange');
  return {
    kind: 'RetentionQuery',
    period: period as RetentionPeriod,
    totalIntervals: integerField(f.totalIntervals, DEFAULT_TOTAL_INTERVALS, 1, MAX_TOTAL_INTERVALS, 'retentionFilter.totalIntervals')!,
    firstTime: type === 'retention_first_time',
    target: entity(f.targetEntity, 'retentionFilter.targetEntity'),
    returning: entity(f.returningEntity, 'retentionFilter.returningEntity'),
    minimumOccurrences: integerField(f.minimumOccurrences, 1, 1, 1_000_000, 'retentionFilter.minimumOccurrences')!,
    cumulative: f.cumulative === true,
    dateRange: dateRange as DateRangeInput | null,
    properties: node.properties ?? [],
    filterTestAccounts: node.filterTestAccounts === true,
    groupTypeIndex: integerField(node.aggregation_group_type_index, null, 0, 4, 'aggregation_group_type_index'),
    cohorts: breakdown?.cohorts ?? null,
    breakdown: breakdown && !breakdown.cohorts ? breakdown : null,
  };
}
