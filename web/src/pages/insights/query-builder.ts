/**
 * What the insight builder's form holds, and the query node it stands for (query-api.md §1.7–1.12).
 * Pure: the form state goes in, a TrendsQuery / FunnelsQuery / … comes out, and back again when a
 * saved insight is opened.
 */

export type InsightKind = 'TrendsQuery' | 'FunnelsQuery' | 'RetentionQuery' | 'LifecycleQuery' | 'StickinessQuery' | 'PathsQuery';
export type TrendsDisplay = 'ActionsLineGraph' | 'ActionsBar' | 'BoldNumber' | 'ActionsTable';

export const KINDS: { kind: InsightKind; label: string }[] = [
  { kind: 'TrendsQuery', label: 'Trends' },
  { kind: 'FunnelsQuery', label: 'Funnel' },
  { kind: 'RetentionQuery', label: 'Retention' },
  { kind: 'LifecycleQuery', label: 'Lifecycle' },
  { kind: 'StickinessQuery', label: 'Stickiness' },
  { kind: 'PathsQuery', label: 'Paths' },
];

export const MATHS = [
  { value: 'total', label: 'Total count' },
  { value: 'dau', label: 'Unique users' },
  { value: 'weekly_active', label: 'Weekly active users' },
  { value: 'monthly_active', label: 'Monthly active users' },
  { value: 'unique_session', label: 'Unique sessions' },
  { value: 'sum', label: 'Sum of a property' },
  { value: 'avg', label: 'Average of a property' },
  { value: 'max', label: 'Maximum of a property' },
  { value: 'min', label: 'Minimum of a property' },
  { value: 'median', label: 'Median of a property' },
  { value: 'avg_count_per_actor', label: 'Average events per user' },
  { value: 'max_count_per_actor', label: 'Maximum events per user' },
  { value: 'median_count_per_actor', label: 'Median events per user' },
];
export const PROPERTY_MATHS = new Set(['sum', 'avg', 'max', 'min', 'median']);

export const DISPLAYS: { value: TrendsDisplay; label: string }[] = [
  { value: 'ActionsLineGraph', label: 'Line' },
  { value: 'ActionsBar', label: 'Bar' },
  { value: 'BoldNumber', label: 'Number' },
  { value: 'ActionsTable', label: 'Table' },
];

export const DATE_RANGES = [
  { value: '-24h', label: 'Last 24 hours' },
  { value: '-7d', label: 'Last 7 days' },
  { value: '-14d', label: 'Last 14 days' },
  { value: '-30d', label: 'Last 30 days' },
  { value: '-90d', label: 'Last 90 days' },
  { value: '-12m', label: 'Last 12 months' },
  { value: 'all', label: 'All time' },
];

export const INTERVALS = ['hour', 'day', 'week', 'month'] as const;

export interface Series {
  event: string;
  math: string;
  mathProperty: string;
}

export interface BuilderState {
  kind: InsightKind;
  series: Series[];
  dateFrom: string;
  interval: (typeof INTERVALS)[number];
  breakdown: string;
  breakdownType: 'event' | 'person';
  compare: boolean;
  display: TrendsDisplay;
  /** Funnels: conversion window in days. */
  windowDays: number;
  /** Retention: the event that starts a cohort and the one that counts as coming back. */
  retentionPeriod: 'Day' | 'Week' | 'Month';
  /** Paths: the first item of every path ('' = anywhere). */
  pathStart: string;
}

export const initialState = (kind: InsightKind = 'TrendsQuery'): BuilderState => ({
  kind,
  series: kind === 'FunnelsQuery' ? [series('$pageview'), series('')] : kind === 'RetentionQuery' ? [series('$pageview'), series('$pageview')] : [series('$pageview')],
  dateFrom: '-7d',
  interval: 'day',
  breakdown: '',
  breakdownType: 'event',
  compare: false,
  display: 'ActionsLineGraph',
  windowDays: 14,
  retentionPeriod: 'Day',
  pathStart: '',
});

export const series = (event: string): Series => ({ event, math: 'total', mathProperty: '' });

const eventsNode = (s: Series, withMath: boolean) => ({
  kind: 'EventsNode',
  event: s.event === '' ? null : s.event,
  name: s.event === '' ? 'All events' : s.event,
  ...(withMath && { math: s.math, ...(PROPERTY_MATHS.has(s.math) && { math_property: s.mathProperty }) }),
});

const breakdownFilter = (state: BuilderState) =>
  state.breakdown.trim() === '' ? undefined : { breakdown: state.breakdown.trim(), breakdown_type: state.breakdownType };

