/**
 * Cohorts as flag evaluation reads them. Property-only cohorts are evaluated from their
 * definition against the request's merged person properties (fresh, overrides included, and the
 * same answer posthog-node's local evaluation gives); static and behavioural cohorts are read
 * from the stored membership, which each calculation replaces (docs/cohorts.md, freshness).
 */
import { compileCohorts, type CohortDefinition, type CohortScope, type CompiledCohort } from '../engine/cohorts.js';
import { UncomputableFilterError } from '../engine/errors.js';
import type { CohortLookup, FeatureFlag } from '../engine/types.js';
import { cohortIdOf, referencedCohorts } from '../engine/cohorts.js';

export class FlagCohorts {
  private readonly compiled: Map<number, CompiledCohort>;
  /** Some flag names a cohort that is read from stored membership. */
  readonly needsMembership: boolean;
  /**
   * What local evaluation is sent (`cohorts`): id → property group of every property-only cohort
   * the flags name, directly or through other cohorts. Static and behavioural cohorts are left
   * out, so SDKs ask /flags for flags naming them.
   */
  readonly inlineDefinitions: Record<string, unknown>;

  constructor(definitions: readonly CohortDefinition[], flags: readonly FeatureFlag[]) {
    this.compiled = compileCohorts(definitions, (cohort) => cohort.propertyOnly);
    const named = referencedByFlags(flags);
    this.needsMembership = named.some((id) => {
      const cohort = this.compiled.get(id);
      return cohort !== undefined && cohort.predicate === null;
    });
    this.inlineDefinitions = inlineClosure(definitions, this.compiled, named);
  }

  /** `memberOf`: the person's stored memberships, or null when they were not read. */
  lookup(memberOf: readonly number[] | null): CohortLookup {
    const stored = (id: number) => {
      if (memberOf === null) throw new UncomputableFilterError(`membership of cohort ${id} could not be read`);
      return memberOf.includes(id);
    };
    return {
      contains: (id, properties, match) => {
        const cohort = this.compiled.get(id);
        if (!cohort) return false; // deleted or never existed: holds nobody
        if (cohort.predicate === null) return stored(id);
        const scope: CohortScope = {
          now: match.now,
          regexBudget: match.regexBudget,
          stored,
          behavioral: () => {
            throw new UncomputableFilterError(`cohort ${id} has behavioural filters`);
          },
        };
        return cohort.predicate(properties, scope);
      },
    };
  }
}

/** Cohort ids named by the flags' conditions. */
function referencedByFlags(flags: readonly FeatureFlag[]): number[] {
  const ids: number[] = [];
  for (const flag of flags) {
    for (const condition of [...(flag.filters.groups ?? []), ...(flag.filters.super_groups ?? [])]) {
      for (const filter of condition.properties ?? []) {
        const id = filter.type === 'cohort' ? cohortIdOf(filter.value) : null;
        if (id !== null) ids.push(id);
      }
    }
  }
  return ids;
}

function inlineClosure(definitions: readonly CohortDefinition[], compiled: Map<number, CompiledCohort>, named: number[]): Record<string, unknown> {
  const byId = new Map(definitions.map((d) => [d.id, d]));
  const out: Record<string, unknown> = {};
  const stack = [...named];
  while (stack.length > 0) {
    const id = stack.pop()!;
    const definition = byId.get(id);
    if (String(id) in out || !definition || !compiled.get(id)?.predicate) continue;
    out[String(id)] = definition.filters.properties;
    stack.push(...referencedCohorts(definition.filters));
  }
  return out;
}
