/**
 * The web app in headless Chromium over BENCH_EVENTS (default 1,000,000) events, each figure
 * next to a baseline measured in the same run:
 * - Activity: from navigation to the first event row on screen, against the events API request
 *   the page makes, timed from Node; then 20 s with 100 events/s arriving through /batch/
 *   against 20 s idle: the page's live refresh requests (p50/p99) and its main-thread long tasks.
 * - A dashboard of six saved insights (trends, bar, number, funnel, retention, HogQL): from
 *   navigation until every tile shows its numbers or its error, first with the query cache
 *   emptied by `refresh=force_blocking` and then from the cache, against the dashboard API call.
 * Events are loaded as `npm run bench -- events` loads them. Run with `npm run bench -- web`.
 */
import { performance } from 'node:perf_hooks';
import type { Page } from 'playwright-core';
import { launchChromium } from '../test/helpers/browser.js';
import { newTempDir, type TestServer } from '../test/helpers/server.js';
import { load } from './events.js';
import { fmt } from './format.js';
import { percentile } from './load.js';
import { startBenchServer } from './server.js';

const EMAIL = 'bench@sightline.test';
const PASSWORD = 'bench password 123';
const ENV = { SIGHTLINE_API_RATE_LIMIT_PER_MINUTE: '0', SIGHTLINE_GEOIP: 'false', SIGHTLINE_OWNER_EMAIL: EMAIL, SIGHTLINE_OWNER_PASSWORD: PASSWORD };
const ms = (n: number) => (n < 10 ? n.toFixed(1) : n.toFixed(0));
const p = (values: number[], q: number) => ms(percentile(values, q));

const series = (event: string, math = 'total') => [{ kind: 'EventsNode', event, name: event, math }];
const TILES: [string, Record<string, unknown>][] = [
  ['Page views', { kind: 'InsightVizNode', source: { kind: 'TrendsQuery', series: series('$pageview'), interval: 'day', dateRange: { date_from: '-30d' } } }],
  ['Daily users', { kind: 'InsightVizNode', source: { kind: 'TrendsQuery', series: series('$pageview', 'dau'), interval: 'day', dateRange: { date_from: '-30d' }, trendsFilter: { display: 'ActionsBar' } } }],
  ['Sign-ups', { kind: 'InsightVizNode', source: { kind: 'TrendsQuery', series: series('signed_up'), dateRange: { date_from: '-30d' }, trendsFilter: { display: 'BoldNumber' } } }],
  ['Checkout funnel', { kind: 'InsightVizNode', source: { kind: 'FunnelsQuery', series: [...series('$pageview'), ...series('signed_up'), ...series('checkout_started')], dateRange: { date_from: '-30d' } } }],
  ['Retention', { kind: 'InsightVizNode', source: { kind: 'RetentionQuery', dateRange: { date_from: '-30d' }, retentionFilter: { period: 'Week', totalIntervals: 4, targetEntity: { id: 'signed_up', type: 'events' }, returningEntity: { id: '$pageview', type: 'events' } } } }],
  ['Events by name', { kind: 'DataVisualizationNode', source: { kind: 'HogQLQuery', query: 'select event, count() from events group by event order by event' } }],
];