/** The query node the form describes. */
export function toQuery(state: BuilderState): Record<string, unknown> {
  const dateRange = { date_from: state.dateFrom };
  switch (state.kind) {
    case 'TrendsQuery':
      return {
        kind: 'TrendsQuery',
        series: state.series.map((s) => eventsNode(s, true)),
        interval: state.interval,
        dateRange,
        ...(breakdownFilter(state) && { breakdownFilter: breakdownFilter(state) }),
        ...(state.compare && { compareFilter: { compare: true } }),
        trendsFilter: { display: state.display },
      };
    case 'FunnelsQuery':
      return {
        kind: 'FunnelsQuery',
        series: state.series.map((s) => eventsNode(s, false)),
        dateRange,
        ...(breakdownFilter(state) && { breakdownFilter: breakdownFilter(state) }),
        funnelsFilter: { funnelWindowInterval: state.windowDays, funnelWindowIntervalUnit: 'day', funnelVizType: 'steps', funnelOrderType: 'ordered' },
      };
    case 'RetentionQuery': {
      const entity = (s: Series | undefined) => ({ id: s?.event || '$pageview', name: s?.event || '$pageview', type: 'events', kind: 'EventsNode' });
      return {
        kind: 'RetentionQuery',
        dateRange,
        retentionFilter: { period: state.retentionPeriod, totalIntervals: 8, retentionType: 'retention_first_time', targetEntity: entity(state.series[0]), returningEntity: entity(state.series[1]) },
      };
    }
    case 'LifecycleQuery':
      return { kind: 'LifecycleQuery', series: [eventsNode(state.series[0] ?? series('$pageview'), false)], interval: state.interval, dateRange };
    case 'StickinessQuery':
      return { kind: 'StickinessQuery', series: state.series.map((s) => eventsNode(s, false)), interval: state.interval, dateRange, ...(state.compare && { compareFilter: { compare: true } }) };
    case 'PathsQuery':
      return {
        kind: 'PathsQuery',
        dateRange,
        pathsFilter: { includeEventTypes: ['$pageview', 'custom_event'], stepLimit: 5, edgeLimit: 50, ...(state.pathStart.trim() && { startPoint: state.pathStart.trim() }) },
      };
  }
}

/** The form that reproduces a saved query, as far as the form can say it (other fields keep their defaults). */
export function fromQuery(node: Record<string, any>): BuilderState {
  const kind = (KINDS.some((k) => k.kind === node.kind) ? node.kind : 'TrendsQuery') as InsightKind;
  const state = initialState(kind);
  const seriesOf = (list: any[] | undefined) =>
    (list ?? []).map((s) => ({ event: s.event ?? '', math: s.math ?? 'total', mathProperty: s.math_property ?? '' }));
  if (Array.isArray(node.series) && node.series.length > 0) state.series = seriesOf(node.series);
  if (kind === 'RetentionQuery') {
    const f = node.retentionFilter ?? {};
    state.series = [series(f.targetEntity?.id ?? '$pageview'), series(f.returningEntity?.id ?? '$pageview')];
    if (['Day', 'Week', 'Month'].includes(f.period)) state.retentionPeriod = f.period;
  }
  if (typeof node.dateRange?.date_from === 'string') state.dateFrom = node.dateRange.date_from;
  if ((INTERVALS as readonly string[]).includes(node.interval)) state.interval = node.interval;
  if (node.breakdownFilter?.breakdown !== undefined) {
    state.breakdown = String(node.breakdownFilter.breakdown);
    state.breakdownType = node.breakdownFilter.breakdown_type === 'person' ? 'person' : 'event';
  }
  state.compare = node.compareFilter?.compare === true;
  if (DISPLAYS.some((d) => d.value === node.trendsFilter?.display)) state.display = node.trendsFilter.display;
  if (typeof node.funnelsFilter?.funnelWindowInterval === 'number') state.windowDays = node.funnelsFilter.funnelWindowInterval;
  if (typeof node.pathsFilter?.startPoint === 'string') state.pathStart = node.pathsFilter.startPoint;
  return state;
}

/** A name for an unnamed insight: what it counts. */
export function describe(state: BuilderState): string {
  const events = state.series.map((s) => s.event || 'All events');
  const label = KINDS.find((k) => k.kind === state.kind)!.label;
  if (state.kind === 'FunnelsQuery') return `Funnel: ${events.join(' → ')}`;
  if (state.kind === 'PathsQuery') return state.pathStart ? `Paths from ${state.pathStart}` : 'Paths';
  return `${label}: ${events.join(', ')}`;
}
