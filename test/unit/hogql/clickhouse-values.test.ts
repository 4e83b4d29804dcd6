/**
 * The ClickHouse dialect's literals: 18.16 takes no bound parameters, so every value is written
 * into the SQL. Strings must come back from the server exactly as sent (checked against the
 * local cluster's ClickHouse when it is up), and date-times must map to microseconds and back.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { microsText, stringLiteral, timestampMicros } from '../../../src/hogql/clickhouse/values.js';
import { clusterAvailability } from '../../helpers/cluster.js';

describe('ClickHouse literals', () => {
  test('date-times round-trip through microseconds', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_102_444_800_000_000 }), (micros) => {
        assert.equal(timestampMicros(microsText(micros)), micros);
      }),
    );
    assert.equal(timestampMicros('2024-01-02 03:04:05.5'), Date.UTC(2024, 0, 2, 3, 4, 5) * 1000 + 500_000);
    assert.equal(timestampMicros("2024-01-02'; DROP"), null);
  });

  test('a string literal is one quoted token whatever the text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        const literal = stringLiteral(text);
        // Inside the quotes, every quote and backslash is escaped.
        assert.match(literal, /^'(?:[^'\\]|\\.)*'$/s);
      }),
    );
  });

  const cluster = clusterAvailability();
  test('strings round-trip through the server', { skip: cluster.enabled ? false : cluster.reason }, async () => {
    const url = cluster.enabled ? cluster.settings.clickhouseUrls[0] : '';
    const samples = fc.sample(fc.string({ unit: 'binary', maxLength: 40 }), 200);
    samples.push("'; DROP TABLE events; --", '\\', "\\'", 'a\u0000b', 'ü🙂\u202eevil', '\r\n\t');
    const sql = `SELECT [${samples.map(stringLiteral).join(', ')}] AS texts FORMAT JSON`;
    const response = await fetch(url, { method: 'POST', body: sql });
    assert.equal(response.status, 200, await response.clone().text());
    const body = (await response.json()) as { data: { texts: string[] }[] };
    assert.deepEqual(body.data[0].texts, samples);
  });
});
