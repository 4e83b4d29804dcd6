/**
 * Persons and Groups in headless Debian Chromium against a real server with events sent through
 * /batch/: the list, search, property filter and paging show what the persons API answers; a
 * person's properties are edited and removed through the page; their events are the events API's;
 * export downloads the API's JSON and CSV; deleting a person (and their events) asks first and
 * shows the deletion until it is finished; group types are renamed and groups searched and shown;
 * a project without persons or groups says what to do next.
 * Screenshots go to docs/screenshots/.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { collectConsole, tryLaunchChromium } from '../helpers/browser.js';
import { expectError, expectOk } from '../helpers/api-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { SCREENSHOTS, sidewaysOverflow, signIn, unlabelledControls } from '../helpers/web-checks.js';
import { OWNER_EMAIL, OWNER_PASSWORD } from '../helpers/sessions.js';

/** More than one page of the persons list (50 a page). */
const VISITORS = 55;

let browser: Browser | undefined;
let chromiumError: string | null = null;
let server: TestServer;
let projectId: number;
let context: BrowserContext;
let page: Page;
let consoleLines: string[] = [];

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();
const P = () => `/api/projects/${projectId}`;

/**
 * 55 visitors (every fifth on the pro plan), Ada with an anonymous id merged into her person and
 * a few events, Grace (to be deleted with her events), and two companies with events.
 */
