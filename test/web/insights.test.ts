/**
 * Insights, SQL and Dashboards in headless Debian Chromium against a real server with events
 * sent through /batch/: what each page shows equals what the API answers for the same query
 * (numbers, or the API's own words when it refuses the query), an insight built and saved in the
 * page lands on a dashboard, and each page is screenshotted to docs/screenshots/.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { collectConsole, tryLaunchChromium } from '../helpers/browser.js';
import { expectOk } from '../helpers/api-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { SCREENSHOTS, sidewaysOverflow, signIn, unlabelledControls } from '../helpers/web-checks.js';
import { OWNER_EMAIL, OWNER_PASSWORD } from '../helpers/sessions.js';


let browser: Browser | undefined;
let chromiumError: string | null = null;
let server: TestServer;
let projectId: number;
let context: BrowserContext;
let page: Page;
let dashboardId: number;
/** The page's console errors and warnings, as they arrive. */
let consoleLines: string[] = [];

const hoursAgo = (h: number) => new Date(Date.now() - h * 3_600_000).toISOString();
const P = () => `/api/projects/${projectId}`;

const trends = { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview', name: '$pageview', math: 'total' }], interval: 'day', dateRange: { date_from: '-7d' }, trendsFilter: { display: 'ActionsTable' } };
const funnel = {
  kind: 'FunnelsQuery',
  series: [
    { kind: 'EventsNode', event: '$pageview', name: '$pageview' },
    { kind: 'EventsNode', event: 'signed up', name: 'signed up' },
    { kind: 'EventsNode', event: 'purchase', name: 'purchase' },
  ],
  dateRange: { date_from: '-7d' },
  funnelsFilter: { funnelWindowInterval: 14, funnelWindowIntervalUnit: 'day', funnelVizType: 'steps', funnelOrderType: 'ordered' },
};
const SQL = "select event, count() as events from events group by event order by event";

/** Page views of 8 people over three days, 5 sign-ups, 2 purchases. */
async function seedEvents(): Promise<void> {
  const batch: Record<string, unknown>[] = [];
  for (let i = 0; i < 40; i++) {
    batch.push({ event: '$pageview', distinct_id: `person-${i % 8}`, timestamp: hoursAgo(1 + i * 1.7), properties: { $current_url: `https://shop.example/${['', 'pricing', 'docs', 'checkout'][i % 4]}`, $browser: i % 3 ? 'Chrome' : 'Firefox' } });
  }
  for (let i = 0; i < 5; i++) batch.push({ event: 'signed up', distinct_id: `person-${i}`, timestamp: hoursAgo(0.5 + i * 0.1) });
  for (let i = 0; i < 2; i++) batch.push({ event: 'purchase', distinct_id: `person-${i}`, timestamp: hoursAgo(0.2), properties: { amount: 20 + i } });
  await expectOk(await server.post('/batch/', { api_key: server.projectKey, batch }));
}

/** What the query API answers for a query: its results, or its refusal's words. */
async function apiAnswer(source: Record<string, unknown>): Promise<{ results?: any; detail?: string }> {
  const response = await server.api(`${P()}/query/`, { method: 'POST', body: { query: source } });
  const body = await response.json();
  // A refusal is a 400 in words; anything else is a failure of the API, not something to match.
  assert.ok([200, 400].includes(response.status), `${response.status} ${JSON.stringify(body)} for ${JSON.stringify(source)}`);
  return response.status === 200 ? { results: body.results } : { detail: body.detail };
}

before(async () => {
  const launched = await tryLaunchChromium();
  if (typeof launched === 'string') {
    chromiumError = launched;
    return;
  }
  browser = launched;
  server = await startServer({ env: { SIGHTLINE_OWNER_EMAIL: OWNER_EMAIL, SIGHTLINE_OWNER_PASSWORD: OWNER_PASSWORD, SIGHTLINE_GEOIP: 'false' } });
  projectId = (await expectOk(await server.api('/api/projects/@current/'))).id;
  await seedEvents();
  const dashboard = await expectOk(await server.api(`${P()}/dashboards/`, { method: 'POST', body: { name: 'Weekly review', description: 'Traffic and conversion' } }), 201);
  dashboardId = dashboard.id;
  for (const [name, query] of [
    ['Page views this week', { kind: 'InsightVizNode', source: trends }],
    ['Sign-up funnel', { kind: 'InsightVizNode', source: funnel }],
    ['Events by name', { kind: 'DataVisualizationNode', source: { kind: 'HogQLQuery', query: SQL } }],
  ] as const) {
    await expectOk(await server.api(`${P()}/insights/`, { method: 'POST', body: { name, query, dashboards: [dashboardId] } }), 201);
  }
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  consoleLines = collectConsole(page);
  page.setDefaultTimeout(15_000);
  await signIn(page, server.url, projectId, OWNER_EMAIL, OWNER_PASSWORD);
});
after(async () => {
  await context?.close();
  await browser?.close();
  await server?.stop();
});

function requireChromium(): void {
  if (chromiumError !== null) assert.fail(chromiumError);
}

const screenshot = (name: string) => page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });

