/** TrendsQuery (query-api.md §1.7.1) validated, with defaults applied. */
import { validationError } from '../../kernel/errors.js';
import { cohortBreakdownIds } from '../node-fields.js';
import { INTERVALS, type DateRangeInput, type Interval } from '../time/index.js';
import { choice, optionalBoolean, optionalInteger, optionalString, parseDateRange, parseSeries, record, type SeriesNode } from '../series/node.js';
import { FormulaError, maxSeriesIndex, parseFormula, type Formula } from './formula.js';

export const TRENDS_MATHS = [
  'total',
  'dau',
  'weekly_active',
  'monthly_active',
  'unique_session',
  'unique_group',
  'sum',
  'avg',
  'min',
  'max',
  'median',
  'p75',
  'p90',
  'p95',
  'p99',
  'hogql',
  'first_time_for_user',
  'avg_count_per_actor',
  'min_count_per_actor',
  'max_count_per_actor',
  'median_count_per_actor',
  'p75_count_per_actor',
  'p90_count_per_actor',
  'p95_count_per_actor',
  'p99_count_per_actor',
] as const;
export const PROPERTY_MATHS = new Set(['sum', 'avg', 'min', 'max', 'median', 'p75', 'p90', 'p95', 'p99']);

/** Displays with one number per series over the whole range (aggregated_value). */
export const TOTAL_VALUE_DISPLAYS = new Set(['BoldNumber', 'ActionsPie', 'ActionsBarValue', 'ActionsTable', 'WorldMap', 'CalendarHeatmap', 'Progress']);
const DISPLAYS = [
  'ActionsLineGraph',
  'ActionsBar',
  'ActionsAreaGraph',
  'ActionsUnstackedBar',
  'ActionsStackedBar',
  'ActionsLineGraphCumulative',
  ...TOTAL_VALUE_DISPLAYS,
] as const;

export const BREAKDOWN_TYPES = ['event', 'person', 'hogql'] as const;
export type BreakdownType = (typeof BREAKDOWN_TYPES)[number];
export interface Breakdown {
  /** `cohort`: one series per cohort of `cohorts` (query-api.md §1.4.5), never combined with others. */
  type: BreakdownType | 'cohort' | 'group';
  /** The group type of a `group` breakdown. */
  groupTypeIndex?: number;
  /** Cohort ids, and `all` for everyone, of a cohort breakdown. */
  cohorts?: (number | 'all')[];
  /** Property key, or the HogQL expression. */
  property: string;
  /** Request field of the property, for errors. */
  attr: string;
}

export const DEFAULT_BREAKDOWN_LIMIT = 25;
const MAX_BREAKDOWN_LIMIT = 1_000;
const MAX_BREAKDOWNS = 3;

export interface TrendsFormula {
  formula: string;
  custom_name: string | null;
  tree: Formula;
}

export interface TrendsNode {
  kind: 'TrendsQuery';
  series: SeriesNode[];
  interval: Interval;
  dateRange: DateRangeInput;
  properties: unknown;
  filterTestAccounts: boolean;
  breakdowns: Breakdown[];
  breakdownLimit: number;
  hideOther: boolean;
  /** null: no comparison; otherwise the previous period, shifted by `compareTo` when set. */
  compare: { compareTo: string | null } | null;
  display: string;
  formulas: TrendsFormula[];
  smoothingIntervals: number;
}

export function parseTrends(node: Record<string, unknown>): TrendsNode {
  const series = parseSeries(node.series, TRENDS_MATHS);
  series.forEach((s, i) => {
    if (PROPERTY_MATHS.has(s.math) && !s.math_property) {
      throw validationError(`math ${s.math} needs math_property.`, `series.${i}.math_property`, 'required');
    }
    if (s.math === 'hogql' && !s.math_hogql) throw validationError('math hogql needs math_hogql, an aggregate such as "sum(properties.price)".', `series.${i}.math_hogql`, 'required');
  });
  const trendsFilter = record(node.trendsFilter, 'trendsFilter');
  const display = choice(trendsFilter.display, DISPLAYS, 'ActionsLineGraph', 'trendsFilter.display');
  const breakdownFilter = record(node.breakdownFilter, 'breakdownFilter');
  const breakdowns = parseBreakdowns(breakdownFilter);
  const firstTime = series.findIndex((s) => s.math === 'first_time_for_user');
  if (firstTime >= 0 && breakdowns.length > 0) {
    throw validationError('math first_time_for_user cannot be combined with a breakdown yet.', `series.${firstTime}.math`, 'invalid_choice');
  }
  return {
    kind: 'TrendsQuery',
    series,
    interval: choice(node.interval, INTERVALS, 'day', 'interval'),
    dateRange: parseDateRange(node.dateRange),
    properties: node.properties ?? null,
    filterTestAccounts: optionalBoolean(node.filterTestAccounts, 'filterTestAccounts'),
    breakdowns,
    breakdownLimit: optionalInteger(breakdownFilter.breakdown_limit, 'breakdownFilter.breakdown_limit', 1, MAX_BREAKDOWN_LIMIT) ?? DEFAULT_BREAKDOWN_LIMIT,
    hideOther: optionalBoolean(breakdownFilter.breakdown_hide_other_aggregation, 'breakdownFilter.breakdown_hide_other_aggregation'),
    compare: parseCompare(node.compareFilter),
    display,
    formulas: parseFormulas(trendsFilter, series.length),
    smoothingIntervals: optionalInteger(trendsFilter.smoothingIntervals, 'trendsFilter.smoothingIntervals', 1, 1_000) ?? 1,
  };
}

