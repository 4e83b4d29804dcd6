/**
 * The web app is served at / by the same process: its page for the app's paths only, hashed
 * files cached for a year, a content security policy that allows this origin alone, and every
 * API, capture and SDK route answering as before.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, test } from 'node:test';
import { WEB_DIR } from '../../src/webapp/assets.js';
import { CONTENT_SECURITY_POLICY } from '../../src/webapp/security-headers.js';
import { expectError, expectOk } from '../helpers/api-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

const BUILT = fs.existsSync(path.join(WEB_DIR, 'index.html'));
const NOT_BUILT = `the web app is not built (${WEB_DIR}): run npm run build`;

let server: TestServer;
let page: string;

before(async () => {
  assert.ok(BUILT, NOT_BUILT);
  server = await startServer();
  page = fs.readFileSync(path.join(WEB_DIR, 'index.html'), 'utf8');
});
after(async () => {
  await server?.stop();
});

/** Paths of the scripts and styles the page itself names. */
const referenced = (html: string) => [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);

test('the page is served for the app’s own paths, with the content security policy and revalidation', async () => {
  for (const url of ['/', '/login', '/signup', '/project/1/activity', '/project/1/feature_flags/new', '/project/1/settings/account']) {
    const response = await fetch(server.url + url);
    assert.equal(response.status, 200, url);
    assert.equal(response.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal(response.headers.get('content-security-policy'), CONTENT_SECURITY_POLICY);
    assert.equal(response.headers.get('cache-control'), 'no-cache');
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(response.headers.get('x-frame-options'), 'DENY');
    assert.equal(await response.text(), page, url);
  }
  const etag = (await fetch(`${server.url}/`)).headers.get('etag')!;
  const again = await fetch(`${server.url}/`, { headers: { 'if-none-match': etag } });
  assert.equal(again.status, 304);
});

test('the policy allows nothing from another origin, and the page names nothing elsewhere', () => {
  for (const directive of CONTENT_SECURITY_POLICY.split('; ')) {
    const sources = directive.split(' ').slice(1);
    assert.ok(sources.every((s) => s === "'self'" || s === "'none'"), directive);
  }
  assert.match(CONTENT_SECURITY_POLICY, /default-src 'none'/);
  assert.match(CONTENT_SECURITY_POLICY, /frame-ancestors 'none'/);
  for (const url of referenced(page)) assert.match(url, /^\/assets\//, `${url} is served by Sightline`);
  assert.doesNotMatch(page, /<script>|<style>| style=/, 'nothing inline');
});

test('hashed assets are cached for a year and sent gzipped when asked; unknown ones are a 404 in the API shape', async () => {
  const assets = referenced(page);
  assert.ok(assets.some((a) => a.endsWith('.js')) && assets.some((a) => a.endsWith('.css')), page);
  for (const asset of assets) {
    const response = await fetch(server.url + asset);
    assert.equal(response.status, 200, asset);
    assert.equal(response.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(response.headers.get('content-security-policy'), CONTENT_SECURITY_POLICY);
    const body = Buffer.from(await response.arrayBuffer());
    assert.deepEqual(body, fs.readFileSync(path.join(WEB_DIR, asset)), 'fetch decodes the gzip it asked for');
    if (asset.endsWith('.js')) {
      assert.equal(response.headers.get('content-type'), 'text/javascript; charset=utf-8');
      assert.equal(response.headers.get('content-encoding'), 'gzip');
    }
  }
  await expectError(await fetch(`${server.url}/assets/missing-0000.js`), 404, 'not_found');
});

test('the first load is at most 300 KB of gzipped JavaScript', () => {
  const scripts = referenced(page).filter((url) => url.endsWith('.js'));
  const bytes = scripts.reduce((sum, url) => sum + gzipSync(fs.readFileSync(path.join(WEB_DIR, url)), { level: 9 }).length, 0);
  assert.ok(bytes <= 300 * 1024, `${bytes} bytes`);
  const all = fs.readdirSync(path.join(WEB_DIR, 'assets')).filter((f) => f.endsWith('.js'));
  assert.ok(all.length > scripts.length + 4, 'pages are separate chunks loaded on demand');
});

test('other paths answer as before: not the page', async () => {
  await expectError(await fetch(`${server.url}/nothing-here`), 404, 'not_found');
  await expectError(await fetch(`${server.url}/projects/1`), 404, 'not_found');
  const post = await fetch(`${server.url}/`, { method: 'POST' });
  assert.equal(post.status, 404);
  assert.equal(post.headers.get('content-security-policy'), null);
});

test('API, capture and SDK routes are unchanged and carry no web app headers', async () => {
  const health = await fetch(`${server.url}/_health`);
  assert.equal((await expectOk(health)).status, 'ok');
  assert.equal(health.headers.get('content-security-policy'), null);

  const batch = await server.post('/batch/', { api_key: server.projectKey, batch: [{ event: 'served', distinct_id: 'web-1', properties: {} }] });
  assert.deepEqual(await expectOk(batch), { status: 1 });
  assert.equal(batch.headers.get('content-security-policy'), null);

  const decide = await server.post('/decide/?v=3', { api_key: server.projectKey, distinct_id: 'web-1' });
  const decided = await expectOk(decide);
  assert.deepEqual(decided.featureFlags, {});
  assert.equal(decide.headers.get('content-security-policy'), null);

  const flags = await expectOk(await server.post('/flags?v=2', { api_key: server.projectKey, distinct_id: 'web-1' }));
  assert.deepEqual(flags.flags, {});

  const projects = await server.api('/api/projects/');
  assert.equal((await expectOk(projects)).count, 1);
  assert.equal(projects.headers.get('content-security-policy'), null);
  await expectError(await server.api('/api/projects/', { key: null }), 401, 'invalid_personal_api_key');
  await expectError(await server.api('/api/nothing/'), 404, 'not_found');
});