/** The numbers a result region shows (cells marked with data-value), in order. */
const shownNumbers = (scope: string) => page.locator(`${scope} [data-value]`).evaluateAll((cells) => cells.map((c) => Number(c.getAttribute('data-value'))));

test('the dashboard shows every tile with the numbers (or the words) the API gives for its query', async () => {
  requireChromium();
  await page.getByRole('link', { name: 'Dashboards' }).click();
  await page.getByRole('link', { name: 'Weekly review' }).click();
  await page.waitForURL(new RegExp(`/dashboards/${dashboardId}$`));
  const tiles = page.locator('article.tile');
  await tiles.first().waitFor();
  assert.equal(await tiles.count(), 3);

  const trendsTile = page.locator('article.tile', { hasText: 'Page views this week' });
  const trendsAnswer = await apiAnswer(trends);
  if (trendsAnswer.results) {
    await trendsTile.locator('[data-value]').first().waitFor();
    assert.deepEqual(await shownNumbers('article.tile:has-text("Page views this week")'), trendsAnswer.results.map((s: any) => s.aggregated_value ?? s.count));
  } else {
    assert.equal((await trendsTile.getByRole('alert').textContent())!.trim(), trendsAnswer.detail);
  }
  const funnelTile = page.locator('article.tile', { hasText: 'Sign-up funnel' });
  const funnelAnswer = await apiAnswer(funnel);
  if (funnelAnswer.results) {
    await funnelTile.locator('[data-value]').first().waitFor();
    assert.deepEqual(await shownNumbers('article.tile:has-text("Sign-up funnel")'), funnelAnswer.results.map((step: any) => step.count));
  } else {
    assert.equal((await funnelTile.getByRole('alert').textContent())!.trim(), funnelAnswer.detail);
  }
  const sqlAnswer = await apiAnswer({ kind: 'HogQLQuery', query: SQL });
  const sqlTile = page.locator('article.tile', { hasText: 'Events by name' });
  if (sqlAnswer.results) {
    await sqlTile.locator('td').first().waitFor();
    const rows = await sqlTile.locator('tr').evaluateAll((trs) => trs.map((tr) => Array.from(tr.querySelectorAll('td')).map((td) => td.textContent)));
    assert.deepEqual(rows, sqlAnswer.results.map((row: unknown[]) => row.map(String)));
  } else {
    assert.ok((await sqlTile.getByRole('alert').textContent())!.includes(sqlAnswer.detail!));
  }
  await screenshot('dashboard');

  // A date filter on the dashboard is saved on it, and every tile is recomputed over that range.
  await page.getByLabel('Date range').selectOption('-30d');
  await page.waitForResponse((r) => r.url().includes(`/dashboards/${dashboardId}/`) && r.request().method() === 'PATCH');
  const saved = await expectOk(await server.api(`${P()}/dashboards/${dashboardId}/`));
  assert.equal(saved.filters.date_from, '-30d');
});

test('a dashboard opened directly asks for its tiles once, before the session check, and shows them', async () => {
  requireChromium();
  const asked: string[] = [];
  const record = (request: { url: () => string; method: () => string }) => {
    const { pathname, search } = new URL(request.url());
    if (request.method() === 'GET' && pathname.startsWith('/api/')) asked.push(pathname + search);
  };
  page.on('request', record);
  try {
    await page.goto(`${server.url}/project/${projectId}/dashboards/${dashboardId}`);
    await page.locator('article.tile [data-value]').first().waitFor();
  } finally {
    page.off('request', record);
  }
  const dashboardPath = `/api/projects/${projectId}/dashboards/${dashboardId}/`;
  assert.equal(asked.filter((p) => p === dashboardPath).length, 1, `one request for the dashboard: ${JSON.stringify(asked)}`);
  assert.ok(asked.indexOf(dashboardPath) < asked.indexOf('/api/users/@me/'), `the dashboard is asked for first: ${JSON.stringify(asked)}`);
});

