/**
 * Where new tiles go (store/sqlite/dashboards.ts): whatever tiles are placed and removed, in any
 * order and wherever tiles were moved, a tile just placed overlaps no other and stays inside the
 * 12-column grid (fast-check, on the real SQLite store), and a tile placed again is the same tile.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { SqliteMetaStore } from '../../../src/store/sqlite/meta-store.js';
import type { StoredInsight } from '../../../src/store/types.js';
import { newTempDir } from '../../helpers/server.js';

let meta: SqliteMetaStore;
let projectId: number;
let userId: number;

before(async () => {
  meta = SqliteMetaStore.open(newTempDir('sightline-tiles-'));
  const organization = await meta.tenancy.createOrganization('tiles');
  const user = await meta.tenancy.createUser({ email: 'tiles@example.test' });
  userId = user.id;
  projectId = (await meta.tenancy.createProject({ organizationId: organization.id, name: 'p', apiToken: 'phc_tiles' })).id;
});
after(async () => {
  await meta?.close();
});

/** A layout the API accepts: inside the 12 columns. */
const anySlot = fc.record({ x: fc.nat(11), y: fc.nat(20), w: fc.integer({ min: 1, max: 12 }), h: fc.integer({ min: 1, max: 8 }) }).map((s) => ({ ...s, w: Math.min(s.w, 12 - s.x) }));

const overlap = (a: { x: number; y: number; w: number; h: number }, b: typeof a) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

test('placed tiles never overlap and stay in the grid, whatever was placed and removed before', async () => {
  const store = meta.dashboards;
  await fc.assert(
    fc.asyncProperty(fc.array(fc.tuple(fc.constantFrom('place', 'remove', 'move'), fc.nat(5), anySlot), { minLength: 1, maxLength: 25 }), async (steps) => {
      const dashboard = await store.createDashboard(projectId, userId, { name: 'd', description: '', pinned: false, filters: {}, tags: [], deleted: false });
      const insights: StoredInsight[] = [];
      for (let i = 0; i < 6; i++) {
        insights.push(await store.createInsight(projectId, userId, { name: `i${i}`, description: '', query: { kind: 'TrendsQuery' }, favorited: false, tags: [], deleted: false }));
      }
      for (const [action, which, moveTo] of steps) {
        const insight = insights[which];
        const current = (await store.tilesOfInsight(insight.id)).find((t) => t.dashboard_id === dashboard.id);
        if (action === 'place') {
          const wasLive = current && !current.deleted;
          const tile = await store.placeTile(dashboard.id, insight.id);
          if (current) assert.equal(tile.id, current.id, 'placing again keeps the tile');
          if (wasLive) continue;
          // A tile just placed overlaps none of the others, wherever they were moved.
          const slot = tile.layouts.sm!;
          assert.ok(slot.x >= 0 && slot.x + slot.w <= 12 && slot.y >= 0, JSON.stringify(slot));
          const others = (await store.tilesOfDashboard(dashboard.id)).filter((t) => !t.deleted && t.id !== tile.id);
          for (const other of others) assert.ok(!overlap(slot, other.layouts.sm!), `${JSON.stringify(slot)} overlaps ${JSON.stringify(other.layouts.sm)}`);
        } else if (current && action === 'remove') {
          await store.updateTile(dashboard.id, current.id, { deleted: true });
        } else if (current && action === 'move') {
          await store.updateTile(dashboard.id, current.id, { layouts: { sm: moveTo } });
        }
      }
    }),
    { numRuns: 100 },
  );
});

test('a new tile goes around a tile moved into the free half of a row', async () => {
  const store = meta.dashboards;
  const dashboard = await store.createDashboard(projectId, userId, { name: 'moved', description: '', pinned: false, filters: {}, tags: [], deleted: false });
  const place = async (name: string) => {
    const insight = await store.createInsight(projectId, userId, { name, description: '', query: { kind: 'TrendsQuery' }, favorited: false, tags: [], deleted: false });
    return store.placeTile(dashboard.id, insight.id);
  };
  const a = await place('a');
  const b = await place('b');
  await store.updateTile(dashboard.id, a.id, { layouts: { sm: { x: 0, y: 0, w: 3, h: 5 } } });
  await store.updateTile(dashboard.id, b.id, { layouts: { sm: { x: 9, y: 0, w: 3, h: 2 } } });
  const c = await place('c');
  assert.deepEqual(c.layouts.sm, { x: 6, y: 2, w: 6, h: 5 }, 'the right half, just under the short tile');
  await store.updateTile(dashboard.id, b.id, { layouts: { sm: { x: 3, y: 0, w: 3, h: 5 } } });
  const d = await place('d');
  assert.deepEqual(d.layouts.sm, { x: 0, y: 5, w: 6, h: 5 }, 'the left half under the two narrow tiles');
});
