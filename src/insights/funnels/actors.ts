/**
 * The persons behind one number of a funnel's steps (PostHog's FunnelsActorsQuery): `funnelStep`
 * N > 0 lists those whose counted attempt reached step N (did it, when optional); −N those who
 * reached the step before N (the required one, past optional steps) but not step N. With a breakdown, `breakdown` names one value. The counted
 * attempt is the steps view's, so the list has exactly as many persons as the number it explains.
 * A cohort breakdown's value is a cohort id: its members' funnel. With aggregation_group_type_index
 * the actors are group keys.
 */
import { ir } from '../../hogql/index.js';
import { validationError } from '../../kernel/errors.js';
import { cohortBreakdownIds, withCohort } from '../node-fields.js';
import { bucketIndexOf, buckets, resolveDateRange } from '../time/index.js';
import { instantConstant } from '../events-scope.js';
import type { ActorsPoint, InsightContext } from '../types.js';
import { bestAttempts } from './attempts.js';
import { type FunnelsNode, OTHER_BREAKDOWN, previousRequired } from './parse.js';

export function funnelActors(node: FunnelsNode, point: ActorsPoint, ctx: InsightContext): ir.IrQuery {
  // The actors are then values of an expression (sessions, say), neither persons nor groups.
  if (node.aggregateByHogQL !== null) throw validationError('Listing the actors of a funnel aggregated by a HogQL expression is not supported.', 'source.source.funnelsFilter.funnelAggregateByHogQL', 'invalid_choice');
  if (point.funnelTrendsEntrancePeriodStart) return trendsViewActors(node, point, ctx);
  const step = reachedStep(point.funnelStep, node.steps.length);
  if (node.breakdown?.cohorts && point.breakdown !== null && point.breakdown !== undefined) {
    const [cohort] = cohortBreakdownIds(point.breakdown, 'source.funnelStepBreakdown');
    return funnelActors({ ...node, breakdown: null, properties: withCohort(node.properties, cohort) }, { ...point, breakdown: null }, ctx);
  }
  const values = breakdownValues(point.breakdown, node);
  const range = resolveDateRange(node.dateRange, { interval: node.interval, timeZone: ctx.project.timeZone, weekStartDay: ctx.project.weekStartDay, now: ctx.now });
  const best = bestAttempts(values ? node : { ...node, breakdown: null }, range, ctx, { perPeriod: false });
  const reached = stepCondition(node, step);
  const text = (value: string) => ir.constant(value, 'String');
  const sameValue = values ? ir.op('=', [{ ...ir.column('p', null, 'bd', 'Array'), item: 'String' }, { kind: 'array', items: values.map(text), type: 'Array', item: 'String' }]) : null;
  return ir.select({
    columns: [{ name: 'actor_id', expr: ir.column('p', null, 'a', node.groupTypeIndex === null ? 'UUID' : 'String') }],
    from: { kind: 'subquery', query: best, alias: 'p' },
    where: ir.allOf([reached, sameValue]),
  });
}

/**
 * Step N > 0: reached it (did it, for an optional step); −N: reached the required step before N
 * but not N (an optional step has no drop-off: skipping it is allowed).
 */
function stepCondition(node: FunnelsNode, step: number): ir.IrExpr {
  const steps = ir.column('p', null, 'steps', 'Integer');
  const k = Math.abs(step) - 1;
  if (node.steps[k].optional) {
    if (step < 0) throw validationError('An optional step has no drop-off: list who did it with a positive funnelStep.', 'source.funnelStep');
    return ir.column('p', null, `d${k}`, 'Boolean');
  }
  if (step > 0) return ir.op('>=', [steps, ir.constant(step, 'Integer')]);
  return ir.op('=', [steps, ir.constant(previousRequired(node.steps, k) + 1, 'Integer')]);
}

function reachedStep(value: number | null | undefined, steps: number): number {
  const valid = typeof value === 'number' && Number.isInteger(value) && value !== 0 && value >= -steps && value <= steps && value !== -1;
  if (!valid) throw validationError(`funnelStep must be a step from 1 to ${steps}, or from -2 to -${steps} for the persons who dropped off before that step.`, 'source.funnelStep');
  return value;
}

/** The breakdown value's texts (one per breakdown property), or null for every value. */
function breakdownValues(value: unknown, node: FunnelsNode): string[] | null {
  if (value === null || value === undefined) return null;
  if (!node.breakdown) throw validationError('The funnel has no breakdown to pick a value of.', 'source.funnelStepBreakdown');
  const values = (Array.isArray(value) ? value : [value]).map((v) => (v === null ? '' : String(v)));
  if (values.length !== node.breakdown.parts.length) throw validationError(`funnelStepBreakdown needs ${node.breakdown.parts.length} value(s).`, 'source.funnelStepBreakdown');
  if (values.length === 1 && values[0] === OTHER_BREAKDOWN) throw validationError('The persons behind "Other" cannot be listed; pick a breakdown value.', 'source.funnelStepBreakdown');
  return values;
}

/**
 * The persons behind one point of the trends view: those whose counted attempt entered (reached
 * the `funnelFromStep`) in the period starting `funnelTrendsEntrancePeriodStart`, and converted
 * (reached `funnelToStep`), or with `funnelTrendsDropOff` did not.
 */
function trendsViewActors(node: FunnelsNode, point: ActorsPoint, ctx: InsightContext): ir.IrQuery {
  const attr = 'source.funnelTrendsEntrancePeriodStart';
  const range = resolveDateRange(node.dateRange, { interval: node.interval, timeZone: ctx.project.timeZone, weekStartDay: ctx.project.weekStartDay, now: ctx.now });
  const list = buckets(range);
  const at = bucketIndexOf(list, point.funnelTrendsEntrancePeriodStart!);
  if (at < 0) throw validationError(`${String(point.funnelTrendsEntrancePeriodStart).slice(0, 40)} is not an entry period of the funnel's range.`, attr);
  const from = at === 0 ? range.readFrom : list[at].start;
  const to = at + 1 < list.length ? list[at + 1].start : range.to;
  const best = bestAttempts({ ...node, breakdown: null }, range, ctx, { perPeriod: true });
  const steps = ir.column('p', null, 'steps', 'Integer');
  const entry = ir.column('p', null, 'ts0', 'DateTime');
  const converted = ir.op('>=', [steps, ir.constant(node.toStep + 1, 'Integer')]);
  return ir.select({
    columns: [{ name: 'actor_id', expr: ir.column('p', null, 'a', node.groupTypeIndex === null ? 'UUID' : 'String') }],
    from: { kind: 'subquery', query: best, alias: 'p' },
    where: ir.allOf([
      ir.op('>=', [entry, instantConstant(from)]),
      ir.op('<', [entry, instantConstant(to)]),
      ir.op('>=', [steps, ir.constant(node.fromStep + 1, 'Integer')]),
      point.funnelTrendsDropOff ? ir.op('not', [converted]) : converted,
    ]),
  });
}