test('a trend and a funnel built in the Insights page show the API numbers, and one is saved onto the dashboard', async () => {
  requireChromium();
  await page.getByRole('link', { name: 'Insights', exact: true }).click();
  await page.getByRole('link', { name: 'Page views this week' }).waitFor();
  await screenshot('insights');
  await page.getByRole('link', { name: 'New insight' }).first().click();
  await page.waitForURL(/\/insights\/new$/);

  // Trends of $pageview as a table over the last 7 days.
  await page.getByLabel('Show as').selectOption('ActionsTable');
  const built = { ...trends, series: [{ kind: 'EventsNode', event: '$pageview', name: '$pageview', math: 'total' }] };
  const trendsAnswer = await apiAnswer(built);
  await checkResult(trendsAnswer, (results) => results.map((s: any) => s.aggregated_value ?? s.count));
  // As a line per day: the totals under the chart are the API's too.
  await page.getByLabel('Show as').selectOption('ActionsLineGraph');
  const linesAnswer = await apiAnswer({ ...built, trendsFilter: { display: 'ActionsLineGraph' } });
  await checkResult(linesAnswer, (results) => results.map((s: any) => s.aggregated_value ?? s.count));
  if (linesAnswer.results) await page.locator('.insight-result canvas').first().waitFor();
  await screenshot('insight-trends');

  // A funnel of three steps.
  await page.getByRole('button', { name: 'Funnel' }).click();
  await page.getByLabel('Step 2: event (empty: all events)').fill('signed up');
  await page.getByRole('button', { name: 'Add step' }).click();
  await page.getByLabel('Step 3: event (empty: all events)').fill('purchase');
  await checkResult(await apiAnswer(funnel), (results) => results.map((step: any) => step.count));
  await screenshot('insight-funnel');

  await page.getByLabel('Name').fill('Checkout funnel');
  await page.getByLabel('Add to dashboard').selectOption({ label: 'Weekly review' });
  await page.getByRole('button', { name: 'Save insight' }).click();
  await page.getByText('Saved, and placed on the dashboard.').waitFor();
  const list = await expectOk(await server.api(`${P()}/insights/?search=Checkout`));
  assert.equal(list.count, 1);
  assert.deepEqual(list.results[0].query.source.series.map((s: any) => s.event), ['$pageview', 'signed up', 'purchase']);
  assert.deepEqual(list.results[0].dashboards, [dashboardId]);
});

