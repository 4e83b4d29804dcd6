/**
 * Saved insights and dashboards API: CRUD, validation with attrs, soft delete, tiles and their
 * layouts, dashboard filters, organization scoping, and results that equal the query API's.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { addUser, createTenant, expectError, expectOk, ingest, type Tenant } from '../helpers/api-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let other: Tenant;
const INSIGHTS = '/api/projects/@current/insights/';
const DASHBOARDS = '/api/projects/@current/dashboards/';

const trends = (event = 'pageview') => ({
  kind: 'InsightVizNode',
  source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event, math: 'total' }], interval: 'day', dateRange: { date_from: '-7d' } },
});
const hogql = { kind: 'DataVisualizationNode', source: { kind: 'HogQLQuery', query: 'select event, count() from events group by event order by event' } };

const saveInsight = async (body: Record<string, unknown>, key?: string) =>
  expectOk(await server.api(INSIGHTS, { method: 'POST', body, key }), 201);
const saveDashboard = async (body: Record<string, unknown>, key?: string) =>
  expectOk(await server.api(DASHBOARDS, { method: 'POST', body, key }), 201);

before(async () => {
  server = await startServer();
  other = await createTenant(server, 'otherorg');
  await ingest(server, [
    { event: 'pageview', distinct_id: 'a' },
    { event: 'pageview', distinct_id: 'b' },
    { event: 'signup', distinct_id: 'a' },
  ]);
});
after(async () => {
  await server?.stop();
});

test('an insight is saved with its query, fetched by id and found by short_id', async () => {
  const insight = await saveInsight({ name: 'Daily pageviews', description: 'all of them', query: trends(), tags: ['growth', ' growth ', 'web'] });
  assert.equal(typeof insight.id, 'number');
  assert.match(insight.short_id, /^[0-9A-Za-z]{8}$/);
  assert.equal(insight.name, 'Daily pageviews');
  assert.deepEqual(insight.query, trends());
  assert.deepEqual(insight.tags, ['growth', 'web']);
  assert.equal(insight.favorited, false);
  assert.equal(insight.deleted, false);
  assert.deepEqual(insight.dashboards, []);
  assert.equal(insight.created_by.email, 'admin@sightline.local');
  assert.equal(insight.last_modified_by.email, 'admin@sightline.local');
  assert.deepEqual(insight.filters, {});

  const byShortId = await expectOk(await server.api(`${INSIGHTS}?short_id=${insight.short_id}`));
  assert.equal(byShortId.count, 1);
  assert.equal(byShortId.results[0].id, insight.id);
  assert.equal(byShortId.results[0].result, null, 'lists do not compute results');

  const listed = await expectOk(await server.api(`${INSIGHTS}?search=daily`));
  assert.deepEqual(listed.results.map((i: any) => i.id), [insight.id]);
});

test('opening an insight answers exactly what the query API answers for its query, and then from the cache', async () => {
  for (const query of [trends(), hogql]) {
    const insight = await saveInsight({ name: 'compare', query });
    const direct = await server.api('/api/projects/@current/query/', { method: 'POST', body: { query: query.source } });
    const directBody = await direct.json();
    const opened = await expectOk(await server.api(`${INSIGHTS}${insight.id}/`));
    if (direct.status === 200) {
      assert.deepEqual(opened.result, directBody.results);
      assert.equal(opened.query_status, null);
      const again = await expectOk(await server.api(`${INSIGHTS}${insight.id}/`));
      assert.equal(again.is_cached, true);
      assert.deepEqual(again.result, opened.result);
      const forced = await expectOk(await server.api(`${INSIGHTS}${insight.id}/?refresh=force_blocking`));
      assert.equal(forced.is_cached, false);
    } else {
      // A kind the query API refuses (or does not serve yet) leaves the insight without a result and says why.
      assert.equal(direct.status, 400);
      assert.equal(opened.result, null);
      assert.equal(opened.query_status.error, true);
      assert.equal(opened.query_status.error_message, directBody.detail);
    }
  }
});

test('bad input is a 400 naming the field', async () => {
  const post = (body: unknown) => server.api(INSIGHTS, { method: 'POST', body });
  await expectError(await post({ name: 'no query' }), 400, 'required', 'query');
  await expectError(await post({ query: { source: {} } }), 400, 'required', 'query.kind');
  await expectError(await post({ query: { kind: 'InsightVizNode' } }), 400, 'required', 'query.source');
  await expectError(await post({ query: { kind: 'InsightVizNode', source: { kind: 'DropTable' } } }), 400, 'invalid_choice', 'query.source.kind');
  await expectError(await post({ query: { kind: 'Nope' } }), 400, 'invalid_choice', 'query.kind');
  await expectError(await post({ query: trends(), name: 5 }), 400, 'invalid_input', 'name');
  await expectError(await post({ query: trends(), dashboards: [999999] }), 400, 'invalid_choice', 'dashboards.0');
  await expectError(await server.api(`${INSIGHTS}abc/`), 404, 'not_found');
  const insight = await saveInsight({ query: trends() });
  await expectError(await server.api(`${INSIGHTS}${insight.id}/?refresh=sometimes`), 400, 'invalid_choice', 'refresh');
  const del = await server.api(`${INSIGHTS}${insight.id}/`, { method: 'DELETE' });
  assert.equal(del.status, 405, 'deletion is soft, by PATCH');

  const dpost = (body: unknown) => server.api(DASHBOARDS, { method: 'POST', body });
  await expectError(await dpost({ name: 'x', filters: { date_from: 'yesterdayish' } }), 400, 'invalid_date', 'filters.date_from');
  await expectError(await dpost({ name: 'x', filters: { properties: [{ nokey: 1 }] } }), 400, 'invalid_input', 'filters.properties.0');
  await expectError(await dpost({ name: 'x', filters: [] }), 400, 'invalid_input', 'filters');
});

test('an insight placed on dashboards becomes tiles with layouts; tiles move, go and come back', async () => {
  const board = await saveDashboard({ name: 'Growth', description: 'weekly review', pinned: true });
  assert.deepEqual(board.tiles, []);
  const second = await saveDashboard({ name: 'Second' });
  const first = await saveInsight({ name: 'first', query: trends(), dashboards: [board.id] });
  const other1 = await saveInsight({ name: 'second', query: hogql, dashboards: [board.id, second.id] });
  assert.deepEqual(first.dashboards, [board.id]);
  assert.deepEqual(other1.dashboards.sort(), [board.id, second.id].sort());

  let shown = await expectOk(await server.api(`${DASHBOARDS}${board.id}/`));
  assert.deepEqual(shown.tiles.map((t: any) => t.insight.id), [first.id, other1.id]);
  // Two tiles a row on the 12-column grid.
  assert.deepEqual(shown.tiles.map((t: any) => t.layouts.sm), [{ x: 0, y: 0, w: 6, h: 5 }, { x: 6, y: 0, w: 6, h: 5 }]);

  const [a, b] = shown.tiles;
  shown = await expectOk(
    await server.api(`${DASHBOARDS}${board.id}/`, { method: 'PATCH', body: { tiles: [{ id: a.id, layouts: { sm: { x: 0, y: 5, w: 12, h: 4 } } }, { id: b.id, deleted: true }] } }),
  );
  assert.deepEqual(shown.tiles.map((t: any) => [t.id, t.layouts.sm]), [[a.id, { x: 0, y: 5, w: 12, h: 4 }]]);
  const moved = await expectOk(await server.api(`${INSIGHTS}${other1.id}/`));
  assert.deepEqual(moved.dashboards, [second.id]);

  await expectError(
    await server.api(`${DASHBOARDS}${board.id}/`, { method: 'PATCH', body: { tiles: [{ id: a.id, layouts: { sm: { x: 10, y: 0, w: 6, h: 4 } } }] } }),
    400,
    'invalid_input',
    'tiles.0.layouts.sm.w',
  );
  const secondTile = (await expectOk(await server.api(`${DASHBOARDS}${second.id}/`))).tiles[0];
  await expectError(await server.api(`${DASHBOARDS}${board.id}/`, { method: 'PATCH', body: { tiles: [{ id: secondTile.id, deleted: true }] } }), 400, 'invalid_choice', 'tiles.0.id');

  // Back on the board through the insight: in the first free slot, the one above the moved tile.
  await expectOk(await server.api(`${INSIGHTS}${other1.id}/`, { method: 'PATCH', body: { dashboards: [board.id, second.id] } }));
  shown = await expectOk(await server.api(`${DASHBOARDS}${board.id}/`));
  assert.deepEqual(shown.tiles.map((t: any) => t.layouts.sm), [{ x: 0, y: 5, w: 12, h: 4 }, { x: 0, y: 0, w: 6, h: 5 }]);
  assert.equal(shown.tiles[1].id, b.id, 'the same tile came back');

  const filtered = await saveInsight({ name: 'only on board', query: trends('signup'), dashboards: [board.id] });
  const onBoard = await expectOk(await server.api(`${INSIGHTS}?dashboard=${board.id}`));
  assert.deepEqual(onBoard.results.map((i: any) => i.id).sort(), [first.id, other1.id, filtered.id].sort());

  // A soft-deleted insight leaves the board and the lists; PATCH deleted:false restores it.
  await expectOk(await server.api(`${INSIGHTS}${filtered.id}/`, { method: 'PATCH', body: { deleted: true } }));
  shown = await expectOk(await server.api(`${DASHBOARDS}${board.id}/`));
  assert.ok(!shown.tiles.some((t: any) => t.insight.id === filtered.id));
  assert.ok(!(await expectOk(await server.api(INSIGHTS))).results.some((i: any) => i.id === filtered.id));
  assert.equal((await expectOk(await server.api(`${INSIGHTS}${filtered.id}/`))).deleted, true);
  await expectOk(await server.api(`${INSIGHTS}${filtered.id}/`, { method: 'PATCH', body: { deleted: false } }));
  shown = await expectOk(await server.api(`${DASHBOARDS}${board.id}/`));
  assert.ok(shown.tiles.some((t: any) => t.insight.id === filtered.id));
});

test("a dashboard's filters are applied over every tile's query, as filters_override on the query API", async () => {
  const board = await saveDashboard({ name: 'Filtered', filters: { date_from: '-30d', properties: [{ key: '$browser', value: 'Chrome', operator: 'exact', type: 'event' }] } });
  assert.deepEqual(board.filters, { date_from: '-30d', properties: [{ key: '$browser', value: 'Chrome', operator: 'exact', type: 'event' }] });
  const insight = await saveInsight({ name: 'tile', query: trends(), dashboards: [board.id] });
  const shown = await expectOk(await server.api(`${DASHBOARDS}${board.id}/`));
  const tile = shown.tiles[0];
  const overridden = {
    ...trends().source,
    dateRange: { date_from: '-30d' },
    properties: [{ key: '$browser', value: 'Chrome', operator: 'exact', type: 'event' }],
  };
  const direct = await server.api('/api/projects/@current/query/', { method: 'POST', body: { query: overridden } });
  const body = await direct.json();
  if (direct.status === 200) assert.deepEqual(tile.insight.result, body.results);
  else assert.equal(tile.insight.query_status.error_message, body.detail);
  // The saved insight itself is unchanged.
  assert.deepEqual((await expectOk(await server.api(`${INSIGHTS}${insight.id}/`))).query, trends());
});

test('dashboards list pinned first; soft delete hides them', async () => {
  const z = await saveDashboard({ name: 'zz pinned', pinned: true });
  const a = await saveDashboard({ name: 'aa plain' });
  const list = await expectOk(await server.api(DASHBOARDS));
  const names = list.results.map((d: any) => d.name);
  assert.ok(names.indexOf('zz pinned') < names.indexOf('aa plain'));
  assert.ok(!('tiles' in list.results[0]), 'lists carry no tiles');
  await expectOk(await server.api(`${DASHBOARDS}${a.id}/`, { method: 'PATCH', body: { deleted: true, name: 'gone' } }));
  const after = await expectOk(await server.api(DASHBOARDS));
  assert.ok(!after.results.some((d: any) => d.id === a.id));
  assert.ok(after.results.some((d: any) => d.id === z.id));
});

test("another organization's insights and dashboards are 404, and cannot be placed on", async () => {
  const mine = await saveInsight({ name: 'mine', query: trends() });
  const board = await saveDashboard({ name: 'mine' });
  const theirs = `/api/projects/${other.projectId}/`;
  await expectError(await server.api(`/api/projects/@current/insights/${mine.id}/`, { key: other.ownerKey }), 404, 'not_found');
  await expectError(await server.api(`/api/projects/${other.projectId}/insights/${mine.id}/`, { key: other.ownerKey }), 404, 'not_found');
  await expectError(await server.api(`${theirs}dashboards/${board.id}/`, { key: other.ownerKey }), 404, 'not_found');
  await expectError(await server.api(`${theirs}insights/${mine.id}/`, { method: 'PATCH', body: { name: 'x' }, key: other.ownerKey }), 404, 'not_found');
  // The owner of the first organization cannot reach the other's project at all.
  await expectError(await server.api(`${theirs}insights/`), 404, 'not_found');
  // Their insight cannot go on my dashboard.
  const foreign = await saveInsight({ name: 'theirs', query: trends() }, other.ownerKey);
  await expectError(
    await server.api(`${theirs}insights/${foreign.id}/`, { method: 'PATCH', body: { dashboards: [board.id] }, key: other.ownerKey }),
    400,
    'invalid_choice',
    'dashboards.0',
  );
  const list = await expectOk(await server.api(`${theirs}insights/`, { key: other.ownerKey }));
  assert.deepEqual(list.results.map((i: any) => i.id), [foreign.id]);
});

test('scopes: a key without insight:write cannot save, one with dashboard:read can read', async () => {
  const member = await addUser(server, (await expectOk(await server.api('/api/organizations/@current/'))).id, 'reader@example.test', 1);
  const keyBody = await expectOk(
    await server.api('/api/personal_api_keys/', { method: 'POST', key: member.key, body: { label: 'read only', scopes: ['insight:read', 'dashboard:read', 'query:read'] } }),
    201,
  );
  const readOnly = keyBody.value;
  await expectError(await server.api(INSIGHTS, { method: 'POST', body: { query: trends() }, key: readOnly }), 403, 'permission_denied');
  await expectOk(await server.api(INSIGHTS, { key: readOnly }));
  await expectOk(await server.api(DASHBOARDS, { key: readOnly }));
});
