/**
 * A dashboard of ten saved insights, one of every kind the web app draws (four trends — line, bar,
 * number, a breakdown table — a funnel, retention, lifecycle, stickiness, paths and a HogQL table)
 * over BENCH_EVENTS (default 1,000,000) events, in headless Chromium, until every tile shows its
 * numbers (or its error):
 * - the first load, the query cache empty (once: a second one would be cached), the first
 *   queries of the started process;
 * - loads with the query cache empty on the running server, after an event arrives (three times);
 * - Refresh, every query computed again (`refresh=force_blocking`), three times;
 * - loads from the query cache, eight times;
 * - a dashboard of the first six tiles (issue #26's size): after an event arrives (three times,
 *   between the others), and the first load of a new process on the same folder.
 * Baselines from the same run: the dashboard API call each page makes, timed from Node; the ten
 * queries straight through `/query` with `refresh: force_blocking`, side by side as the dashboard
 * API runs them (and each alone, printed per kind); an empty dashboard's page load.
 * Run with `npm run bench -- dashboard`.
 */
import { performance } from 'node:perf_hooks';
import { launchChromium } from '../test/helpers/browser.js';
import type { TestServer } from '../test/helpers/server.js';
import { fmt } from './format.js';
import { allTilesDrawn, ms, p, serverWithEvents, signedInPage, timedApi, timedPage } from './web-kit.js';

const RANGE = { date_from: '-30d' };
const series = (event: string, math = 'total') => [{ kind: 'EventsNode', event, name: event, math }];
const viz = (source: Record<string, unknown>) => ({ kind: 'InsightVizNode', source });

