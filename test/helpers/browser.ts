/**
 * Headless Debian Chromium (playwright-core) for the posthog-js tests: the test page comes from
 * its own origin (http://localhost:<p>) while the API is http://127.0.0.1:<q>, so CORS is real.
 * Every request the page makes is recorded with its body, and sendBeacon calls are logged into
 * localStorage so they can be read back after the page that made them is gone.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export const CHROMIUM_PATH = process.env.SIGHTLINE_TEST_CHROMIUM ?? '/usr/bin/chromium';
export const CHROMIUM_MISSING = "Debian's chromium is required: apt-get install -y chromium";

export const POSTHOG_JS = path.join(ROOT, 'node_modules/posthog-js/dist/array.full.js');
export const POSTHOG_JS_LEGACY = path.join(ROOT, 'node_modules/posthog-js-legacy/dist/array.full.js');

/** Never skips: a machine without Chromium fails these tests with the install command. */
export async function launchChromium(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM_PATH)) throw new Error(`${CHROMIUM_MISSING} (${CHROMIUM_PATH} not found)`);
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** launchChromium(), or the error message to fail each browser test with. */
export async function tryLaunchChromium(): Promise<Browser | string> {
  try {
    return await launchChromium();
  } catch (error) {
    return (error as Error).message;
  }
}

// ---------------------------------------------------------------------------------------------
// The page server

export interface PageServer {
  /** http://localhost:<port> */
  origin: string;
  stop(): Promise<void>;
}

export interface PageOptions {
  /** Path of the SDK script on the page server: '/array.full.js' or '/legacy/array.full.js'. */
  lib: string;
  token: string;
  config: Record<string, unknown>;
}