async function seed(): Promise<void> {
  const batch: Record<string, unknown>[] = [];
  for (let i = 0; i < VISITORS; i++) {
    batch.push({ event: '$pageview', distinct_id: `visitor-${i}`, timestamp: minutesAgo(600 - i), properties: { $current_url: 'https://shop.example/', $set: { email: `visitor${i}@shop.example`, plan: i % 5 === 0 ? 'pro' : 'free' } } });
  }
  batch.push({ event: '$pageview', distinct_id: 'anon-ada', timestamp: minutesAgo(30), properties: { $current_url: 'https://shop.example/pricing' } });
  batch.push({ event: '$identify', distinct_id: 'ada', timestamp: minutesAgo(20), properties: { $anon_distinct_id: 'anon-ada', $set: { email: 'ada@analytical.example', name: 'Ada Lovelace', plan: 'pro', seats: 3 } } });
  batch.push({ event: 'purchase', distinct_id: 'ada', timestamp: minutesAgo(10), properties: { amount: 120, $groups: { company: 'acme' } } });
  batch.push({ event: '$groupidentify', distinct_id: 'ada', timestamp: minutesAgo(9), properties: { $group_type: 'company', $group_key: 'acme', $group_set: { name: 'Acme Inc.', industry: 'anvils' } } });
  batch.push({ event: '$groupidentify', distinct_id: 'visitor-1', timestamp: minutesAgo(8), properties: { $group_type: 'company', $group_key: 'globex', $group_set: { name: 'Globex' } } });
  batch.push({ event: 'report viewed', distinct_id: 'visitor-1', timestamp: minutesAgo(7), properties: { $groups: { company: 'acme' } } });
  for (let i = 0; i < 3; i++) batch.push({ event: 'note written', distinct_id: 'grace', timestamp: minutesAgo(5 - i), properties: { $set: { email: 'grace@navy.example' } } });
  await expectOk(await server.post('/batch/', { api_key: server.projectKey, batch }));
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
  await seed();
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
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

/** What the list should show for an API page: email, else name, else the first distinct id. */
const labels = (results: any[]) => results.map((p) => p.properties.email ?? p.properties.name ?? p.distinct_ids[0]);

async function waitForList(expected: string[]): Promise<void> {
  await page.waitForFunction(
    (want) => JSON.stringify(Array.from(document.querySelectorAll('.persons-table tbody tr td:first-child a')).map((a) => a.textContent)) === want,
    JSON.stringify(expected),
  );
}

test('the persons list pages, searches and filters as the persons API does', async () => {
  requireChromium();
  await page.getByRole('link', { name: 'Persons' }).click();
  await page.waitForURL(new RegExp(`/project/${projectId}/persons$`));
  const first = await expectOk(await server.api(`${P()}/persons/?limit=50`));
  assert.equal(first.results.length, 50);
  await waitForList(labels(first.results));
  await screenshot('persons');

  // Paging follows the API's links.
  const second = await expectOk(await server.api(`${P()}/persons/?limit=50&offset=50`));
  await page.getByRole('button', { name: 'Next page' }).click();
  await waitForList(labels(second.results));
  assert.equal(second.results.length, VISITORS + 2 - 50);
  assert.ok(await page.getByRole('button', { name: 'Next page' }).isDisabled());
  await page.getByRole('button', { name: 'Previous page' }).click();
  await waitForList(labels(first.results));

  // Search: by email substring, by name, by exact distinct id.
  for (const [search, expected] of [
    ['ANALYTICAL', ['ada@analytical.example']],
    ['Lovelace', ['ada@analytical.example']],
    ['anon-ada', ['ada@analytical.example']],
    ['visitor5', ['visitor54@shop.example', 'visitor53@shop.example', 'visitor52@shop.example', 'visitor51@shop.example', 'visitor50@shop.example', 'visitor5@shop.example']],
  ] as const) {
    await page.getByLabel('Search by email, name or distinct ID').fill(search);
    await page.getByRole('button', { name: 'Search' }).click();
    const answer = await expectOk(await server.api(`${P()}/persons/?search=${encodeURIComponent(search)}&limit=50`));
    assert.deepEqual(labels(answer.results), expected, search);
    await waitForList([...expected]);
  }

  // The search is in the address: back from a person, the same list.
  await page.getByRole('link', { name: 'visitor52@shop.example' }).click();
  await page.getByRole('heading', { level: 1, name: 'visitor52@shop.example' }).waitFor();
  await page.goBack();
  await waitForList(['visitor54@shop.example', 'visitor53@shop.example', 'visitor52@shop.example', 'visitor51@shop.example', 'visitor50@shop.example', 'visitor5@shop.example']);
  assert.equal(await page.getByLabel('Search by email, name or distinct ID').inputValue(), 'visitor5');

  // A person property filter, with the search cleared.
  await page.getByLabel('Search by email, name or distinct ID').fill('');
  await page.getByRole('button', { name: 'Add property filter' }).click();
  await page.getByLabel('Person property', { exact: true }).fill('plan');
  await page.getByLabel('Value').fill('pro');
  await page.getByRole('button', { name: 'Search' }).click();
  const filter = JSON.stringify([{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }]);
  const pro = await expectOk(await server.api(`${P()}/persons/?properties=${encodeURIComponent(filter)}&limit=50`));
  assert.equal(pro.results.length, VISITORS / 5 + 1);
  await waitForList(labels(pro.results));

  // Nothing matches: said in words.
  await page.getByLabel('Search by email, name or distinct ID').fill('nobody-at-all');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByRole('heading', { name: 'No person matches' }).waitFor();
});

test("a person's page shows their ids and events, edits and removes properties, and exports", async () => {
  requireChromium();
  await page.getByRole('button', { name: 'Clear' }).click();
  await page.getByRole('link', { name: 'ada@analytical.example' }).click();
  await page.getByRole('heading', { level: 1, name: 'ada@analytical.example' }).waitFor();
  const ada = (await expectOk(await server.api(`${P()}/persons/?distinct_id=ada`))).results[0];
  assert.ok(page.url().endsWith(`/persons/${ada.id}`));
  assert.deepEqual(await page.locator('.distinct-ids li').allTextContents(), ada.distinct_ids);
  assert.deepEqual([...ada.distinct_ids].sort(), ['ada', 'anon-ada']);

  // Their events are the events API's for the person, both distinct ids.
  const events = await expectOk(await server.api(`${P()}/events/?person_id=${ada.id}&limit=20`));
  assert.equal(events.results.length, 4);
  const rows = page.locator('.events-table tbody tr td.event-name');
  await rows.first().waitFor();
  assert.deepEqual(await rows.allTextContents(), events.results.map((e: any) => e.event));
  await screenshot('person');

  // Edit a number: it stays a number.
  await page.getByRole('button', { name: 'Edit seats' }).click();
  await page.getByLabel('New value of seats').fill('5');
  await page.getByRole('button', { name: 'Save seats' }).click();
  await page.locator('.properties-table tr', { hasText: 'seats' }).getByText('5', { exact: true }).waitFor();
  assert.equal((await expectOk(await server.api(`${P()}/persons/${ada.id}/`))).properties.seats, 5);

  // Remove one, add one.
  await page.getByRole('button', { name: 'Delete plan' }).click();
  await page.locator('.properties-table th', { hasText: /^plan$/ }).waitFor({ state: 'detached' });
  assert.equal('plan' in (await expectOk(await server.api(`${P()}/persons/${ada.id}/`))).properties, false);
  await page.getByLabel('New property').fill('team');
  await page.getByLabel('Its value').fill('Engines');
  await page.getByRole('button', { name: 'Add property' }).click();
  await page.locator('.properties-table th', { hasText: /^team$/ }).waitFor();
  assert.equal((await expectOk(await server.api(`${P()}/persons/${ada.id}/`))).properties.team, 'Engines');

  // Export: the API's own files, downloaded.
  for (const format of ['json', 'csv'] as const) {
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: `Export ${format.toUpperCase()}` }).click()]);
    assert.equal(download.suggestedFilename(), `person-${ada.id}.${format}`);
    const body = fs.readFileSync((await download.path())!, 'utf8');
    const expected = await (await server.api(`${P()}/persons/${ada.id}/export/?format=${format}`)).text();
    assert.equal(body, expected, format);
    if (format === 'json') {
      const parsed = JSON.parse(body);
      assert.equal(parsed.person.uuid, ada.uuid);
      // The page's edits were `$set` / `$delete_person_property` events of hers too.
      assert.equal(parsed.events.length, (await expectOk(await server.api(`${P()}/events/?person_id=${ada.id}&limit=100`))).results.length);
      assert.ok(parsed.events.length > 4);
    }
  }
});

