/** Encoded flushes of synthetic events, for tests of the flush log and the event mirror. */
import { encodeFlushRecord, type EncodedFlush } from '../../src/store/flush-record.js';
import type { IngestChanges, StoredEvent } from '../../src/store/types.js';

export const PERSON_UUID = '0190a0b0-0000-7000-8000-000000000001';

/** One person upserted and one distinct id pointed at it, as a flush of user `user-<seq>` would. */
export function flushChanges(flushSeq: number): IngestChanges {
  return {
    flushSeq,
    upsertPersons: [
      { project_id: 1, uuid: PERSON_UUID, properties: { email: `p${flushSeq}@example.com` }, is_identified: true, created_at: '2026-01-01T00:00:00.000Z', version: flushSeq },
    ],
    deletePersons: [],
    reassignDistinctIds: [],
    setDistinctIds: [{ project_id: 1, distinct_id: `user-${flushSeq}`, person_uuid: PERSON_UUID }],
    newGroupTypes: [],
    upsertGroups: [],
    propertyDefinitions: [],
    eventDefinitions: [{ project_id: 1, name: 'signed_up', last_seen_at: '2026-01-01T00:00:00.000Z' }],
    eventProperties: [],
    eventUuids: [],
  };
}

/** Event `i` of flush `seq` has uuid …<seq * 100000 + i>. */
export const eventUuid = (seq: number, i: number) => `0190a0b0-0000-7000-8000-${String(seq * 100_000 + i).padStart(12, '0')}`;

export function encodedFlush(seq: number, events = 3): EncodedFlush {
  const stored: StoredEvent[] = Array.from({ length: events }, (_, i) => ({
    project_id: 1,
    uuid: eventUuid(seq, i),
    event: 'signed_up',
    distinct_id: `user-${seq}`,
    person_id: PERSON_UUID,
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, seq, i % 1000)),
    created_at: new Date(Date.UTC(2026, 0, 1)),
    properties_json: JSON.stringify({ plan: 'pro', seq, i, note: 'line\nbreak "quoted" ünïcode 🎉' }),
    elements_chain: '',
    groups: ['', '', '', '', ''],
  }));
  return encodeFlushRecord({ changes: flushChanges(seq), events: stored });
}
