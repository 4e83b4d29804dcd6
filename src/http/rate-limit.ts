/**
 * Request budget per personal API key (or browser session) on /api/ (PostHog's burst rate,
 * `posthog/rate_limit.py` in github.com/PostHog/posthog; docs/api.md, "Rate limit"): a fixed
 * one-minute window per credential, counted under its sha256 so the credential itself is never
 * held. Requests without one are not counted; they fail authentication anyway. The windows are
 * the store's where nodes share one, so the budget holds across them.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { sha256Hex } from '../util/keys.js';
import type { RateWindows } from '../util/rate-windows.js';
import { ApiError } from '../kernel/errors.js';

const WINDOW_MS = 60_000;

export const throttled = (seconds: number) =>
  new ApiError(429, 'throttled_error', 'throttled', `Request was throttled. Expected available in ${seconds} seconds.`, null, {
    'retry-after': String(seconds),
  });

/** Whole seconds until a window that began at `start` ends (at least 1). */
export const secondsLeft = (start: number, windowMs: number, now: number) => Math.max(1, Math.ceil((start + windowMs - now) / 1000));

/**
 * `limit`: requests per credential and minute; 0 turns the limit off. `credentialOf` names what
 * a request is counted under (ApiAccess.credentialOf: the key, else the session token). A
 * request the counter cannot count (the shared store does not answer) goes through: the API
 * behind it needs that store anyway, and answers for itself.
 */
export async function registerApiRateLimit(
  app: FastifyInstance,
  limit: number,
  windows: RateWindows,
  credentialOf: (request: FastifyRequest) => string | null,
): Promise<void> {
  if (limit === 0) return;
  // A callback hook: it runs on every request, and an async one costs a promise each time.
  app.addHook('onRequest', (request, _reply, done) => {
    if (!request.url.startsWith('/api/')) return done();
    const credential = credentialOf(request);
    if (!credential) return done();
    const now = Date.now();
    windows.add(`api:${sha256Hex(credential)}`, 1, WINDOW_MS, now).then(
      (window) => done(window.count > limit ? throttled(secondsLeft(window.start, WINDOW_MS, now)) : undefined),
      (err: unknown) => {
        request.log.warn({ err }, 'could not count a request against its rate limit; let through');
        done();
      },
    );
  });
}