test('deleting a person and their events asks first, then shows the deletion until it is finished', async () => {
  requireChromium();
  const grace = (await expectOk(await server.api(`${P()}/persons/?distinct_id=grace`))).results[0];
  assert.equal((await expectOk(await server.api(`${P()}/events/?distinct_id=grace`))).results.length, 3);
  await page.goto(`${server.url}/project/${projectId}/persons/${grace.id}`);
  await page.getByRole('heading', { level: 1, name: 'grace@navy.example' }).waitFor();

  // Cancel deletes nothing.
  await page.getByRole('button', { name: 'Delete person and events' }).click();
  const dialog = page.getByRole('dialog', { name: 'Delete this person and all their events?' });
  await dialog.waitFor();
  await screenshot('person-delete');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'hidden' });
  await expectOk(await server.api(`${P()}/persons/${grace.id}/`));

  await page.getByRole('button', { name: 'Delete person and events' }).click();
  const deleted = page.waitForResponse((r) => r.url().includes(`/persons/${grace.id}/?delete_events=true`) && r.request().method() === 'DELETE');
  await dialog.getByRole('button', { name: 'Yes, delete person and events' }).click();
  assert.equal((await deleted).status(), 202);
  await page.locator('.deletion-status[data-status="finished"], .deletion-status[data-status="purged"]').waitFor();
  assert.match((await page.locator('.deletion-status').textContent())!, /The person and their events are deleted/);

  await expectError(await server.api(`${P()}/persons/${grace.id}/`), 404, 'not_found');
  assert.equal((await expectOk(await server.api(`${P()}/events/?distinct_id=grace`))).results.length, 0);
  // The person's page now says so.
  await page.reload();
  await page.getByRole('heading', { name: 'No such person' }).waitFor();

  // Without their events: the person goes, their events stay under the distinct id.
  const visitor = (await expectOk(await server.api(`${P()}/persons/?distinct_id=visitor-3`))).results[0];
  await page.goto(`${server.url}/project/${projectId}/persons/${visitor.id}`);
  await page.getByRole('button', { name: 'Delete person', exact: true }).click();
  const plain = page.getByRole('dialog', { name: 'Delete this person?' });
  await plain.getByText('Their events stay').waitFor();
  await plain.getByRole('button', { name: 'Yes, delete person' }).click();
  await page.locator('.deletion-status[data-status="finished"], .deletion-status[data-status="purged"]').waitFor();
  assert.match((await page.locator('.deletion-status').textContent())!, /The person is deleted/);
  await expectError(await server.api(`${P()}/persons/${visitor.id}/`), 404, 'not_found');
  const kept = await expectOk(await server.api(`${P()}/events/?distinct_id=visitor-3`));
  assert.equal(kept.results.length, 1);
});

