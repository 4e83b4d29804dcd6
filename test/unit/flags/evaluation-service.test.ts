/**
 * FlagService when the store fails: evaluation answers what it can from the request alone and
 * marks the rest failed, instead of throwing (which would be a 500).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { FlagService } from '../../../src/flags/evaluation/index.js';
import type { FlagStore, StoredFlag } from '../../../src/store/types.js';

const stored = (id: number, key: string, filters: StoredFlag['filters']): StoredFlag => ({
  id,
  key,
  name: '',
  filters,
  active: true,
  deleted: false,
  ensure_experience_continuity: false,
  version: 1,
  project_id: 1,
  created_by: null,
  created_at: '2024-01-01T00:00:00Z',
  updated_at: '2024-01-01T00:00:00Z',
});

const FLAGS = [
  stored(1, 'everyone', { groups: [{ properties: [], rollout_percentage: 100 }] }),
  stored(2, 'pro', { groups: [{ properties: [{ key: 'plan', value: 'pro', type: 'person' }], rollout_percentage: 100 }] }),
  stored(3, 'company', { aggregation_group_type_index: 0, groups: [{ properties: [], rollout_percentage: 100 }] }),
];

function failingStore(fail: { list?: boolean; prepare?: boolean }): FlagStore {
  const broken = async (): Promise<never> => {
    throw new Error('disk on fire');
  };
  return {
    list: fail.list ? broken : async () => FLAGS,
    prepareEvaluation: fail.prepare ? broken : async () => ({ personProperties: null, groupTypeMapping: {}, groupProperties: {}, hashKeyOverrides: {} }),
    page: broken,
    get: broken,
    create: broken,
    update: broken,
    remove: broken,
    groupTypeMapping: broken,
    cohortDefinitions: async () => [],
  };
}

const request = (personProperties: Record<string, unknown> = {}) => ({
  distinctId: 'u',
  groups: { company: 'acme' },
  personProperties,
  groupProperties: {},
  anonDistinctId: null,
  deviceId: null,
  geoipDisable: true,
  disableFlags: false,
  flagKeys: null,
  location: null,
});

const silent = pino({ level: 'silent' });
const summary = (evaluation: Awaited<ReturnType<FlagService['evaluate']>>) =>
  Object.fromEntries(evaluation.results.map(({ flag, result }) => [flag.key, result.failed ? 'failed' : result.enabled]));

test('stored properties unreadable: flags the request can decide are answered, the rest failed', async () => {
  const service = new FlagService(failingStore({ prepare: true }), silent);
  const withoutPlan = await service.evaluate(1, request());
  assert.equal(withoutPlan.errors, true);
  assert.deepEqual(summary(withoutPlan), { everyone: true, pro: 'failed', company: 'failed' });

  const withPlan = await service.evaluate(1, request({ plan: 'pro' }));
  assert.deepEqual(summary(withPlan), { everyone: true, pro: true, company: 'failed' });
});

test('flags unreadable: no flags and errorsWhileComputingFlags', async () => {
  const service = new FlagService(failingStore({ list: true }), silent);
  assert.deepEqual(await service.evaluate(1, request()), { results: [], errors: true });
});

test('a healthy store gives no errors', async () => {
  const service = new FlagService(failingStore({}), silent);
  const evaluation = await service.evaluate(1, request({ plan: 'pro' }));
  assert.equal(evaluation.errors, false);
  // No group types stored: the group flag is simply off.
  assert.deepEqual(summary(evaluation), { everyone: true, pro: true, company: false });
});
