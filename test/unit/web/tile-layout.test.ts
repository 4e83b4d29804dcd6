/**
 * Arranging dashboard tiles (web/src/pages/dashboards/tile-layout.ts), checked against what an
 * arrangement must be (fast-check): inside the grid, no two tiles overlapping, sizes kept, and
 * the reading order the one asked for; moving and resizing change only what they say.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { changed, GRID_COLUMNS, MAX_HEIGHT, MIN_HEIGHT, move, moveTo, nextWidth, pack, readingOrder, resize, WIDTHS, type Placed } from '../../../web/src/pages/dashboards/tile-layout.js';

const sizesArb = fc.uniqueArray(fc.record({ id: fc.integer({ min: 1, max: 500 }), w: fc.integer({ min: 1, max: GRID_COLUMNS }), h: fc.integer({ min: 1, max: 8 }) }), {
  selector: (t) => t.id,
  maxLength: 12,
});

/** Any arrangement the API may hold: tiles anywhere in the grid, overlapping or not. */
const storedArb = fc.uniqueArray(
  fc
    .record({ id: fc.integer({ min: 1, max: 500 }), x: fc.integer({ min: 0, max: GRID_COLUMNS - 1 }), y: fc.integer({ min: 0, max: 30 }), w: fc.integer({ min: 1, max: GRID_COLUMNS }), h: fc.integer({ min: 1, max: 8 }) })
    .map(({ id, x, y, w, h }): Placed => ({ id, slot: { x, y, w: Math.min(w, GRID_COLUMNS - x), h } })),
  { selector: (t) => t.id, minLength: 1, maxLength: 10 },
);

function assertValid(tiles: Placed[]): void {
  for (const [i, a] of tiles.entries()) {
    assert.ok(a.slot.x >= 0 && a.slot.y >= 0 && a.slot.w >= 1 && a.slot.h >= 1 && a.slot.x + a.slot.w <= GRID_COLUMNS, JSON.stringify(a));
    for (const b of tiles.slice(i + 1)) {
      const apart = a.slot.x + a.slot.w <= b.slot.x || b.slot.x + b.slot.w <= a.slot.x || a.slot.y + a.slot.h <= b.slot.y || b.slot.y + b.slot.h <= a.slot.y;
      assert.ok(apart, `${JSON.stringify(a)} overlaps ${JSON.stringify(b)}`);
    }
  }
}

const ids = (tiles: Placed[]) => readingOrder(tiles).map((t) => t.id);

test('packing keeps every size and the given order, inside the grid, without overlaps', () => {
  fc.assert(
    fc.property(sizesArb, (sizes) => {
      const packed = pack(sizes);
      assertValid(packed);
      assert.deepEqual(ids(packed), sizes.map((s) => s.id));
      assert.deepEqual(packed.map((t) => [t.id, t.slot.w, t.slot.h]), sizes.map((s) => [s.id, s.w, s.h]));
    }),
  );
});

test('packing fills rows: two half-width tiles share a row, a full-width one takes the next', () => {
  const packed = pack([
    { id: 1, w: 6, h: 5 },
    { id: 2, w: 6, h: 5 },
    { id: 3, w: 12, h: 4 },
    { id: 4, w: 4, h: 2 },
  ]);
  assert.deepEqual(
    packed.map((t) => t.slot),
    [
      { x: 0, y: 0, w: 6, h: 5 },
      { x: 6, y: 0, w: 6, h: 5 },
      { x: 0, y: 5, w: 12, h: 4 },
      { x: 0, y: 9, w: 4, h: 2 },
    ],
  );
});

test('moving a tile puts it that many places along in reading order, the others keep theirs', () => {
  fc.assert(
    fc.property(storedArb, fc.nat(), fc.integer({ min: -12, max: 12 }), (tiles, pick, by) => {
      const before = ids(tiles);
      const id = before[pick % before.length]!;
      const after = move(tiles, id, by);
      assertValid(after);
      const expected = before.filter((t) => t !== id);
      const to = Math.min(Math.max(0, before.indexOf(id) + by), before.length - 1);
      expected.splice(to, 0, id);
      assert.deepEqual(ids(after), expected);
      // Dropping a tile on another is the same move.
      assert.deepEqual(ids(moveTo(tiles, id, before[to]!)), expected);
    }),
  );
});

test('resizing steps the width through the offered widths and the height within bounds, and keeps the order', () => {
  fc.assert(
    fc.property(storedArb, fc.nat(), fc.constantFrom<1 | -1>(1, -1), fc.constantFrom<1 | -1 | undefined>(1, -1, undefined), (tiles, pick, width, height) => {
      const before = readingOrder(tiles);
      const tile = before[pick % before.length]!;
      const after = resize(tiles, tile.id, { width, height });
      assertValid(after);
      assert.deepEqual(ids(after), ids(tiles));
      const slot = after.find((t) => t.id === tile.id)!.slot;
      assert.equal(slot.w, nextWidth(tile.slot.w, width));
      assert.ok(WIDTHS.includes(slot.w));
      const h = height ? Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, tile.slot.h + height)) : Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, tile.slot.h));
      assert.equal(slot.h, h);
    }),
  );
  assert.deepEqual([nextWidth(6, 1), nextWidth(12, 1), nextWidth(3, -1), nextWidth(5, -1), nextWidth(1, 1)], [8, 12, 3, 4, 3]);
});

test('only the tiles that moved or changed size are sent', () => {
  const tiles: Placed[] = pack([
    { id: 1, w: 6, h: 5 },
    { id: 2, w: 6, h: 5 },
    { id: 3, w: 12, h: 4 },
  ]);
  assert.deepEqual(changed(tiles, tiles), []);
  const swapped = move(tiles, 2, -1);
  assert.deepEqual(changed(tiles, swapped).map((t) => t.id), [2, 1]);
});