function parseBreakdowns(filter: Record<string, unknown>): Breakdown[] {
  if (filter.breakdowns !== undefined && filter.breakdowns !== null) {
    if (!Array.isArray(filter.breakdowns)) throw validationError('breakdownFilter.breakdowns must be a list.', 'breakdownFilter.breakdowns');
    if (filter.breakdowns.length > MAX_BREAKDOWNS) {
      throw validationError(`At most ${MAX_BREAKDOWNS} breakdowns at once.`, 'breakdownFilter.breakdowns');
    }
    return filter.breakdowns.map((item, i) => {
      const attr = `breakdownFilter.breakdowns.${i}`;
      const b = record(item, attr);
      return breakdown(b.type, b.property, attr, 'property', b.group_type_index);
    });
  }
  if (filter.breakdown === undefined || filter.breakdown === null) return [];
  if (filter.breakdown_type === 'cohort') return [cohortBreakdown(filter.breakdown)];
  return [breakdown(filter.breakdown_type, filter.breakdown, 'breakdownFilter', 'breakdown', filter.breakdown_group_type_index)];
}

function cohortBreakdown(raw: unknown): Breakdown {
  const attr = 'breakdownFilter.breakdown';
  return { type: 'cohort', property: 'cohort', attr, cohorts: cohortBreakdownIds(raw, attr) };
}

/** `groupIndex`: `breakdown_group_type_index` (or a breakdowns item's `group_type_index`) of a group breakdown. */
function breakdown(type: unknown, property: unknown, attr: string, propertyKey: string, groupIndex: unknown): Breakdown {
  const typeAttr = `${attr}.${propertyKey === 'property' ? 'type' : 'breakdown_type'}`;
  if (type === 'cohort') throw validationError('A cohort breakdown is given as breakdown_type "cohort" with breakdown listing the cohorts.', typeAttr, 'invalid_choice');
  const kind = type === 'group' ? 'group' : choice(type, BREAKDOWN_TYPES, 'event', typeAttr);
  if (typeof property !== 'string' || property === '') {
    throw validationError(`${attr}.${propertyKey} must be a property name${kind === 'hogql' ? ' (a HogQL expression)' : ''}.`, `${attr}.${propertyKey}`);
  }
  if (kind !== 'group') return { type: kind, property, attr: `${attr}.${propertyKey}` };
  const indexAttr = propertyKey === 'property' ? `${attr}.group_type_index` : `${attr}.breakdown_group_type_index`;
  const groupTypeIndex = optionalInteger(groupIndex, indexAttr, 0, 4);
  if (groupTypeIndex === null) throw validationError('A group breakdown needs the group type index, 0 to 4.', indexAttr);
  return { type: kind, property, attr: `${attr}.${propertyKey}`, groupTypeIndex };
}

function parseCompare(value: unknown): TrendsNode['compare'] {
  const filter = record(value, 'compareFilter');
  if (!optionalBoolean(filter.compare, 'compareFilter.compare')) return null;
  return { compareTo: optionalString(filter.compare_to, 'compareFilter.compare_to') };
}

/** `formulaNodes`, else the legacy `formulas` list or `formula` string. */
function parseFormulas(filter: Record<string, unknown>, seriesCount: number): TrendsFormula[] {
  let items: Array<{ formula: unknown; custom_name?: unknown; attr: string }> = [];
  if (Array.isArray(filter.formulaNodes)) {
    items = filter.formulaNodes.map((n, i) => ({ ...record(n, `trendsFilter.formulaNodes.${i}`), attr: `trendsFilter.formulaNodes.${i}.formula` }) as never);
  } else if (filter.formulaNodes !== undefined && filter.formulaNodes !== null) {
    throw validationError('trendsFilter.formulaNodes must be a list.', 'trendsFilter.formulaNodes');
  } else if (Array.isArray(filter.formulas)) {
    items = filter.formulas.map((formula, i) => ({ formula, attr: `trendsFilter.formulas.${i}` }));
  } else if (typeof filter.formula === 'string' && filter.formula.trim() !== '') {
    items = [{ formula: filter.formula, attr: 'trendsFilter.formula' }];
  }
  return items.map(({ formula, custom_name, attr }) => {
    if (typeof formula !== 'string') throw validationError('A formula must be a string such as "A/B*100".', attr);
    let tree: Formula;
    try {
      tree = parseFormula(formula);
    } catch (error) {
      if (error instanceof FormulaError) throw validationError(error.message, attr);
      throw error;
    }
    if (maxSeriesIndex(tree) >= seriesCount) throw validationError(`The formula refers to a series that does not exist (there are ${seriesCount}).`, attr);
    return { formula: formula.trim(), custom_name: optionalString(custom_name, attr.replace(/formula$/, 'custom_name')), tree };
  });
}
