/**
 * The flags of each project, with its cohort definitions, kept in memory for a few seconds:
 * /decide and /flags read them on every request. Flag and cohort writes invalidate a project at once; the time limit only bounds
 * staleness when something else (another node, the CLI) changes the store.
 */
import { compileFlags, type CompiledFlag, type CompiledFlags } from '../engine/index.js';
import type { CohortDefinition } from '../engine/cohorts.js';
import type { FlagStore, StoredFlag } from '../../store/types.js';
import { FlagCohorts } from './cohort-lookup.js';

export interface ProjectFlags {
  /** Every non-deleted flag, active or not (dependencies may point at inactive ones). */
  all: StoredFlag[];
  /** The flags /decide and /flags evaluate. */
  active: StoredFlag[];
  byKey: Map<string, StoredFlag>;
  /** Active flags with `ensure_experience_continuity`. */
  continuityKeys: string[];
  /** `all`, compiled for evaluation once per load rather than once per request. */
  compiled: CompiledFlags;
  /** `active`, compiled (what a request without `flag_keys_to_evaluate` evaluates). */
  activeCompiled: CompiledFlag[];
  /** The project's cohorts; null where the store keeps none (cohort filters then fail). */
  cohorts: FlagCohorts | null;
}

const TTL_MS = 3_000;
const MAX_PROJECTS = 10_000;

function projectFlags(all: StoredFlag[], cohorts: CohortDefinition[] | null): ProjectFlags {
  const active = all.filter((flag) => flag.active);
  const compiled = compileFlags(all);
  return {
    all,
    active,
    byKey: new Map(all.map((flag) => [flag.key, flag])),
    continuityKeys: active.filter((flag) => flag.ensure_experience_continuity).map((flag) => flag.key),
    compiled,
    activeCompiled: compiled.flags.filter((flag) => flag.source.active),
    cohorts: cohorts === null ? null : new FlagCohorts(cohorts, active),
  };
}

/** No project has this id: `invalidate(ALL_PROJECTS)` forgets them all, here and in flag threads. */
export const ALL_PROJECTS = -1;

export class FlagCache {
  private readonly entries = new Map<number, { flags: Promise<ProjectFlags>; expires: number }>();
  private readonly listeners: ((projectId: number) => void)[] = [];

  constructor(
    private readonly store: FlagStore,
    private readonly ttlMs = TTL_MS,
  ) {}

  get(projectId: number): Promise<ProjectFlags> {
    const now = Date.now();
    const hit = this.entries.get(projectId);
    if (hit && hit.expires > now) return hit.flags;
    // Concurrent requests share one load; a failed load is not remembered.
    const flags = Promise.all([this.store.list(projectId), this.store.cohortDefinitions(projectId)]).then(([all, cohorts]) => projectFlags(all, cohorts));
    flags.catch(() => {
      if (this.entries.get(projectId)?.flags === flags) this.entries.delete(projectId);
    });
    if (this.entries.size >= MAX_PROJECTS) this.entries.clear();
    this.entries.set(projectId, { flags, expires: now + this.ttlMs });
    return flags;
  }

  /** `ALL_PROJECTS` forgets every project (changes from other nodes may have been missed). */
  invalidate(projectId: number): void {
    if (projectId === ALL_PROJECTS) this.entries.clear();
    else this.entries.delete(projectId);
    for (const listener of this.listeners) listener(projectId);
  }

  /** Caches elsewhere (flag threads) that must forget a project whenever this one does. */
  onInvalidate(listener: (projectId: number) => void): void {
    this.listeners.push(listener);
  }
}
