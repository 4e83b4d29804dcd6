import { isStoreUnavailable } from '../../kernel/errors.js';
import type { Project, TenancyStore } from '../../store/types.js';

const HIT_TTL_MS = 60_000;
const MISS_TTL_MS = 5_000;
const MAX_ENTRIES = 10_000;

/** Project lookups by public token on the hot path (capture, flags), with short-lived misses. */
export class ProjectCache {
  private readonly entries = new Map<string, { project: Project | null; expires: number }>();
  private readonly listeners: (() => void)[] = [];

  constructor(private readonly tenancy: TenancyStore) {}

  async byToken(token: string): Promise<Project | null> {
    const now = Date.now();
    const hit = this.entries.get(token);
    if (hit && hit.expires > now) return hit.project;
    let project: Project | null;
    try {
      project = await this.tenancy.getProjectByToken(token);
    } catch (error) {
      // The metadata store is down: the last answer, however old, keeps capture (into the NATS
      // log) and flags going; a token never seen fails as before.
      if (hit && isStoreUnavailable(error, 'MetaStoreUnavailableError')) return hit.project;
      throw error;
    }
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(token, { project, expires: now + (project ? HIT_TTL_MS : MISS_TTL_MS) });
    return project;
  }

  /** Called when a project changes (settings, new token). */
  invalidate(): void {
    this.entries.clear();
    for (const listener of this.listeners) listener();
  }

  /** Caches elsewhere (flag threads) that must forget projects whenever this one does. */
  onInvalidate(listener: () => void): void {
    this.listeners.push(listener);
  }
}
