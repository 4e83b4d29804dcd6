/**
 * An action as one boolean IR expression over `events e`: the OR of its steps, each the AND of
 * what the step names (event, URL, element text/href/tag/selector, property filters). Built
 * from IR nodes and constants only, so every dialect prints it and user values stay bound.
 * Semantics follow PostHog's action steps: URL matching defaults to `contains` (case-sensitive,
 * a LIKE), text and href to `exact` (their `contains` ignores case, an ILIKE); an element
 * condition holds when any element of the autocapture chain matches.
 */
import { ir } from '../hogql/index.js';
import { anyElement, selectorCondition, type ElementAttribute } from '../hogql/elements.js';
import { compilePropertyFilters, type FilterSources } from '../hogql/property-filters.js';
import type { ActionStep, StepMatching } from '../store/types.js';

type IrExpr = ir.IrExpr;

const EVENT = ir.column('e', 'events', 'event', 'String');
const FALSE: IrExpr = ir.constant(false, 'Boolean');

/** Sources with the chain: an action can only be matched against events. */
export type ActionSources = FilterSources & { elementsChain: IrExpr };

/** `attr`: where the steps came from in the request (`steps`, or the node naming the action). */
export function actionCondition(steps: readonly ActionStep[], sources: ActionSources, attr = 'steps'): IrExpr {
  if (steps.length === 0) return FALSE;
  return ir.anyOf(steps.map((step, index) => stepCondition(step, sources, `${attr}.${index}`) ?? ir.TRUE));
}

export function stepCondition(step: ActionStep, sources: ActionSources, attr: string): IrExpr | null {
  const chain = sources.elementsChain;
  const element = (attribute: ElementAttribute, value: string | null, matching: StepMatching | null) =>
    value === null ? null : anyElement(chain, attribute, (text) => textMatches(text, value, matching ?? 'exact', 'ilike'));
  return ir.allOf([
    step.event ? ir.op('=', [EVENT, ir.constant(step.event, 'String')]) : null,
    step.url === null ? null : textMatches(sources.event('$current_url').text, step.url, step.url_matching ?? 'contains', 'like'),
    element('text', step.text, step.text_matching),
    element('href', step.href, step.href_matching),
    element('tag_name', step.tag_name, 'exact'),
    step.selector === null ? null : selectorCondition(chain, step.selector),
    step.properties.length > 0 ? compilePropertyFilters(step.properties, sources, `${attr}.properties`) : null,
  ]);
}

/** `contains` is a LIKE or an ILIKE (`%` and `_` in the value stay literal). */
function textMatches(text: IrExpr, value: string, matching: StepMatching, contains: 'like' | 'ilike'): IrExpr {
  const pattern = ir.constant(value, 'String');
  switch (matching) {
    case 'exact':
      return ir.op('=', [text, pattern]);
    case 'regex':
      return ir.call('match', [text, pattern], 'Boolean');
    case 'contains':
      return ir.op(contains, [text, ir.constant(`%${value.replace(/[\\%_]/g, '\\$&')}%`, 'String')]);
  }
}