const TILES: [string, Record<string, unknown>][] = [
  ['Page views (trend, line)', viz({ kind: 'TrendsQuery', series: series('$pageview'), interval: 'day', dateRange: RANGE })],
  ['Daily users (trend, bar)', viz({ kind: 'TrendsQuery', series: series('$pageview', 'dau'), interval: 'day', dateRange: RANGE, trendsFilter: { display: 'ActionsBar' } })],
  ['Sign-ups (trend, number)', viz({ kind: 'TrendsQuery', series: series('signed_up'), dateRange: RANGE, trendsFilter: { display: 'BoldNumber' } })],
  [
    'Page views by browser (trend, table)',
    viz({ kind: 'TrendsQuery', series: series('$pageview'), interval: 'day', dateRange: RANGE, breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' }, trendsFilter: { display: 'ActionsTable' } }),
  ],
  ['Checkout funnel', viz({ kind: 'FunnelsQuery', series: [...series('$pageview'), ...series('signed_up'), ...series('checkout_started')], dateRange: RANGE })],
  [
    'Retention',
    viz({ kind: 'RetentionQuery', dateRange: RANGE, retentionFilter: { period: 'Week', totalIntervals: 4, targetEntity: { id: 'signed_up', type: 'events' }, returningEntity: { id: '$pageview', type: 'events' } } }),
  ],
  ['Lifecycle', viz({ kind: 'LifecycleQuery', series: series('$pageview'), interval: 'day', dateRange: RANGE })],
  ['Stickiness', viz({ kind: 'StickinessQuery', series: series('$pageview'), interval: 'day', dateRange: RANGE })],
  ['Paths', viz({ kind: 'PathsQuery', dateRange: RANGE, pathsFilter: { includeEventTypes: ['$pageview'], stepLimit: 5, edgeLimit: 50 } })],
  ['Events by name (HogQL)', { kind: 'DataVisualizationNode', source: { kind: 'HogQLQuery', query: 'select event, count() from events group by event order by event' } }],
];

/** The issue's dashboard size: the first six tiles, as a product team's usual dashboard (trends, a funnel, retention). */
const SIX = 6;

/** One `/query` call with every result computed anew, timed to its last byte. */
async function forcedQuery(server: TestServer, projectId: number, query: unknown): Promise<number> {
  const t0 = performance.now();
  const response = await server.api(`/api/projects/${projectId}/query/`, { method: 'POST', body: { query, refresh: 'force_blocking' } });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`query: ${response.status} ${text.slice(0, 300)}`);
  return performance.now() - t0;
}

export async function benchDashboard(): Promise<string> {
  const total = Number(process.env.BENCH_EVENTS ?? 1_000_000);
  const started = await serverWithEvents(total, 'sightline-bench-dashboard-');
  const { projectId } = started;
  let server = started.server;
  const browser = await launchChromium();
  const P = `/api/projects/${projectId}`;
  const post = async (path: string, body: unknown) => (await (await server.api(`${P}/${path}`, { method: 'POST', body })).json()) as { id: number };
  try {
    const dashboard = await post('dashboards/', { name: 'Every kind' });
    const six = await post('dashboards/', { name: 'Six insights' });
    const empty = await post('dashboards/', { name: 'Empty' });
    for (const [i, [name, query]] of TILES.entries()) await post('insights/', { name, query, dashboards: i < SIX ? [dashboard.id, six.id] : [dashboard.id] });
    let { context, page } = await signedInPage(browser, server);
    const url = (id: number) => `${server.url}/project/${projectId}/dashboards/${id}`;
    const drawn = () => allTilesDrawn(page, TILES.length);
    const sixDrawn = () => allTilesDrawn(page, SIX);

    process.stderr.write('dashboard: first load…\n');
    const first = await timedPage(page, url(dashboard.id), drawn);
    const answer = (await (await server.api(`${P}/dashboards/${dashboard.id}/`)).json()) as { tiles: { insight: { name: string; query_status: { error_message: string } | null } }[] };
    const failed = answer.tiles.filter((t) => t.insight.query_status !== null).map((t) => `${t.insight.name}: ${t.insight.query_status!.error_message}`);

    process.stderr.write('dashboard: refresh…\n');
    const refreshed: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      const answered = page.waitForResponse((r) => r.url().includes('refresh=force_blocking'), { timeout: 120_000 });
      await page.getByRole('button', { name: 'Refresh' }).click();
      await answered;
      await drawn();
      refreshed.push(performance.now() - t0);
      await page.goto(url(dashboard.id));
      await drawn();
    }
    // What a running server usually meets: new events have arrived, so every cached result is
    // stale (a result's key holds the event store's position), but the process is warm.
    process.stderr.write('dashboard: loads after new events…\n');
    const afterNewEvents: number[] = [];
    const sixAfterNewEvents: number[] = [];
    const newEvent = async (i: number) => {
      const sent = await server.post('/batch/', { api_key: server.projectKey, batch: [{ event: 'bench_tick', distinct_id: 'bench', properties: { i } }] });
      if (sent.status !== 200) throw new Error(`capture: ${sent.status}`);
      // The events API answers once the event store holds what was acknowledged before it.
      await (await server.api(`${P}/events/?limit=1`)).arrayBuffer();
    };
    for (let i = 0; i < 3; i++) {
      await newEvent(i);
      afterNewEvents.push(await timedPage(page, url(dashboard.id), drawn));
      await newEvent(i);
      sixAfterNewEvents.push(await timedPage(page, url(six.id), sixDrawn));
    }
    // The six's last event made the ten's results stale: computed again here, unmeasured.
    await timedPage(page, url(dashboard.id), drawn);
    const cached: number[] = [];
    for (let i = 0; i < 8; i++) cached.push(await timedPage(page, url(dashboard.id), drawn));
    const emptyPage: number[] = [];
    for (let i = 0; i < 8; i++) emptyPage.push(await timedPage(page, url(empty.id), () => page.getByRole('heading', { level: 1, name: 'Empty' }).waitFor()));
    await context.close();

    process.stderr.write('dashboard: baselines…\n');
    const forcedApi = await timedApi(server, `${P}/dashboards/${dashboard.id}/?refresh=force_blocking`, 3);
    const cachedApi = await timedApi(server, `${P}/dashboards/${dashboard.id}/`);
    const sources = TILES.map(([, query]) => query.source);
    const sideBySide: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      await Promise.all(sources.map((source) => forcedQuery(server, projectId, source)));
      sideBySide.push(performance.now() - t0);
    }
    const alone: string[] = [];
    for (const [i, [name]] of TILES.entries()) {
      const runs: number[] = [];
      for (let r = 0; r < 3; r++) runs.push(await forcedQuery(server, projectId, sources[i]));
      alone.push(`${name} ${p(runs, 50)} ms`);
    }

    process.stderr.write('dashboard: six insights, first load after a new start…\n');
    await server.stop();
    server = await started.startAgain();
    ({ context, page } = await signedInPage(browser, server));
    const sixFirst = await timedPage(page, url(six.id), sixDrawn);
    await context.close();

    return [
      `${fmt(total)} events over 30 days (as \`npm run bench -- events\` loads them); headless Chromium 1280×900 on the same machine. ${TILES.length - failed.length} of ${TILES.length} tiles computed${failed.length ? ` (refused: ${failed.join('; ')})` : ''}.`,
      '',
      `| Dashboard of ${TILES.length} insights, every kind | p50 ms | p99 ms | first ms |`,
      '|---|---|---|---|',
      `| page, first load (query cache empty): navigation → all tiles drawn | — | — | ${ms(first)} |`,
      `| page, query cache empty after new events (running server): navigation → all tiles drawn | ${p(afterNewEvents, 50)} | ${p(afterNewEvents, 99)} | ${ms(afterNewEvents[0]!)} |`,
      `| page, Refresh (every query computed again) → all tiles drawn | ${p(refreshed, 50)} | ${p(refreshed, 99)} | ${ms(refreshed[0]!)} |`,
      `| baseline: dashboard API with refresh=force_blocking, from Node | ${p(forcedApi, 50)} | ${p(forcedApi, 99)} | ${ms(forcedApi[0]!)} |`,
      `| baseline: the ${TILES.length} queries through /query, force_blocking, side by side | ${p(sideBySide, 50)} | ${p(sideBySide, 99)} | ${ms(sideBySide[0]!)} |`,
      `| page from the query cache: navigation → all tiles drawn | ${p(cached.slice(1), 50)} | ${p(cached.slice(1), 99)} | ${ms(cached[0]!)} |`,
      `| baseline: dashboard API from the cache, from Node | ${p(cachedApi, 50)} | ${p(cachedApi, 99)} | ${ms(cachedApi[0]!)} |`,
      `| baseline: an empty dashboard's page: navigation → heading | ${p(emptyPage.slice(1), 50)} | ${p(emptyPage.slice(1), 99)} | ${ms(emptyPage[0]!)} |`,
      `| dashboard of the first ${SIX} (four trends, funnel, retention), first load after a new start | — | — | ${ms(sixFirst)} |`,
      `| dashboard of the first ${SIX}, query cache empty after new events | ${p(sixAfterNewEvents, 50)} | ${p(sixAfterNewEvents, 99)} | ${ms(sixAfterNewEvents[0]!)} |`,
      '',
      `Each query alone through /query (force_blocking, p50 of 3): ${alone.join(', ')}.`,
    ].join('\n');
  } finally {
    await browser.close();
    await server.stop();
  }
}
