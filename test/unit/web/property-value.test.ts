/**
 * Editing a person property as text (web/src/pages/persons/property-value.ts): a value shown in
 * the field and saved unchanged comes back as the same value and type (fast-check); text that no
 * longer reads as the old type is saved as text.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { parseValue } from '../../../web/src/pages/persons/property-value.js';

/** What the page puts in the field for a value. */
const shown = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

test('a value saved as shown keeps its value and type', () => {
  const values = fc.oneof(fc.string(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), fc.boolean(), fc.jsonValue().filter((v) => v !== null && typeof v === 'object'));
  fc.assert(
    fc.property(values, (value) => {
      // JSON has no -0; the field shows it as 0.
      const expected = Object.is(value, -0) ? 0 : value;
      assert.deepEqual(parseValue(shown(value), value), JSON.parse(JSON.stringify(expected)));
    }),
  );
});

test('text that no longer reads as the old type is saved as text', () => {
  assert.equal(parseValue('seven', 7), 'seven');
  assert.equal(parseValue('', 7), '');
  assert.equal(parseValue('yes', true), 'yes');
  assert.equal(parseValue('{broken', { a: 1 }), '{broken');
  assert.equal(parseValue('42', 'a string'), '42');
  assert.equal(parseValue('12', 3), 12);
  assert.equal(parseValue('false', true), false);
});