/** The result region shows the API's numbers, or its refusal in the API's words. */
async function checkResult(answer: { results?: any; detail?: string }, numbers: (results: any) => number[]): Promise<void> {
  const region = page.getByRole('region', { name: 'Result' });
  if (answer.results) {
    await page.waitForFunction(
      (expected) => JSON.stringify(Array.from(document.querySelectorAll('.insight-result [data-value]')).map((c) => Number(c.getAttribute('data-value')))) === expected,
      JSON.stringify(numbers(answer.results)),
    );
  } else {
    await page.waitForFunction((detail) => document.querySelector('.insight-result [role=alert]')?.textContent?.includes(detail) ?? false, answer.detail!);
    assert.match((await region.getByRole('alert').textContent())!, new RegExp(answer.detail!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  }
}

test('the SQL page shows the rows (or the words) the API gives, and saves the query as an insight', async () => {
  requireChromium();
  await page.getByRole('link', { name: 'SQL' }).click();
  await page.getByLabel(/HogQL query/).fill(SQL);
  await page.getByRole('button', { name: 'Run' }).click();
  const answer = await apiAnswer({ kind: 'HogQLQuery', query: SQL });
  if (answer.results) {
    const rows = page.locator('.sql-results tbody tr');
    await rows.first().waitFor();
    const shown = await rows.evaluateAll((trs) => trs.map((tr) => Array.from(tr.querySelectorAll('td')).map((td) => td.textContent)));
    assert.deepEqual(shown, answer.results.map((row: unknown[]) => row.map(String)));
  } else {
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.ok((await alert.textContent())!.includes(answer.detail!), "the API's words, after the field they are about");
  }
  await screenshot('sql');
  await page.getByLabel('Name').fill('Events by name (SQL page)');
  await page.getByRole('button', { name: 'Save as insight' }).click();
  await page.getByText('Saved as an insight.').waitFor();
  const saved = await expectOk(await server.api(`${P()}/insights/?search=${encodeURIComponent('SQL page')}`));
  assert.equal(saved.results[0].query.source.query, SQL);
});

/** The dashboard's insight names in reading order, and their slots, as the API holds them. */
async function tileOrder(): Promise<{ names: string[]; slots: Record<string, { x: number; y: number; w: number; h: number }> }> {
  const dashboard = await expectOk(await server.api(`${P()}/dashboards/${dashboardId}/`));
  const tiles = [...dashboard.tiles].sort((a: any, b: any) => a.layouts.sm.y - b.layouts.sm.y || a.layouts.sm.x - b.layouts.sm.x || a.id - b.id);
  return { names: tiles.map((t: any) => t.insight.name), slots: Object.fromEntries(tiles.map((t: any) => [t.insight.name, t.layouts.sm])) };
}

/** The tile names the page shows, in document order (which is reading order). */
const shownTiles = () => page.locator('article.tile h2').allTextContents();

/** The names shown once they are `expected` (a saved change is drawn a moment after its answer arrives), or after 5 s whatever is shown. */
async function shownTilesOnceSettled(expected: string[]): Promise<string[]> {
  const drawn = (names: string) => JSON.stringify(Array.from(document.querySelectorAll('article.tile h2')).map((h) => h.textContent)) === names;
  await page.waitForFunction(drawn, JSON.stringify(expected), { timeout: 5_000 }).catch(() => undefined);
  return shownTiles();
}

test('dashboard tiles are moved, resized and dragged in the page, and the layout is saved through the API', async () => {
  requireChromium();
  await page.goto(`${server.url}/project/${projectId}/dashboards/${dashboardId}`);
  await page.locator('article.tile').first().waitFor();
  const before = await tileOrder();
  assert.ok(before.names.length >= 3, JSON.stringify(before.names));
  assert.deepEqual(await shownTiles(), before.names);
  await page.getByRole('button', { name: 'Arrange tiles' }).click();
  const saved = () => page.waitForResponse((r) => r.url().includes(`/dashboards/${dashboardId}/`) && r.request().method() === 'PATCH' && r.status() === 200);

  // The last tile one place earlier.
  const last = before.names.at(-1)!;
  let done = saved();
  await page.getByRole('button', { name: `Move earlier ${last}` }).click();
  await done;
  const moved = await tileOrder();
  const expected = [...before.names.slice(0, -2), last, before.names.at(-2)!];
  assert.deepEqual(moved.names, expected);
  assert.deepEqual(await shownTilesOnceSettled(expected), expected);

  // The first tile wider (half → two thirds) and taller by a row; the order stays.
  const first = expected[0]!;
  done = saved();
  await page.getByRole('button', { name: `Wider ${first}` }).click();
  await done;
  done = saved();
  await page.getByRole('button', { name: `Taller ${first}` }).click();
  await done;
  const resized = await tileOrder();
  assert.deepEqual(resized.names, expected);
  assert.deepEqual([resized.slots[first]!.w, resized.slots[first]!.h], [8, before.slots[first]!.h + 1]);
  for (const [a, slotA] of Object.entries(resized.slots)) {
    for (const [b, slotB] of Object.entries(resized.slots)) {
      if (a >= b) continue;
      const apart = slotA.x + slotA.w <= slotB.x || slotB.x + slotB.w <= slotA.x || slotA.y + slotA.h <= slotB.y || slotB.y + slotB.h <= slotA.y;
      assert.ok(apart, `${a} and ${b} overlap: ${JSON.stringify(resized.slots)}`);
    }
  }

  // Dragging the first tile onto the last puts it last.
  done = saved();
  // Both tiles on screen: a page scrolled in the middle of a drag starts it from whatever is then under the pointer.
  await page.setViewportSize({ width: 1280, height: 2000 });
  // From the tile's top edge (above its content), onto the other tile's.
  await page.locator('article.tile', { hasText: first }).dragTo(page.locator('article.tile', { hasText: expected.at(-1)! }), { sourcePosition: { x: 8, y: 4 }, targetPosition: { x: 8, y: 4 } });
  await done;
  const dragged = await tileOrder();
  await page.setViewportSize({ width: 1280, height: 900 });
  assert.deepEqual(dragged.names, [...expected.slice(1), first]);
  await screenshot('dashboard-arrange');

  // Reopened, the page draws the saved arrangement.
  await page.reload();
  await page.locator('article.tile').first().waitFor();
  assert.deepEqual(await shownTiles(), dragged.names);
});

test('every new page labels its controls, and nothing broke the content security policy', async () => {
  requireChromium();
  for (const path of ['insights/new', 'sql', `dashboards/${dashboardId}`, 'dashboards']) {
    await page.goto(`${server.url}/project/${projectId}/${path}`);
    await page.locator('h1').waitFor();
    assert.deepEqual(await unlabelledControls(page), [], path);
  }
  const problems = consoleLines.filter((line) => /Content Security Policy|Uncaught|TypeError|ReferenceError/.test(line));
  assert.deepEqual(problems, []);
});

test('the dashboard, the builder and the SQL page fit a 390 px screen without sideways scrolling', async () => {
  requireChromium();
  const phone = await browser!.newContext({ viewport: { width: 390, height: 844 }, storageState: await context.storageState() });
  const small = await phone.newPage();
  try {
    for (const where of [`dashboards/${dashboardId}`, 'insights/new', 'sql']) {
      await small.goto(`${server.url}/project/${projectId}/${where}`);
      await small.locator('h1').waitFor();
      await small.waitForLoadState('networkidle');
      assert.equal(await sidewaysOverflow(small), null, where);
      if (where.startsWith('dashboards/')) await small.screenshot({ path: path.join(SCREENSHOTS, 'dashboard-phone.png'), fullPage: true });
    }
  } finally {
    await phone.close();
  }
});
