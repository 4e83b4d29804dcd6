/** JSON literals are printed compacted for visitParam: the same value, strings untouched. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { withoutJsonSpaces } from '../../../src/hogql/clickhouse/sql.js';

test('spaces between tokens go; spaces, quotes and backslashes inside strings stay', () => {
  assert.equal(withoutJsonSpaces('{ "a" : 1.5 ,\n\t"b": [ 1, "x \\" y" ] }'), '{"a":1.5,"b":[1,"x \\" y"]}');
  assert.equal(withoutJsonSpaces('{"k": "ends with \\\\", "n": 2}'), '{"k":"ends with \\\\","n":2}');
});

test('any JSON value, pretty-printed, compacts to what JSON.stringify writes', () => {
  fc.assert(
    fc.property(fc.jsonValue(), (value) => {
      assert.equal(withoutJsonSpaces(JSON.stringify(value, null, 2)), JSON.stringify(value));
    }),
  );
});
