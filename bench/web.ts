/**
 * The web app's Activity page in headless Chromium over BENCH_EVENTS (default 1,000,000) events,
 * each figure next to a baseline measured in the same run: from navigation to the first event row
 * on screen, against the events API request the page makes, timed from Node; then 20 s with 100
 * events/s arriving through /batch/ against 20 s idle: the page's live refresh requests (p50/p99)
 * and its main-thread long tasks. Dashboards: bench/dashboard.ts. Run with `npm run bench -- web`.
 */
import { performance } from 'node:perf_hooks';
import type { Page } from 'playwright-core';
import { launchChromium } from '../test/helpers/browser.js';
import { fmt } from './format.js';
import { ms, p, serverWithEvents, signedInPage, timedApi, timedPage } from './web-kit.js';

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
  const { server, projectId } = await serverWithEvents(total, 'sightline-bench-web-');
  const browser = await launchChromium();
  const lines: string[] = [];
  try {
    const P = `/api/projects/${projectId}`;
    const { context, page } = await signedInPage(browser, server);

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

    await context.close();
  } finally {
    await browser.close();
    await server.stop();
  }
  return lines.join('\n');
}
