/**
 * What the browser benchmarks (`web`, `dashboard`) share: a compiled server over `total` events
 * loaded as `npm run bench -- events` loads them, a signed-in Chromium page, and timers for a
 * page (navigation → something on screen) and for the API call behind it (from Node).
 */
import { performance } from 'node:perf_hooks';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { newTempDir, type TestServer } from '../test/helpers/server.js';
import { load } from './events.js';
import { fmt } from './format.js';
import { percentile } from './load.js';
import { startBenchServer } from './server.js';

const EMAIL = 'bench@sightline.test';
const PASSWORD = 'bench password 123';
const ENV = { SIGHTLINE_API_RATE_LIMIT_PER_MINUTE: '0', SIGHTLINE_GEOIP: 'false', SIGHTLINE_OWNER_EMAIL: EMAIL, SIGHTLINE_OWNER_PASSWORD: PASSWORD };

export const ms = (n: number) => (n < 10 ? n.toFixed(1) : n.toFixed(0));
export const p = (values: number[], q: number) => ms(percentile(values, q));

/** A started server whose project holds `total` events (written into its folder while it was stopped). */
export async function serverWithEvents(total: number, prefix: string): Promise<{ server: TestServer; projectId: number; startAgain: () => Promise<TestServer> }> {
  const dataDir = newTempDir(prefix);
  const first = await startBenchServer({ dataDir, env: ENV });
  const keys = { projectKey: first.projectKey, personalKey: first.personalKey };
  const projectId = ((await (await first.api('/api/projects/@current/')).json()) as { id: number }).id;
  await first.stop();
  process.stderr.write(`loading ${fmt(total)} events…\n`);
  await load(dataDir, projectId, total);
  /** A new process on the same folder (call after stopping the last one). */
  const startAgain = () => startBenchServer({ dataDir, env: ENV, ...keys });
  return { server: await startAgain(), projectId, startAgain };
}

/** A 1280×900 page signed in as the owner. */
export async function signedInPage(browser: Browser, server: TestServer): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${server.url}/login`);
  await page.getByLabel('Email').fill(EMAIL);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/activity$/);
  return { context, page };
}

/** `runs` GETs of `path`, each timed to its last byte, in ms. */
export async function timedApi(server: TestServer, path: string, runs = 10): Promise<number[]> {
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
export async function timedPage(page: Page, url: string, ready: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await page.goto(url);
  await ready();
  return performance.now() - t0;
}

/** Resolves when the dashboard page shows `n` tiles, each with its numbers, its error or its empty state. */
export function allTilesDrawn(page: Page, n: number): Promise<unknown> {
  return page.waitForFunction(
    (count) => {
      const tiles = Array.from(document.querySelectorAll('article.tile'));
      return tiles.length === count && tiles.every((t) => t.querySelector('[data-value], td, [role=alert], .empty-state'));
    },
    n,
    { timeout: 120_000 },
  );
}