/** The test page: the SDK, a button and a link for autocapture, and onFeatureFlags recorded. */
export function pageHtml({ lib, token, config }: PageOptions): string {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>Sightline SDK test</title></head>
<body>
  <h1>Checkout</h1>
  <button id="buy" class="cta primary" data-attr="buy-button">Buy now</button>
  <a id="away" href="/blank">Leave</a>
  <script src="${lib}"></script>
  <script>
    window.__flagCallbacks = [];
    posthog.init(${JSON.stringify(token)}, ${JSON.stringify(config)});
    posthog.onFeatureFlags(function (flags, variants) { window.__flagCallbacks.push({ flags: flags, variants: variants }); });
  </script>
</body></html>`;
}

/**
 * Serves `/` and `/legacy` (the two SDK generations, from `pages`), `/blank`, and both SDK
 * bundles straight from node_modules, on localhost.
 */
export async function startPageServer(pages: Record<string, PageOptions>): Promise<PageServer> {
  const scripts: Record<string, string> = { '/array.full.js': POSTHOG_JS, '/legacy/array.full.js': POSTHOG_JS_LEGACY };
  const server = http.createServer((request, response) => {
    const pathname = new URL(request.url ?? '/', 'http://localhost').pathname;
    const script = scripts[pathname];
    if (script) {
      response.writeHead(200, { 'content-type': 'application/javascript; charset=utf-8' });
      fs.createReadStream(script).pipe(response);
      return;
    }
    const page = pages[pathname];
    if (pathname === '/favicon.ico') {
      response.writeHead(204).end();
      return;
    }
    if (page || pathname === '/blank') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(page ? pageHtml(page) : '<!doctype html><title>blank</title><p>blank</p>');
      return;
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://localhost:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ---------------------------------------------------------------------------------------------
// Recording

export interface RecordedRequest {
  method: string;
  url: string;
  /** pathname + search, relative to the API origin */
  path: string;
  resourceType: string;
  headers: Record<string, string>;
  body: Buffer | null;
  /** HTTP status once the response arrived (none for requests the browser cancelled on unload). */
  status?: number;
}

/** Records every request to `apiOrigin` made by any page of `context`. */
export function recordApiRequests(context: BrowserContext, apiOrigin: string): RecordedRequest[] {
  const recorded: RecordedRequest[] = [];
  const byRequest = new Map<unknown, RecordedRequest>();
  context.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith(apiOrigin)) return;
    const parsed = new URL(url);
    const entry: RecordedRequest = {
      method: request.method(),
      url,
      path: parsed.pathname + parsed.search,
      resourceType: request.resourceType(),
      headers: request.headers(),
      body: request.postDataBuffer(),
    };
    byRequest.set(request, entry);
    recorded.push(entry);
  });
  context.on('response', (response) => {
    const entry = byRequest.get(response.request());
    if (entry) entry.status = response.status();
  });
  return recorded;
}

/** Wraps navigator.sendBeacon in every page of `context`; the calls are kept in localStorage. */
export async function logBeacons(context: BrowserContext): Promise<void> {
  await context.addInitScript(() => {
    const original = navigator.sendBeacon.bind(navigator);
    navigator.sendBeacon = (url: string | URL, data?: BodyInit | null) => {
      const queued = original(url, data);
      const log = JSON.parse(localStorage.getItem('__beacons') ?? '[]');
      log.push({ url: String(url), queued, bytes: data instanceof Blob ? data.size : null });
      localStorage.setItem('__beacons', JSON.stringify(log));
      return queued;
    };
  });
}

/** The sendBeacon calls made so far on `origin` (read through a fresh blank page). */
export async function readBeacons(context: BrowserContext, origin: string): Promise<{ url: string; queued: boolean; bytes: number | null }[]> {
  const page = await context.newPage();
  try {
    await page.goto(`${origin}/blank`);
    return await page.evaluate(() => JSON.parse(localStorage.getItem('__beacons') ?? '[]'));
  } finally {
    await page.close();
  }
}

/**
 * Keeps a copy of every XMLHttpRequest body in the page (posthog-js 1.100 sends gzip as a Blob,
 * whose bytes the browser does not hand to the request recorder).
 */
export async function logXhrBodies(context: BrowserContext): Promise<void> {
  await context.addInitScript(() => {
    const w = window as any;
    w.__xhrBodies = [];
    const open = XMLHttpRequest.prototype.open;
    const send = XMLHttpRequest.prototype.send;
    XMLHttpRequest.prototype.open = function (this: any, method: string, url: string | URL, ...rest: any[]) {
      this.__request = { method, url: String(url), body: null, pending: null };
      return (open as any).call(this, method, url, ...rest);
    };
    XMLHttpRequest.prototype.send = function (this: any, body?: any) {
      const entry = this.__request;
      if (entry) {
        w.__xhrBodies.push(entry);
        if (body instanceof Blob) {
          entry.pending = body.arrayBuffer().then((buffer: ArrayBuffer) => {
            entry.body = btoa(Array.from(new Uint8Array(buffer), (b) => String.fromCharCode(b)).join(''));
          });
        } else if (typeof body === 'string') {
          entry.body = btoa(unescape(encodeURIComponent(body)));
        }
      }
      return send.call(this, body);
    };
  });
}

/** The XMLHttpRequest bodies sent so far by `page` (see logXhrBodies). */
export async function readXhrBodies(page: Page): Promise<{ method: string; url: string; body: Buffer | null }[]> {
  const entries: { method: string; url: string; body: string | null }[] = await page.evaluate(async () => {
    const log = (window as any).__xhrBodies as any[];
    await Promise.all(log.map((e) => e.pending));
    return log.map((e) => ({ method: e.method, url: e.url, body: e.body }));
  });
  return entries.map((e) => ({ ...e, body: e.body === null ? null : Buffer.from(e.body, 'base64') }));
}

/** Collects console errors and page errors, for assertion messages. */
export function collectConsole(page: Page): string[] {
  const lines: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') lines.push(`${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => lines.push(`pageerror: ${error.message}`));
  return lines;
}