async function timedApi(server: TestServer, path: string, runs = 10): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const response = await server.api(path);
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${path}: ${response.status}`);
    times.push(performance.now() - t0);
  }
  return times;
}

/** Navigation to `ready` on screen, in ms. */
async function timedPage(page: Page, url: string, ready: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await page.goto(url);
  await ready();
  return performance.now() - t0;
}

/** The page's events-API requests and long tasks during `seconds`. */
async function watchActivity(page: Page, seconds: number): Promise<{ requests: number[]; longTasks: number[] }> {
  await page.evaluate(() => {
    const w = window as unknown as { __long: number[] };
    w.__long = [];
    new PerformanceObserver((list) => list.getEntries().forEach((e) => w.__long.push(e.duration))).observe({ type: 'longtask' });
    performance.clearResourceTimings();
  });
  await page.waitForTimeout(seconds * 1000);
  return page.evaluate(() => ({
    requests: performance
      .getEntriesByType('resource')
      .filter((e) => /\/events\/\?/.test(e.name) && !/select=/.test(e.name))
      .map((e) => e.duration),
    longTasks: (window as unknown as { __long: number[] }).__long,
  }));
}

export async function benchWeb(): Promise<string> {
  const total = Number(process.env.BENCH_EVENTS ?? 1_000_000);
  const dataDir = newTempDir('sightline-bench-web-');
  let server = await startBenchServer({ dataDir, env: ENV });
  const keys = { projectKey: server.projectKey, personalKey: server.personalKey };
  const projectId = ((await (await server.api('/api/projects/@current/')).json()) as { id: number }).id;
  await server.stop();
  process.stderr.write(`loading ${fmt(total)} events…\n`);
  await load(dataDir, projectId, total);
  server = await startBenchServer({ dataDir, env: ENV, ...keys });
  const browser = await launchChromium();
  const lines: string[] = [];
  try {
    const P = `/api/projects/${projectId}`;
    const dashboard = (await (await server.api(`${P}/dashboards/`, { method: 'POST', body: { name: 'Bench' } })).json()) as { id: number };
    for (const [name, query] of TILES) await server.api(`${P}/insights/`, { method: 'POST', body: { name, query, dashboards: [dashboard.id] } });

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${server.url}/login`);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/activity$/);

    process.stderr.write('activity…\n');
    const activityUrl = `${server.url}/project/${projectId}/activity`;
    const firstRow = () => page.locator('.events-table tbody tr').first().waitFor();
    const activity: number[] = [];
    for (let i = 0; i < 8; i++) activity.push(await timedPage(page, activityUrl, firstRow));
    const listApi = await timedApi(server, `${P}/events/?limit=50`);
    lines.push(
      `${fmt(total)} events over 30 days (as \`npm run bench -- events\` loads them); headless Chromium 1280×900 on the same machine.`,
      '',
      '| Activity | p50 ms | p99 ms | first ms |',
      '|---|---|---|---|',
      `| page: navigation → first event row | ${p(activity.slice(1), 50)} | ${p(activity.slice(1), 99)} | ${ms(activity[0])} |`,
      `| baseline: its events request (limit 50) from Node | ${p(listApi, 50)} | ${p(listApi, 99)} | ${ms(listApi[0])} |`,
    );

    const idle = await watchActivity(page, 20);
    let sending = true;
    let sent = 0;
    const sender = (async () => {
      while (sending) {
        const t0 = performance.now();
        const batch = Array.from({ length: 10 }, (_, i) => ({ event: 'live_event', distinct_id: `live-${(sent + i) % 50}`, properties: { n: sent + i } }));
        await server.post('/batch/', { api_key: server.projectKey, batch });
        sent += batch.length;
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, 100 - (performance.now() - t0))));
      }
    })();
    const busy = await watchActivity(page, 20);
    sending = false;
    await sender;
    const row = (label: string, w: { requests: number[]; longTasks: number[] }) =>
      `| ${label} | ${w.requests.length} | ${p(w.requests, 50)} | ${p(w.requests, 99)} | ${w.longTasks.length} | ${w.longTasks.length ? ms(Math.max(...w.longTasks)) : '—'} |`;
    lines.push(
      '',
      '| Activity live, 20 s | refreshes | refresh p50 ms | refresh p99 ms | long tasks (>50 ms) | longest ms |',
      '|---|---|---|---|---|---|',
      row(`${fmt(sent / 20)} events/s arriving through /batch/`, busy),
      row('baseline: nothing arriving', idle),
    );

    process.stderr.write('dashboard…\n');
    const dashboardUrl = `${server.url}/project/${projectId}/dashboards/${dashboard.id}`;
    const allDrawn = () =>
      page.waitForFunction(
        (n) => {
          const tiles = Array.from(document.querySelectorAll('article.tile'));
          return tiles.length === n && tiles.every((t) => t.querySelector('[data-value], td, [role=alert], .empty-state'));
        },
        TILES.length,
        { timeout: 120_000 },
      );
    // Every tile computed anew (Refresh asks for force_blocking), against the same API call from Node.
    const forcedApi = await timedApi(server, `${P}/dashboards/${dashboard.id}/?refresh=force_blocking`, 3);
    const cold: number[] = [];
    for (let i = 0; i < 3; i++) {
      await page.goto(dashboardUrl);
      await allDrawn();
      const t0 = performance.now();
      const answered = page.waitForResponse((r) => r.url().includes('refresh=force_blocking'), { timeout: 120_000 });
      await page.getByRole('button', { name: 'Refresh' }).click();
      await answered;
      await allDrawn();
      cold.push(performance.now() - t0);
    }
    const cached: number[] = [];
    for (let i = 0; i < 8; i++) cached.push(await timedPage(page, dashboardUrl, allDrawn));
    const cachedApi = await timedApi(server, `${P}/dashboards/${dashboard.id}/`);
    const refused = (await (await server.api(`${P}/dashboards/${dashboard.id}/`)).json()) as { tiles: { insight: { query_status: unknown } }[] };
    const computed = refused.tiles.filter((t) => t.insight.query_status === null).length;
    lines.push(
      '',
      `| Dashboard of ${TILES.length} insights (${computed} of them computed; the others refused by the query API) | p50 ms | p99 ms | first ms |`,
      '|---|---|---|---|',
      `| page, every query recomputed: Refresh → all tiles drawn again | ${p(cold, 50)} | ${p(cold, 99)} | ${ms(cold[0])} |`,
      `| baseline: the dashboard API with refresh=force_blocking | ${p(forcedApi, 50)} | ${p(forcedApi, 99)} | ${ms(forcedApi[0])} |`,
      `| page from the query cache: navigation → all tiles drawn | ${p(cached.slice(1), 50)} | ${p(cached.slice(1), 99)} | ${ms(cached[0])} |`,
      `| baseline: the dashboard API from the cache | ${p(cachedApi, 50)} | ${p(cachedApi, 99)} | ${ms(cachedApi[0])} |`,
    );
    await context.close();
  } finally {
    await browser.close();
    await server.stop();
  }
  return lines.join('\n');
}
