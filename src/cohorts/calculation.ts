/**
 * Recalculating dynamic cohorts: every person of the project is tested against the cohort's
 * definition (the flags engine's predicates, so a property cohort means here what it means in
 * /flags), behavioural filters answered from per-person event counts, static cohorts it names
 * from their stored membership. The result replaces the materialised membership in one
 * transaction. Calculations run one at a time (the machine is small and SQLite has one writer),
 * on change and on a schedule; a calculation asked for while one of the same cohort runs is run
 * once more after it.
 */
import { setImmediate as yieldToEvents } from 'node:timers/promises';
import { compileCohorts, countMatches, referencedCohorts, type CohortDefinition, type CohortScope } from '../flags/engine/cohorts.js';
import { UncomputableFilterError } from '../flags/engine/errors.js';
import { StepBudget } from '../flags/engine/regex.js';
import type { Logger } from '../kernel/logger.js';
import type { CohortStore, EventStore, StoredCohort } from '../store/types.js';
import { countEvents, type EventCounts } from './event-counts.js';

/** Persons read and tested per page; the event loop gets a turn between pages. */
const PAGE = 2_000;
/** The id a preview's definition takes among the project's cohorts (real ones are positive). */
const PREVIEW_ID = -1;

export interface CalculationDeps {
  store: CohortStore;
  /** The event store once it holds every acknowledged event (behavioural filters count in it). */
  queryableEvents(): Promise<EventStore>;
  /** The event store as it is (the membership mirror is written to it). */
  events(): Promise<EventStore>;
  log: Logger;
}

export class CohortCalculations {
  private queue: Promise<void> = Promise.resolve();
  /** Cohorts queued and not started yet: asking again adds nothing. */
  private readonly queued = new Set<number>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(private readonly deps: CalculationDeps) {}

  /** Queues a calculation of the cohort; resolves when it has run (failures are recorded on the cohort). */
  recalculate(projectId: number, id: number): Promise<void> {
    if (this.queued.has(id)) return this.queue;
    this.queued.add(id);
    this.queue = this.queue.then(async () => {
      this.queued.delete(id);
      if (!this.stopped) await this.calculate(projectId, id);
    });
    return this.queue;
  }

  /** The cohort, then every dynamic cohort that names it (directly or through others). */
  async recalculateWithDependents(projectId: number, id: number): Promise<void> {
    const all = await this.deps.store.list(projectId);
    const order = [id, ...dependentsOf(all, id)];
    await Promise.all(order.map((cohortId) => this.recalculate(projectId, cohortId)));
  }

  /** Every cohort of every project: dynamic ones calculated, static ones mirrored again. */
  async recalculateAll(): Promise<void> {
    const all = await this.deps.store.list(null);
    await Promise.all(all.map((c) => this.recalculate(c.project_id, c.id)));
  }

  /**
   * A first pass now (the event store's mirror may have missed the last changes before a
   * crash), then every `intervalSeconds` (0: only on change), skipped while another node
   * sharing the metadata store runs its round.
   */
  start(intervalSeconds: number): void {
    this.recalculateAll().catch((error) => this.deps.log.error({ err: error }, 'cohort recalculation at start-up failed'));
    if (intervalSeconds <= 0) return;
    const tick = () => {
      this.timer = setTimeout(() => {
        // Nodes sharing a metadata store take turns: a round another node runs now is skipped here.
        this.deps.store
          .asScheduler(() => this.recalculateAll())
          .catch((error) => this.deps.log.error({ err: error }, 'scheduled cohort recalculation failed'))
          .finally(() => {
            if (!this.stopped) tick();
          });
      }, intervalSeconds * 1000);
      this.timer.unref();
    };
    tick();
  }

