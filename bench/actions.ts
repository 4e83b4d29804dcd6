/**
 * Actions and element filters at scale: BENCH_ACTIONS_EVENTS (default 300,000) events of the
 * events benchmark's generator (an eighth are `$autocapture` with a three-element chain), then
 * over HTTP the events list with element filters, a selector and an action, and a trends query
 * of an ActionsNode — each next to the plain filter it costs against, measured in the same run:
 * `event=$autocapture` (a column) and a `$current_url` substring (a JSON property).
 *
 * "First request" is the cold run: the list's count scans every event then; later requests count
 * only newer flushes (events/stats.ts), so their p50 is mostly the page. Trends are computed
 * afresh every time (`refresh: force_blocking`). Run alone with `npm run bench -- actions`.
 */
import fs from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { newTempDir, type TestServer } from '../test/helpers/server.js';
import { load } from './events.js';
import { fmt } from './format.js';
import { percentile } from './load.js';
import { startBenchServer } from './server.js';

const ENV = { SIGHTLINE_API_RATE_LIMIT_PER_MINUTE: '0', SIGHTLINE_GEOIP: 'false', SIGHTLINE_LOG_LEVEL: 'info' };
const ms = (n: number) => (n < 10 ? n.toFixed(1) : n.toFixed(0));

async function timed(run: () => Promise<void>, budgetMs = 4_000, minRuns = 5): Promise<{ cold: number; runs: number[] }> {
  const once = async () => {
    const t0 = performance.now();
    await run();
    return performance.now() - t0;
  };
  const cold = await once();
  await once();
  const runs: number[] = [];
  const deadline = performance.now() + budgetMs;
  while (runs.length < 20 && (runs.length < minRuns || performance.now() < deadline)) runs.push(await once());
  return { cold, runs };
}

export async function benchActions(): Promise<string> {
  const total = Number(process.env.BENCH_ACTIONS_EVENTS ?? 300_000);
  const dataDir = newTempDir('sightline-bench-actions-');
  let server: TestServer = await startBenchServer({ dataDir, env: ENV });
  const keys = { projectKey: server.projectKey, personalKey: server.personalKey };
  const projectId = ((await (await server.api('/api/projects/@current/')).json()) as { id: number }).id;
  await server.stop();
  process.stderr.write(`loading ${fmt(total)} events…\n`);
  await load(dataDir, projectId, total);
  server = await startBenchServer({ dataDir, env: ENV, ...keys });
  const lines: string[] = [];
  try {
    const steps = [
      { event: '$autocapture', selector: 'form > button.btn', text: 'Sign up' },
      { event: '$pageview', url: '/pricing', url_matching: 'contains' },
    ];
    const created = await server.api(`/api/projects/${projectId}/actions/`, { method: 'POST', body: { name: 'Signed up or pricing', steps } });
    const action = (await created.json()) as { id: number };
    const list = (query: Record<string, string>) => `/api/projects/${projectId}/events/?${new URLSearchParams(query)}`;
    const filters = (filter: unknown) => ({ properties: JSON.stringify([filter]) });
    const cases: Array<{ name: string; url: string }> = [
      { name: 'baseline: `event=$autocapture`', url: list({ event: '$autocapture' }) },
      { name: 'baseline: `$current_url` icontains `pricing`', url: list(filters({ key: '$current_url', operator: 'icontains', value: 'pricing' })) },
      { name: 'element `text` = `Sign up`', url: list(filters({ type: 'element', key: 'text', value: 'Sign up' })) },
      { name: 'element `text` regex `^Sign`', url: list(filters({ type: 'element', key: 'text', operator: 'regex', value: '^Sign' })) },
      { name: 'element selector `form > button.btn`', url: list(filters({ type: 'element', key: 'selector', value: 'form > button.btn' })) },
      { name: '`action_id` (selector + text step, or a URL step)', url: list({ action_id: String(action.id) }) },
    ];
    lines.push(
      `${fmt(total)} events over 30 days (the events benchmark's data); load average at the start ${os.loadavg()[0].toFixed(1)}.`,
      '',
      '| events list (JSON, limit 100) | first request ms | p50 ms | p99 ms | count |',
      '|---|---|---|---|---|',
    );
    for (const c of cases) {
      process.stderr.write(`${c.name}…\n`);
      let count = 0;
      const t = await timed(async () => {
        const response = await server.api(c.url);
        if (response.status !== 200) throw new Error(`${c.url}: ${response.status} ${await response.text()}`);
        count = ((await response.json()) as { count: number }).count;
      });
      lines.push(`| ${c.name} | ${ms(t.cold)} | ${ms(percentile(t.runs, 50))} | ${ms(percentile(t.runs, 99))} | ${fmt(count)} |`);
    }

    const trends = async (series: unknown) => {
      const response = await server.api(`/api/projects/${projectId}/query/`, {
        method: 'POST',
        body: { query: { kind: 'TrendsQuery', series: [series], interval: 'day', dateRange: { date_from: '-30d' } }, refresh: 'force_blocking' },
      });
      if (response.status !== 200) throw new Error(`trends: ${response.status} ${await response.text()}`);
      await response.arrayBuffer();
    };
    lines.push('', '| trends, total by day over 30 days (computed every time) | p50 ms | p99 ms |', '|---|---|---|');
    for (const [name, series] of [
      ['baseline: EventsNode `$autocapture`', { kind: 'EventsNode', event: '$autocapture' }],
      ['baseline: EventsNode `$pageview` with `$current_url` icontains `pricing`', { kind: 'EventsNode', event: '$pageview', properties: [{ key: '$current_url', operator: 'icontains', value: 'pricing' }] }],
      ['ActionsNode (the action above)', { kind: 'ActionsNode', id: action.id }],
    ] as const) {
      process.stderr.write(`${name}…\n`);
      const t = await timed(() => trends(series));
      lines.push(`| ${name} | ${ms(percentile(t.runs, 50))} | ${ms(percentile(t.runs, 99))} |`);
    }
    lines.push('', `Up to 20 runs per figure after 2 warm-ups within 4 s (at least 5). Load average at the end: ${os.loadavg().map((n) => n.toFixed(1)).join(' ')}.`);
  } finally {
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  return lines.join('\n');
}
