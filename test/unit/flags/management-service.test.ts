/**
 * The flag write rules (FlagManagement) on an in-memory store: validation as the API's 400s,
 * unique keys, dependencies that must resolve without cycles, deletion guarded by dependents,
 * and the evaluation cache dropped after every write — never after a refused one.
 */
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';

import { FlagManagement } from '../../../src/flags/management/service.js';
import { ApiError } from '../../../src/kernel/errors.js';
import { FakeFlagStore } from '../../fakes/flag-store.js';
import { FakeTenancyStore } from '../../fakes/tenancy-store.js';

let store: FakeFlagStore;
let invalidated: number[];
let flags: FlagManagement;

beforeEach(() => {
  store = new FakeFlagStore();
  invalidated = [];
  flags = new FlagManagement({ flags: store, users: new FakeTenancyStore(), invalidate: (projectId) => invalidated.push(projectId) });
});

const rollout = (percent: number) => ({ groups: [{ properties: [], rollout_percentage: percent }] });
const dependsOn = (key: string) => ({ groups: [{ properties: [{ key, type: 'flag', value: true, operator: 'flag_evaluates_to' }], rollout_percentage: 100 }] });

async function refused(promise: Promise<unknown>, status: number, attr?: string | null): Promise<ApiError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  assert.ok(error instanceof ApiError, `expected an ApiError, got ${String(error)}`);
  assert.equal(error.status, status);
  if (attr !== undefined) assert.equal(error.attr, attr);
  return error;
}

test('create: defaults, version 1, and the project cache dropped', async () => {
  const flag = await flags.create(1, 7, { key: 'beta', filters: rollout(50) });
  assert.deepEqual([flag.version, flag.active, flag.deleted, flag.name, flag.created_by], [1, true, false, '', 7]);
  assert.deepEqual(invalidated, [1]);
});

test('create: key required, key shape and filters checked by the engine, with attrs', async () => {
  await refused(flags.create(1, 7, {}), 400, 'key');
  await refused(flags.create(1, 7, { key: 'has space' }), 400, 'key');
  await refused(flags.create(1, 7, { key: 'x', filters: { groups: [{ rollout_percentage: 150 }] } }), 400, 'filters__groups__0__rollout_percentage');
  assert.deepEqual(invalidated, [], 'nothing written, nothing invalidated');
});

test('keys are unique among flags not deleted; a soft-deleted flag frees its key', async () => {
  const first = await flags.create(1, 7, { key: 'beta' });
  assert.equal((await refused(flags.create(1, 7, { key: 'beta' }), 400, 'key')).code, 'unique');
  await flags.create(2, 7, { key: 'beta' });
  await flags.update(1, String(first.id), { deleted: true });
  await flags.create(1, 7, { key: 'beta' });
});

test('dependencies must exist and must not loop back', async () => {
  await refused(flags.create(1, 7, { key: 'child', filters: dependsOn('missing') }), 400, 'filters__groups__0__properties__0__key');
  const parent = await flags.create(1, 7, { key: 'parent' });
  const child = await flags.create(1, 7, { key: 'child', filters: dependsOn('parent') });
  await refused(flags.update(1, String(parent.id), { filters: dependsOn('child') }), 400, 'filters__groups__0__properties__0__key');
  assert.equal((await flags.get(1, String(child.id))).version, 1);
});

test('a flag others depend on can be neither soft- nor hard-deleted; once free it can', async () => {
  const parent = await flags.create(1, 7, { key: 'parent' });
  const child = await flags.create(1, 7, { key: 'child', filters: dependsOn('parent') });
  const error = await refused(flags.update(1, String(parent.id), { deleted: true }), 400, null);
  assert.match(error.detail, /child/);
  await refused(flags.remove(1, String(parent.id)), 400);
  await flags.remove(1, String(child.id));
  await flags.remove(1, String(parent.id));
  assert.equal(store.flags.length, 0);
});

test('unknown, non-numeric and other-project ids are 404', async () => {
  const flag = await flags.create(1, 7, { key: 'beta' });
  await refused(flags.get(1, '999'), 404);
  await refused(flags.get(1, 'abc'), 404);
  await refused(flags.get(2, String(flag.id)), 404);
  await refused(flags.update(2, String(flag.id), { name: 'x' }), 404);
  await refused(flags.remove(2, String(flag.id)), 404);
});

test('update counts versions and invalidates its project each time', async () => {
  const flag = await flags.create(3, 7, { key: 'beta' });
  const updated = await flags.update(3, String(flag.id), { active: false, name: 'Beta' });
  assert.deepEqual([updated.version, updated.active, updated.name], [2, false, 'Beta']);
  assert.deepEqual(invalidated, [3, 3]);
});
