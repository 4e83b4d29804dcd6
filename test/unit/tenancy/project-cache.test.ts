/**
 * The project cache while the metadata store is unreachable: an expired entry is still served
 * (capture into the NATS log and flags keep going), an unknown token still fails, and any other
 * failure is not hidden.
 */
import assert from 'node:assert/strict';
import { mock, test } from 'node:test';
import { storeUnavailable } from '../../../src/kernel/errors.js';
import type { Project, TenancyStore } from '../../../src/store/types.js';
import { ProjectCache } from '../../../src/tenancy/projects/project-cache.js';

const project = { id: 7, api_token: 'phc_known' } as unknown as Project;

function storeThat(lookup: (token: string) => Promise<Project | null>): TenancyStore {
  return { getProjectByToken: lookup } as unknown as TenancyStore;
}

test('an expired entry is served while the metadata store is unreachable, and refreshed once it is back', async () => {
  mock.timers.enable({ apis: ['Date'], now: 0 });
  try {
    let failure: Error | null = null;
    let lookups = 0;
    const cache = new ProjectCache(storeThat(async (token) => {
      lookups++;
      if (failure) throw failure;
      return token === 'phc_known' ? project : null;
    }));
    assert.equal(await cache.byToken('phc_known'), project);
    mock.timers.tick(10 * 60_000); // long past the entry's lifetime
    failure = storeUnavailable('MetaStoreUnavailableError', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
    assert.equal(await cache.byToken('phc_known'), project);
    await assert.rejects(cache.byToken('phc_never_seen'), { name: 'MetaStoreUnavailableError' });
    failure = null;
    const before = lookups;
    assert.equal(await cache.byToken('phc_known'), project);
    assert.equal(lookups, before + 1, 'asked the store again once it answers');
  } finally {
    mock.timers.reset();
  }
});

test('other failures of the store are not hidden by an old entry', async () => {
  mock.timers.enable({ apis: ['Date'], now: 0 });
  try {
    let fail = false;
    const cache = new ProjectCache(storeThat(async () => {
      if (fail) throw new Error('syntax error at or near "SELEC"');
      return project;
    }));
    await cache.byToken('phc_known');
    mock.timers.tick(10 * 60_000);
    fail = true;
    await assert.rejects(cache.byToken('phc_known'), /syntax error/);
  } finally {
    mock.timers.reset();
  }
});
