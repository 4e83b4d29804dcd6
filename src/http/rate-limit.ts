/**
 * Request budget per personal API key on /api/ (PostHog's burst rate, `posthog/rate_limit.py` in
 * github.com/PostHog/posthog; docs/api.md, "Rate limit"): a fixed one-minute window per key,
 * counted under the key's sha256 so the key itself is never held. Requests without a key are not
 * counted; they fail authentication anyway.
 */
import type { FastifyInstance } from 'fastify';
import { sha256Hex } from '../util/keys.js';
import { presentedKey } from './auth.js';
import { ApiError } from '../kernel/errors.js';

const WINDOW_MS = 60_000;
/** Above this many tracked keys, finished windows are dropped (bounded memory under key spraying). */
const MAX_TRACKED = 10_000;

export const throttled = (seconds: number) =>
  new ApiError(429, 'throttled_error', 'throttled', `Request was throttled. Expected available in ${seconds} seconds.`, null, {
    'retry-after': String(seconds),
  });

/** `limit`: requests per key and minute; 0 turns the limit off. */
export async function registerApiRateLimit(app: FastifyInstance, limit: number): Promise<void> {
  if (limit === 0) return;
  const windows = new Map<string, { start: number; count: number }>();

  // A callback hook: it runs on every request, and an async one costs a promise each time.
  app.addHook('onRequest', (request, _reply, done) => {
    if (!request.url.startsWith('/api/')) return done();
    const key = presentedKey(request);
    if (!key) return done();
    const id = sha256Hex(key);
    const now = Date.now();
    let window = windows.get(id);
    if (!window || now - window.start >= WINDOW_MS) {
      if (windows.size >= MAX_TRACKED) {
        for (const [other, w] of windows) if (now - w.start >= WINDOW_MS) windows.delete(other);
      }
      window = { start: now, count: 0 };
      windows.set(id, window);
    }
    window.count += 1;
    done(window.count > limit ? throttled(Math.max(1, Math.ceil((window.start + WINDOW_MS - now) / 1000))) : undefined);
  });
}
