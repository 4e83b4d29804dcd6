/**
 * A store that cannot be reached is a 503 naming the store, with Retry-After, never a 500; the
 * mark survives a thread boundary (it is the error's name) and keeps the cause's system code.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { toApiError } from '../../../src/http/error-mapping.js';
import { isStoreUnavailable, storeUnavailable } from '../../../src/kernel/errors.js';

const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

test('each store is named in the code, with Retry-After', () => {
  for (const [name, code] of [
    ['MetaStoreUnavailableError', 'meta_store_unavailable'],
    ['EventStoreUnavailableError', 'event_store_unavailable'],
  ] as const) {
    const api = toApiError(storeUnavailable(name, refused));
    assert.equal(api.status, 503);
    assert.equal(api.code, code);
    assert.equal(api.headers['retry-after'], '1');
    assert.match(api.detail, /ECONNREFUSED/);
  }
});

test('recognised by name alone (as errors arrive from worker threads), and keeps the system code', () => {
  const error = storeUnavailable('MetaStoreUnavailableError', refused);
  assert.equal((error as { code?: string }).code, 'ECONNREFUSED');
  const copied = Object.assign(new Error(error.message), { name: error.name });
  assert.ok(isStoreUnavailable(copied));
  assert.ok(isStoreUnavailable(copied, 'MetaStoreUnavailableError'));
  assert.ok(!isStoreUnavailable(copied, 'EventStoreUnavailableError'));
  assert.ok(!isStoreUnavailable(refused));
  assert.equal(toApiError(refused).status, 500, 'a raw error is not taken for an unreachable store');
});
