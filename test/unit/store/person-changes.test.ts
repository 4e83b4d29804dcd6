import assert from 'node:assert/strict';
import { test } from 'node:test';

import { combinePersonChanges, type PersonChanges } from '../../../src/store/person-changes.js';
import type { PersonRecord } from '../../../src/store/types.js';

const person = (uuid: string, version: number): PersonRecord => ({
  project_id: 1,
  uuid,
  properties: { version },
  is_identified: false,
  created_at: '2026-01-01T00:00:00.000Z',
  version,
});
const none: PersonChanges = { upsertPersons: [], deletePersons: [], reassignDistinctIds: [], setDistinctIds: [] };
const set = (distinct_id: string, person_uuid: string) => ({ project_id: 1, distinct_id, person_uuid });

test('within a run, the last change of each person and distinct id is what remains', () => {
  const runs = combinePersonChanges([
    { ...none, upsertPersons: [person('a', 1), person('b', 1)], setDistinctIds: [set('x', 'a'), set('y', 'b')] },
    { ...none, upsertPersons: [person('a', 2)], deletePersons: [{ project_id: 1, uuid: 'b' }], setDistinctIds: [set('y', 'a')] },
    { ...none, upsertPersons: [person('c', 1)] },
  ]);
  assert.equal(runs.length, 1);
  assert.deepEqual(runs[0].upsertPersons, [person('a', 2), person('c', 1)]);
  assert.deepEqual(runs[0].deletePersons, [{ project_id: 1, uuid: 'b' }]);
  assert.deepEqual(runs[0].setDistinctIds, [set('x', 'a'), set('y', 'a')]);
  assert.deepEqual(runs[0].reassignDistinctIds, []);
});

test('a flush with reassignments starts a new run, keeping them ahead of its own changes', () => {
  const merge = { project_id: 1, from_person_uuid: 'b', to_person_uuid: 'a' };
  const runs = combinePersonChanges([
    { ...none, setDistinctIds: [set('y', 'b')] },
    { ...none, reassignDistinctIds: [merge], deletePersons: [{ project_id: 1, uuid: 'b' }], upsertPersons: [person('a', 3)] },
    { ...none, setDistinctIds: [set('z', 'a')] },
  ]);
  assert.deepEqual(runs, [
    { ...none, setDistinctIds: [set('y', 'b')] },
    { reassignDistinctIds: [merge], deletePersons: [{ project_id: 1, uuid: 'b' }], upsertPersons: [person('a', 3)], setDistinctIds: [set('z', 'a')] },
  ]);
});

test('flushes without person changes add nothing', () => {
  assert.deepEqual(combinePersonChanges([none, none]), []);
});
