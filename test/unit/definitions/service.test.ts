/**
 * The definitions service on an in-memory store: 404s and name clashes, and ingestion's cache
 * of written definitions emptied exactly when it would otherwise go stale (a rename or a delete).
 */
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';

import { Definitions } from '../../../src/definitions/service.js';
import { ApiError } from '../../../src/kernel/errors.js';
import { FakeDefinitionStore } from '../../fakes/definition-store.js';

let store: FakeDefinitionStore;
let forgotten: number;
let definitions: Definitions;

beforeEach(() => {
  store = new FakeDefinitionStore();
  forgotten = 0;
  definitions = new Definitions(store, () => forgotten++);
});

const status = (promise: Promise<unknown>) => promise.then(() => 200, (e: unknown) => (e instanceof ApiError ? e.status : 500));

test('a rename empties ingestion cache; a type or tag edit does not', async () => {
  const definition = store.addProperty(1, 'plan');
  await definitions.updateProperty(1, definition.id, { property_type: 'String', tags: ['billing'] });
  assert.equal(forgotten, 0);
  await definitions.updateProperty(1, definition.id, { name: 'tier' });
  assert.equal(forgotten, 1);
});

test('a rename onto a taken name is a 400 on name, with nothing emptied', async () => {
  store.addProperty(1, 'plan');
  const other = store.addProperty(1, 'tier');
  const error = await definitions.updateProperty(1, other.id, { name: 'plan' }).catch((e: ApiError) => e);
  assert.ok(error instanceof ApiError);
  assert.deepEqual([error.status, error.attr, error.code], [400, 'name', 'unique']);
  assert.equal(forgotten, 0);
});

test('deleting a property or an event definition empties the cache; another project\u2019s is 404 and empties nothing', async () => {
  const property = store.addProperty(1, 'plan');
  const event = store.addEvent(1, 'signup');
  assert.equal(await status(definitions.deleteProperty(2, property.id)), 404);
  assert.equal(await status(definitions.deleteEvent(2, event.id)), 404);
  assert.equal(forgotten, 0);
  await definitions.deleteProperty(1, property.id);
  await definitions.deleteEvent(1, event.id);
  assert.equal(forgotten, 2);
});

test('retrieve and update of what does not exist are 404', async () => {
  assert.equal(await status(definitions.getProperty(1, 'nope')), 404);
  assert.equal(await status(definitions.updateProperty(1, 'nope', { name: 'x' })), 404);
  assert.equal(await status(definitions.getEvent(1, 'nope')), 404);
  assert.equal(await status(definitions.updateEvent(1, 'nope', { description: 'x' })), 404);
});
