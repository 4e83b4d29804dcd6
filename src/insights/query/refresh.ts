/**
 * `refresh` as PostHog's /query/ reads it (query-api.md §1.2). Without a job queue every mode
 * computes synchronously; what differs is whether a fresh enough cached result may answer.
 * The endpoint turns `force_cache` (and an absent refresh) into `blocking`, as PostHog does.
 */
import { validationError } from '../../kernel/errors.js';

export type RefreshMode = 'blocking' | 'force_blocking' | 'async' | 'lazy_async' | 'force_async' | 'force_cache' | 'async_except_on_cache_miss';

const MODES: readonly RefreshMode[] = ['blocking', 'force_blocking', 'async', 'lazy_async', 'force_async', 'force_cache', 'async_except_on_cache_miss'];

/** May a cached result answer, and must it be fresh? */
export interface CachePolicy {
  useCache: boolean;
  /** Accept a cached result past its freshness (lazy modes). */
  acceptStale: boolean;
}

export function cachePolicy(refresh: unknown): CachePolicy {
  if (refresh === undefined || refresh === null || refresh === false) return { useCache: true, acceptStale: false };
  if (refresh === true) return { useCache: false, acceptStale: false };
  if (typeof refresh !== 'string' || !MODES.includes(refresh as RefreshMode)) {
    throw validationError(`refresh must be one of ${MODES.join(', ')}, or a boolean.`, 'refresh', 'invalid_choice');
  }
  if (refresh === 'force_blocking' || refresh === 'force_async') return { useCache: false, acceptStale: false };
  return { useCache: true, acceptStale: refresh === 'lazy_async' };
}
