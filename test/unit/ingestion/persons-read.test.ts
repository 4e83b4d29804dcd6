/**
 * personsReadOf: what a flush read of the persons, as the shared metadata store checks it at
 * apply time. Versions are taken before planning bumps them in place.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { plan, snapshotRequest } from '../../../src/ingestion/plan/plan.js';
import { DefinitionCache } from '../../../src/ingestion/plan/definitions.js';
import { personsReadOf } from '../../../src/ingestion/persons-read.js';
import { emptySnapshot, incoming, withPerson } from '../../helpers/plan-fixtures.js';

test('every distinct id looked up: found ones with their person and its version as read, the others as none', () => {
  const batch = [
    { projectId: 1, anonymizeIps: false, event: incoming('$identify', 'user', { $anon_distinct_id: 'anon', $set: { plan: 'pro' } }) },
    { projectId: 2, anonymizeIps: false, event: incoming('pageview', 'other') },
  ];
  const request = snapshotRequest(batch);
  const snapshot = emptySnapshot();
  withPerson(snapshot, 1, { uuid: 'person-anon', version: 3 }, ['anon']);

  const read = personsReadOf(snapshot, request);
  plan(batch, snapshot, 1, { definitions: new DefinitionCache(), now: new Date() });

  const byId = (r: { project_id: number; distinct_id: string }) => `${r.project_id}/${r.distinct_id}`;
  assert.deepEqual(
    read.sort((x, y) => byId(x).localeCompare(byId(y))),
    [
      { project_id: 1, distinct_id: 'anon', person_uuid: 'person-anon', version: 3 },
      { project_id: 1, distinct_id: 'user', person_uuid: null, version: null },
      { project_id: 2, distinct_id: 'other', person_uuid: null, version: null },
    ],
  );
  assert.ok(snapshot.persons.get('person-anon')!.version > 3, 'planning bumped the version it read, after the read was taken');
});