test('group types are renamed, groups searched, and a group shows its properties and events', async () => {
  requireChromium();
  await page.getByRole('link', { name: 'Groups' }).click();
  await page.getByRole('link', { name: 'company', exact: true }).waitFor();
  const table = page.locator('section[aria-label="company"] tbody tr');
  await table.first().waitFor();
  const groups = await expectOk(await server.api(`${P()}/groups/?group_type_index=0`));
  assert.deepEqual(await page.locator('section[aria-label="company"] tbody td.mono').allTextContents(), groups.results.map((g: any) => g.group_key));
  assert.deepEqual(groups.results.map((g: any) => g.group_key).sort(), ['acme', 'globex']);

  // Rename: the tab and the API both use the new names.
  await page.getByText('Rename “company”').click();
  await page.getByLabel('Singular name').fill('Company');
  await page.getByLabel('Plural name').fill('Companies');
  await page.getByRole('button', { name: 'Save names' }).click();
  await page.getByRole('link', { name: 'Companies', exact: true }).waitFor();
  const [type] = await expectOk(await server.api(`${P()}/groups_types/`));
  assert.deepEqual([type.name_singular, type.name_plural], ['Company', 'Companies']);

  await page.getByLabel('Search Companies by key or name').fill('ACME');
  await page.waitForFunction(() => document.querySelectorAll('section[aria-label="Companies"] tbody tr').length === 1);
  await screenshot('groups');
  await page.getByRole('link', { name: 'acme', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'Acme Inc.' }).waitFor();
  const props = await page.locator('.properties-table tbody tr').evaluateAll((trs) => trs.map((tr) => [tr.querySelector('th')!.textContent, tr.querySelector('td')!.textContent]));
  assert.deepEqual(props, [['industry', 'anvils'], ['name', 'Acme Inc.']]);

  // Events of the group: what HogQL says of the group's column.
  const answer = await expectOk(
    await server.api(`${P()}/query/`, { method: 'POST', body: { query: { kind: 'HogQLQuery', query: "select event from events where $group_0 = 'acme' order by timestamp desc" } } }),
  );
  const shown = page.locator('.group-events tbody td.event-name');
  await shown.first().waitFor();
  assert.deepEqual(await shown.allTextContents(), answer.results.map((r: unknown[]) => r[0]));
  assert.ok(answer.results.length >= 2, JSON.stringify(answer.results));
  await screenshot('group');
});

test('the people pages label their controls, fit a phone, and broke no content security policy', async () => {
  requireChromium();
  const ada = (await expectOk(await server.api(`${P()}/persons/?distinct_id=ada`))).results[0];
  for (const where of ['persons', `persons/${ada.id}`, 'groups/0', 'groups/0/acme']) {
    await page.goto(`${server.url}/project/${projectId}/${where}`);
    await page.locator('h1').waitFor();
    await page.waitForLoadState('networkidle');
    assert.deepEqual(await unlabelledControls(page), [], where);
  }
  const phone = await browser!.newContext({ viewport: { width: 390, height: 844 }, storageState: await context.storageState() });
  const small = await phone.newPage();
  try {
    for (const where of ['persons', `persons/${ada.id}`, 'groups/0']) {
      await small.goto(`${server.url}/project/${projectId}/${where}`);
      await small.locator('h1').waitFor();
      await small.waitForLoadState('networkidle');
      assert.equal(await sidewaysOverflow(small), null, where);
    }
  } finally {
    await phone.close();
  }
  // A project without persons or groups says what to do next.
  const empty = await expectOk(await server.api('/api/projects/', { method: 'POST', body: { name: 'Empty project' } }), 201);
  await page.goto(`${server.url}/project/${empty.id}/persons`);
  await page.getByRole('heading', { name: 'No persons yet' }).waitFor();
  await page.goto(`${server.url}/project/${empty.id}/groups`);
  await page.getByRole('heading', { name: 'No group types yet' }).waitFor();
  assert.match((await page.locator('.empty-state').textContent())!, /posthog\.group\('company', 'acme'/);

  const problems = consoleLines.filter((line) => /Content Security Policy|Uncaught|TypeError|ReferenceError/.test(line));
  assert.deepEqual(problems, []);
});