  /**
   * How many persons of the project match a property group (a flag condition's `properties`,
   * cohort filters included), and how many persons there are: the flag editor's preview. It
   * runs in the calculation queue, so a preview and a calculation never test persons at once.
   */
  countMatching(projectId: number, properties: unknown): Promise<{ matching: number; total: number }> {
    const preview: CohortDefinition = { id: PREVIEW_ID, is_static: false, filters: { properties } };
    const run = this.queue.then(async () => {
      const { members, total } = await this.test(projectId, preview, [...(await this.deps.store.list(projectId)), preview]);
      return { matching: members.length, total };
    });
    this.queue = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** Stops the schedule and lets the running calculation finish; queued ones are dropped. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.queue;
  }

  private async calculate(projectId: number, id: number): Promise<void> {
    const { store, log } = this.deps;
    const cohort = await store.get(projectId, id);
    try {
      if (!cohort || cohort.deleted) return await this.mirror(projectId, id, []);
      if (cohort.is_static) return await this.mirror(projectId, id, [...(await store.memberSet(projectId, id))]);
      const version = await store.startCalculation(projectId, id);
      if (version === null) return;
      const { members } = await this.test(projectId, cohort, await store.list(projectId));
      // The mirror gets what was stored (persons deleted meanwhile left out).
      if (await store.finishCalculation(projectId, id, version, members)) await this.mirror(projectId, id, [...(await store.memberSet(projectId, id))]);
    } catch (error) {
      log.error({ err: error, projectId, cohortId: id }, 'cohort calculation failed');
      await store.failCalculation(projectId, id, error instanceof Error ? error.message : String(error));
    }
  }

  /** The event store's copy of the membership, which filters and breakdowns by cohort read. */
  private async mirror(projectId: number, id: number, members: string[]): Promise<void> {
    await (await this.deps.events()).replaceCohortMembers(projectId, id, members);
  }

  /** The persons that match `cohort`'s definition, and how many persons were tested. */
  private async test(projectId: number, cohort: CohortDefinition, all: readonly CohortDefinition[]): Promise<{ members: string[]; total: number }> {
    const { store } = this.deps;
    // Every dynamic cohort is evaluated from its definition here (fresh); static ones are read.
    const compiled = compileCohorts(all, () => true).get(cohort.id);
    if (!compiled?.predicate) throw new Error('the definition cannot be evaluated (invalid, or it contains itself)');
    const now = new Date();
    const counts: EventCounts = compiled.behavioral.length > 0 ? await countEvents(await this.deps.queryableEvents(), projectId, compiled.behavioral, now) : new Map();
    const stored = new Map<number, Set<string>>();
    for (const cohortId of compiled.stored) stored.set(cohortId, await store.memberSet(projectId, cohortId));

    let person = '';
    const scope: CohortScope = {
      now,
      regexBudget: new StepBudget(),
      stored: (cohortId) => stored.get(cohortId)?.has(person) ?? false,
      behavioral: (filter) => countMatches(filter, counts.get(filter)?.get(person) ?? 0),
    };
    const members: string[] = [];
    let total = 0;
    let after: string | null = null;
    for (;;) {
      const page = await store.personPage(projectId, after, PAGE);
      total += page.length;
      for (const row of page) {
        person = row.uuid;
        scope.regexBudget = new StepBudget();
        try {
          if (compiled.predicate(row.properties, scope)) members.push(row.uuid);
        } catch (error) {
          // A regex that needs too much work on this person's value: not a member.
          if (!(error instanceof UncomputableFilterError)) throw error;
        }
      }
      if (page.length < PAGE) return { members, total };
      after = page[page.length - 1].uuid;
      await yieldToEvents();
    }
  }
}

/** Dynamic cohorts that name `id`, directly or through other cohorts, in an order that respects it. */
export function dependentsOf(all: readonly StoredCohort[], id: number): number[] {
  const found: number[] = [];
  const seen = new Set([id]);
  let frontier = [id];
  while (frontier.length > 0) {
    const next: number[] = [];
    for (const cohort of all) {
      if (cohort.is_static || seen.has(cohort.id)) continue;
      if (referencedCohorts(cohort.filters).some((ref) => frontier.includes(ref))) {
        seen.add(cohort.id);
        found.push(cohort.id);
        next.push(cohort.id);
      }
    }
    frontier = next;
  }
  return found;
}
