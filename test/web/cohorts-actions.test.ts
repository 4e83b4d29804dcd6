/**
 * Cohorts and Actions in headless Debian Chromium against a real server with events sent through
 * /batch/. A dynamic cohort built in the page (a person property and "performed purchase at least
 * twice in the last 30 days") stores the definition the page shows, and its count and members are
 * the API's and a plain reference's over the seeded events, before and after an edit; a static
 * cohort's CSV with unknown rows is refused row by row, then a file is uploaded; a cohort of two
 * groups of conditions (one all, one any) inside an any/all top group stores that nesting, counts
 * and lists what a reference says, and reopens as built; a person's page
 * lists their cohorts; deleting takes the cohort off the list. An action built with two steps
 * stores them as the API takes them, shows the events the events API's `action_id` gives, is
 * found by search, edited and soft-deleted. Screenshots go to docs/screenshots/.
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

const SHOPPERS = 12;
const DAY = 86_400_000;

let browser: Browser | undefined;
let chromiumError: string | null = null;
let server: TestServer;
let projectId: number;
let context: BrowserContext;
let page: Page;
let consoleLines: string[] = [];

const P = () => `/api/projects/${projectId}`;
const daysAgo = (d: number) => new Date(Date.now() - d * DAY).toISOString();

/** The seeded shoppers, as a reference implementation sees them. */
interface Shopper {
  email: string;
  plan: 'pro' | 'free';
  /** Ages in days of their purchases. */
  purchases: number[];
}

const shoppers: Shopper[] = Array.from({ length: SHOPPERS }, (_, i) => ({
  email: `s${i}@shop.example`,
  plan: i % 3 === 0 ? 'pro' : 'free',
  // i % 4 purchases in the last ten days; s1 and s5 also bought three times 40 days ago.
  purchases: [...Array.from({ length: i % 4 }, (_, k) => 1 + k * 3), ...(i === 1 || i === 5 ? [40, 41, 42] : [])],
}));

/** Who a cohort of "plan = pro" and/or "purchase (or not) at least `times` in the last `days` days" holds. */
function reference(match: 'AND' | 'OR', times: number, days: number, negated = false): string[] {
  return shoppers
    .filter((s) => {
      const pro = s.plan === 'pro';
      const bought = (s.purchases.filter((age) => age < days).length >= times) !== negated;
      return match === 'AND' ? pro && bought : pro || bought;
    })
    .map((s) => s.email)
    .sort();
}

async function seed(): Promise<void> {
  const batch: Record<string, unknown>[] = [];
  shoppers.forEach((s, i) => {
    const id = `shopper-${i}`;
    batch.push({ event: '$pageview', distinct_id: id, timestamp: daysAgo(50), properties: { $current_url: 'https://shop.example/', $set: { email: s.email, plan: s.plan } } });
    for (const age of s.purchases) batch.push({ event: 'purchase', distinct_id: id, timestamp: daysAgo(age), properties: { amount: 10 } });
  });
  const buy = { tag_name: 'button', attr__class: 'buy', $el_text: 'Buy now', nth_child: 1, nth_of_type: 1 };
  const docs = { tag_name: 'a', attr__class: 'nav', $el_text: 'Docs', attr__href: '/docs', nth_child: 2, nth_of_type: 1 };
  batch.push({ event: '$autocapture', distinct_id: 'shopper-2', timestamp: daysAgo(0.5), properties: { $current_url: 'https://shop.example/pricing', $event_type: 'click', $elements: [buy] } });
  batch.push({ event: '$autocapture', distinct_id: 'shopper-3', timestamp: daysAgo(0.4), properties: { $current_url: 'https://shop.example/docs', $event_type: 'click', $elements: [docs] } });
  batch.push({ event: '$pageview', distinct_id: 'shopper-4', timestamp: daysAgo(0.3), properties: { $current_url: 'https://shop.example/pricing' } });
  batch.push({ event: '$pageview', distinct_id: 'shopper-6', timestamp: daysAgo(0.2), properties: { $current_url: 'https://shop.example/pricing?plan=pro' } });
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
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  consoleLines = collectConsole(page);
  page.setDefaultTimeout(15_000);
  // Deleting asks with the browser's own confirmation.
  page.on('dialog', (dialog) => void dialog.accept());
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

/** The id at the end of the page's address. */
const idInAddress = () => Number(new URL(page.url()).pathname.split('/').pop());

async function calculatedCohort(id: number): Promise<any> {
  for (let i = 0; i < 300; i++) {
    const cohort = await expectOk(await server.api(`${P()}/cohorts/${id}/`));
    if (!cohort.is_calculating && cohort.last_calculation !== null) return cohort;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`cohort ${id} never finished calculating`);
}

async function apiMembers(id: number): Promise<string[]> {
  const answer = await expectOk(await server.api(`${P()}/cohorts/${id}/persons/?limit=100`));
  return answer.results.map((p: any) => p.properties.email).sort();
}

/** Waits until the members table lists exactly these emails (in any order). */
async function waitForMembers(expected: string[]): Promise<void> {
  await page.waitForFunction(
    (want) => JSON.stringify(Array.from(document.querySelectorAll('.members-table tbody tr td:first-child a')).map((a) => a.textContent).sort()) === want,
    JSON.stringify(expected),
  );
}

test('a dynamic cohort built in the page counts and lists what the API and a reference say, before and after an edit', async () => {
  requireChromium();
  await page.getByRole('link', { name: 'Cohorts' }).click();
  await page.getByRole('heading', { name: 'No cohorts yet' }).waitFor();
  await page.getByRole('link', { name: 'New cohort' }).first().click();
  await page.getByRole('heading', { level: 1, name: 'New cohort' }).waitFor();
  await page.getByLabel('Name', { exact: true }).fill('Pro buyers');
  await page.getByLabel('Description').fill('Pro plan, bought twice lately');
  await page.getByRole('button', { name: 'Add person property condition' }).click();
  await page.getByLabel('Person property', { exact: true }).fill('plan');
  await page.getByLabel('Value').fill('pro');
  await page.getByRole('button', { name: 'Add behaviour condition' }).click();
  await page.getByLabel('Event', { exact: true }).fill('purchase');
  await page.getByLabel('Times').fill('2');
  await page.getByLabel('In the last').fill('30');
  await screenshot('cohort-new');
  await page.getByRole('button', { name: 'Create cohort' }).click();
  await page.getByRole('heading', { level: 1, name: 'Cohort Pro buyers' }).waitFor();
  const id = idInAddress();

  // What the page stored is the definition it showed.
  const stored = await calculatedCohort(id);
  assert.deepEqual(stored.filters.properties, {
    type: 'AND',
    values: [
      { key: 'plan', value: 'pro', operator: 'exact', type: 'person' },
      { key: 'purchase', type: 'behavioral', value: 'performed_event_multiple', operator: 'gte', operator_value: 2, time_value: 30, time_interval: 'day' },
    ],
  });
  const expected = reference('AND', 2, 30);
  assert.deepEqual(expected, ['s3@shop.example', 's6@shop.example']);
  assert.deepEqual(await apiMembers(id), expected);
  assert.equal(stored.count, expected.length);
  await page.locator('.cohort-facts .cohort-state[data-state="calculated"]').waitFor();
  assert.equal((await page.locator('.cohort-facts .cohort-count').textContent())?.trim(), `${expected.length} persons`);
  await waitForMembers(expected);
  await screenshot('cohort');

  // Any condition instead of all: recalculated, the page follows.
  await page.getByLabel('Persons must match').selectOption('OR');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
  const edited = await calculatedCohort(id);
  const either = reference('OR', 2, 30);
  assert.equal(edited.filters.properties.type, 'OR');
  assert.deepEqual(await apiMembers(id), either);
  assert.equal(edited.count, either.length);
  await waitForMembers(either);
  await page.waitForFunction((text) => document.querySelector('.cohort-facts .cohort-count')?.textContent?.trim() === text, `${either.length} persons`);

  // The list: name, count, calculated.
  await page.getByRole('link', { name: 'Back to cohorts' }).click();
  const row = page.locator(`.cohorts-table tr[data-cohort="${id}"]`);
  await row.locator('.cohort-state[data-state="calculated"]').waitFor();
  assert.equal((await row.locator('.cohort-count').textContent())?.trim(), `${either.length} persons`);
  await screenshot('cohorts');

  // The editor reads back what it stored.
  await row.getByRole('link', { name: 'Pro buyers' }).click();
  assert.equal(await page.getByLabel('Persons must match').inputValue(), 'OR');
  assert.equal(await page.getByLabel('Person property', { exact: true }).inputValue(), 'plan');
  assert.equal(await page.getByLabel('Event', { exact: true }).inputValue(), 'purchase');
  assert.equal(await page.getByLabel(/^Behaviour/).inputValue(), 'did');
  assert.equal(await page.getByLabel('Times').inputValue(), '2');

  // "Did not perform", with all conditions again.
  await page.getByLabel('Persons must match').selectOption('AND');
  await page.getByLabel(/^Behaviour/).selectOption('not');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
  const negated = await calculatedCohort(id);
  assert.equal(negated.filters.properties.values[1].negation, true);
  const proNonBuyers = reference('AND', 2, 30, true);
  assert.deepEqual(proNonBuyers, ['s0@shop.example', 's9@shop.example']);
  assert.deepEqual(await apiMembers(id), proNonBuyers);
  await waitForMembers(proNonBuyers);
});

test('a static cohort: a CSV naming unknown persons is refused row by row, a file is uploaded; the person page lists cohorts; delete', async () => {
  requireChromium();
  await page.goto(`${server.url}/project/${projectId}/cohorts/new`);
  await page.getByLabel('Name', { exact: true }).fill('Beta testers');
  await page.getByLabel(/^Static/).check();
  await page.getByLabel('CSV text').fill('email\ns0@shop.example\nnobody@else.example\ns4@shop.example\nghost@else.example\n');
  await page.getByRole('button', { name: 'Create cohort' }).click();
  const refusal = page.locator('.csv-refusal');
  await refusal.waitFor();
  assert.match((await refusal.locator('p').textContent())!, /2 row\(s\) name no person \(by email\); nothing was added\./);
  assert.deepEqual(await refusal.locator('li').allTextContents(), ['row 3 ("nobody@else.example"): no person has this email', 'row 5 ("ghost@else.example"): no person has this email']);
  await screenshot('cohort-csv-refused');
  const before = await expectOk(await server.api(`${P()}/cohorts/`));
  assert.equal(before.results.filter((c: any) => c.name === 'Beta testers').length, 0, 'nothing was created');

  // The fixed list, as a file.
  await page.getByLabel('CSV file').setInputFiles({ name: 'beta.csv', mimeType: 'text/csv', buffer: Buffer.from('email\nS0@shop.example\ns4@shop.example\n') });
  await page.waitForFunction(() => (document.querySelector('textarea.mono') as HTMLTextAreaElement | null)?.value.startsWith('email\nS0@'));
  await page.getByRole('button', { name: 'Create cohort' }).click();
  await page.getByRole('heading', { level: 1, name: 'Cohort Beta testers' }).waitFor();
  const id = idInAddress();
  assert.deepEqual(await apiMembers(id), ['s0@shop.example', 's4@shop.example']);
  await waitForMembers(['s0@shop.example', 's4@shop.example']);
  assert.equal((await page.locator('.cohort-facts .cohort-count').textContent())?.trim(), '2 persons');

  // Adding rows to the existing cohort.
  await page.getByLabel('CSV text').fill('shopper-7\n');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
  assert.equal(await page.getByLabel('CSV text').inputValue(), '', 'the added rows are not offered again');
  await waitForMembers(['s0@shop.example', 's4@shop.example', 's7@shop.example']);
  assert.deepEqual(await apiMembers(id), ['s0@shop.example', 's4@shop.example', 's7@shop.example']);

  // The person's page names their cohorts, as the API does.
  const s0 = (await expectOk(await server.api(`${P()}/persons/?distinct_id=shopper-0`))).results[0];
  const theirs = await expectOk(await server.api(`${P()}/persons/cohorts/?person_id=${s0.id}`));
  await page.goto(`${server.url}/project/${projectId}/persons/${s0.id}`);
  await page.locator('.person-cohorts').waitFor();
  assert.deepEqual((await page.locator('.person-cohorts a').allTextContents()).sort(), theirs.results.map((c: any) => c.name).sort());
  assert.deepEqual(theirs.results.map((c: any) => c.name).sort(), ['Beta testers', 'Pro buyers']);

  // Delete: gone from the list and from the API's.
  await page.getByRole('link', { name: 'Beta testers' }).click();
  await page.getByRole('button', { name: 'Delete cohort' }).click();
  await page.waitForURL(new RegExp(`/project/${projectId}/cohorts$`));
  await page.locator('.cohorts-table').waitFor();
  assert.deepEqual(await page.locator('.cohorts-table tbody td:first-child a').allTextContents(), ['Pro buyers']);
  const after = await expectOk(await server.api(`${P()}/cohorts/`));
  assert.deepEqual(after.results.map((c: any) => c.name), ['Pro buyers']);
});

/** Event name and distinct id of each event, as the page's table shows them. */
const shownEvents = () => page.locator('.matching-events .events-table tbody tr:not(.details-row)').evaluateAll((trs) => trs.map((tr) => `${tr.children[0]!.textContent} ${tr.children[1]!.textContent}`));

async function apiEvents(actionId: number): Promise<string[]> {
  const answer = await expectOk(await server.api(`${P()}/events/?action_id=${actionId}&limit=20`));
  return answer.results.map((e: any) => `${e.event} ${e.distinct_id}`);
}

test('an action built with two steps stores them, shows the events action_id matches, is searched, edited and deleted', async () => {
  requireChromium();
  await page.getByRole('link', { name: 'Actions' }).click();
  await page.getByRole('heading', { name: 'No actions yet' }).waitFor();
  await page.getByRole('link', { name: 'New action' }).first().click();
  await page.getByLabel('Name', { exact: true }).fill('Clicked buy');
  const first = page.locator('fieldset.action-step[data-step="1"]');
  await first.getByLabel('Event', { exact: true }).fill('$autocapture');
  await first.getByLabel('Element text').fill('Buy now');
  await first.getByLabel('CSS selector').fill('button.buy');
  await page.getByRole('button', { name: 'Add step' }).click();
  const second = page.locator('fieldset.action-step[data-step="2"]');
  await second.getByLabel('Event', { exact: true }).fill('$pageview');
  await second.getByLabel('URL', { exact: true }).fill('/pricing');
  await second.getByRole('button', { name: 'Add property filter to step 2' }).click();
  await second.getByLabel('Event property', { exact: true }).fill('$current_url');
  await second.getByLabel('Condition').selectOption('is_set');
  await screenshot('action-new');
  await page.getByRole('button', { name: 'Create action' }).click();
  await page.getByRole('heading', { level: 1, name: 'Action Clicked buy' }).waitFor();
  const id = idInAddress();

  const stored = await expectOk(await server.api(`${P()}/actions/${id}/`));
  const fields = (step: any) => Object.fromEntries(Object.entries(step).filter(([, v]) => v !== null && v !== undefined && !(Array.isArray(v) && v.length === 0)));
  assert.deepEqual(stored.steps.map(fields), [
    { event: '$autocapture', text: 'Buy now', text_matching: 'exact', selector: 'button.buy' },
    { event: '$pageview', url: '/pricing', url_matching: 'contains', properties: [{ key: '$current_url', operator: 'is_set', type: 'event' }] },
  ]);

  // Matching events: the events API's for the action, and what the seed says they are.
  const matching = await apiEvents(id);
  assert.deepEqual([...matching].sort(), ['$autocapture shopper-2', '$pageview shopper-4', '$pageview shopper-6']);
  await page.waitForFunction((n) => document.querySelectorAll('.matching-events .events-table tbody tr').length === n, matching.length);
  assert.deepEqual(await shownEvents(), matching);
  await screenshot('action');

  // A regex instead of contains: only the URL that ends in /pricing.
  await second.getByLabel('URL', { exact: true }).fill('/pricing$');
  await second.getByLabel('URL matching').selectOption('regex');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
  const narrowed = await apiEvents(id);
  assert.deepEqual([...narrowed].sort(), ['$autocapture shopper-2', '$pageview shopper-4']);
  await page.waitForFunction((n) => document.querySelectorAll('.matching-events .events-table tbody tr').length === n, narrowed.length);
  assert.deepEqual(await shownEvents(), narrowed);

  // A pattern RE2 refuses is the API's 400, in words naming the step's field.
  await second.getByLabel('URL', { exact: true }).fill('(unclosed');
  await page.getByRole('button', { name: 'Save changes' }).click();
  const alert = page.locator('.notice-error[role="alert"]');
  await alert.waitFor();
  assert.match((await alert.textContent())!, /steps\.1\.url/);

  // Search, in the list.
  await expectOk(await server.api(`${P()}/actions/`, { method: 'POST', body: { name: 'Signed up', steps: [{ event: 'signed up' }] } }), 201);
  await page.goto(`${server.url}/project/${projectId}/actions`);
  await page.locator('.actions-table').waitFor();
  assert.deepEqual((await page.locator('.actions-table tbody td:first-child a').allTextContents()).sort(), ['Clicked buy', 'Signed up']);
  await page.getByLabel('Search by name').fill('buy');
  await page.waitForFunction(() => document.querySelectorAll('.actions-table tbody tr').length === 1);
  assert.deepEqual(await page.locator('.actions-table tbody td:first-child a').allTextContents(), ['Clicked buy']);
  await screenshot('actions');

  // Delete is soft: the API keeps it, marked deleted; the list leaves it out.
  await page.getByRole('link', { name: 'Clicked buy' }).click();
  await page.getByRole('button', { name: 'Delete action' }).click();
  await page.waitForURL(new RegExp(`/project/${projectId}/actions$`));
  await page.waitForFunction(() => Array.from(document.querySelectorAll('.actions-table tbody td:first-child a')).map((a) => a.textContent).join() === 'Signed up');
  assert.equal((await expectOk(await server.api(`${P()}/actions/${id}/`))).deleted, true);
});

/** Did `s` purchase at least `times` times in the last `days` days? */
const bought = (s: Shopper, times: number, days: number) => s.purchases.filter((age) => age < days).length >= times;

test('a cohort with groups of conditions stores the nesting, counts what a reference says, and reopens as built', async () => {
  requireChromium();
  await page.goto(`${server.url}/project/${projectId}/cohorts/new`);
  await page.getByLabel('Name', { exact: true }).fill('Nested buyers');
  await page.getByRole('button', { name: 'Add group of conditions' }).click();
  await page.getByRole('button', { name: 'Add group of conditions' }).click();
  await page.getByLabel('Persons must match').selectOption('OR');

  // Group 1, all of: plan = pro, purchased at least twice in 30 days.
  const first = page.locator('fieldset.criteria-group[data-group="1"]');
  await first.getByRole('button', { name: 'Add person property condition to group 1' }).click();
  await first.getByLabel('Person property', { exact: true }).fill('plan');
  await first.getByLabel('Value').fill('pro');
  await first.getByRole('button', { name: 'Add behaviour condition to group 1' }).click();
  await first.getByLabel('Event', { exact: true }).fill('purchase');
  await first.getByLabel('Times').fill('2');

  // Group 2, any of: email contains "s1@", purchased at least 3 times in 60 days (a third condition added, then removed).
  const second = page.locator('fieldset.criteria-group[data-group="2"]');
  await second.getByLabel('Group 2 must match').selectOption('OR');
  const addPerson = second.getByRole('button', { name: 'Add person property condition to group 2' });
  await addPerson.click();
  await addPerson.click();
  await second.getByLabel('Person property', { exact: true }).first().fill('email');
  await second.locator('.property-filter select').first().selectOption('icontains');
  await second.getByLabel('Value').first().fill('s1@');
  await second.getByLabel('Person property', { exact: true }).nth(1).fill('plan');
  await second.getByRole('button', { name: 'Remove person property filter 2' }).click();
  await second.getByRole('button', { name: 'Add behaviour condition to group 2' }).click();
  await second.getByLabel('Event', { exact: true }).fill('purchase');
  await second.getByLabel('Times').fill('3');
  await second.getByLabel('In the last').fill('60');
  await screenshot('cohort-groups');
  await page.getByRole('button', { name: 'Create cohort' }).click();
  await page.getByRole('heading', { level: 1, name: 'Cohort Nested buyers' }).waitFor();
  const id = idInAddress();

  const stored = await calculatedCohort(id);
  const purchase = (times: number, days: number) => ({ key: 'purchase', type: 'behavioral', value: 'performed_event_multiple', operator: 'gte', operator_value: times, time_value: days, time_interval: 'day' });
  assert.deepEqual(stored.filters.properties, {
    type: 'OR',
    values: [
      { type: 'AND', values: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }, purchase(2, 30)] },
      { type: 'OR', values: [{ key: 'email', value: 's1@', operator: 'icontains', type: 'person' }, purchase(3, 60)] },
    ],
  });
  const inFirst = (s: Shopper) => s.plan === 'pro' && bought(s, 2, 30);
  const inSecond = (s: Shopper) => s.email.includes('s1@') || bought(s, 3, 60);
  const either = shoppers.filter((s) => inFirst(s) || inSecond(s)).map((s) => s.email).sort();
  assert.deepEqual(either, ['s11@shop.example', 's1@shop.example', 's3@shop.example', 's5@shop.example', 's6@shop.example', 's7@shop.example']);
  assert.deepEqual(await apiMembers(id), either);
  assert.equal(stored.count, either.length);
  await page.waitForFunction((text) => document.querySelector('.cohort-facts .cohort-count')?.textContent?.trim() === text, `${either.length} persons`);
  await waitForMembers(either);

  // Reopened, the page shows both groups as built.
  await page.reload();
  await page.getByRole('heading', { level: 1, name: 'Cohort Nested buyers' }).waitFor();
  assert.equal(await page.getByLabel('Persons must match').inputValue(), 'OR');
  assert.equal(await first.getByLabel('Group 1 must match').inputValue(), 'AND');
  assert.equal(await first.getByLabel('Value').inputValue(), 'pro');
  assert.equal(await first.getByLabel('Times').inputValue(), '2');
  assert.equal(await second.getByLabel('Group 2 must match').inputValue(), 'OR');
  assert.equal(await second.getByLabel('Person property', { exact: true }).count(), 1);
  assert.equal(await second.locator('.property-filter select').inputValue(), 'icontains');
  assert.equal(await second.getByLabel('In the last').inputValue(), '60');
  assert.equal(await page.locator('fieldset.criteria-group').count(), 2);
  await screenshot('cohort-groups-saved');

  // Both groups instead of either; then group 2 removed: the top holds group 1 alone.
  await page.getByLabel('Persons must match').selectOption('AND');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
  const both = shoppers.filter((s) => inFirst(s) && inSecond(s)).map((s) => s.email);
  assert.deepEqual(both, ['s3@shop.example']);
  assert.equal((await calculatedCohort(id)).count, both.length);
  assert.deepEqual(await apiMembers(id), both);
  await waitForMembers(both);

  await page.getByRole('button', { name: 'Remove group 2' }).click();
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
  const alone = await calculatedCohort(id);
  assert.deepEqual(alone.filters.properties, { type: 'AND', values: [stored.filters.properties.values[0]] });
  const firstOnly = shoppers.filter(inFirst).map((s) => s.email).sort();
  assert.deepEqual(await apiMembers(id), firstOnly);
  await waitForMembers(firstOnly);
});

test('the cohort and action pages label their controls, fit a phone, and broke no content security policy', async () => {
  requireChromium();
  const cohort = (await expectOk(await server.api(`${P()}/cohorts/`))).results[0];
  const action = (await expectOk(await server.api(`${P()}/actions/`))).results[0];
  const pages = ['cohorts', 'cohorts/new', `cohorts/${cohort.id}`, 'actions', 'actions/new', `actions/${action.id}`];
  for (const where of pages) {
    await page.goto(`${server.url}/project/${projectId}/${where}`);
    await page.locator('h1').waitFor();
    await page.waitForLoadState('networkidle');
    if (where === 'cohorts/new') {
      await page.getByRole('button', { name: 'Add group of conditions' }).click();
      await page.getByRole('button', { name: 'Add behaviour condition to group 1' }).click();
    }
    if (where.endsWith('new')) await page.getByRole('button', { name: where.startsWith('cohorts') ? 'Add behaviour condition' : 'Add property filter to step 1', exact: true }).click();
    assert.deepEqual(await unlabelledControls(page), [], where);
  }
  const phone = await browser!.newContext({ viewport: { width: 390, height: 844 }, storageState: await context.storageState() });
  const small = await phone.newPage();
  try {
    for (const where of pages) {
      await small.goto(`${server.url}/project/${projectId}/${where}`);
      await small.locator('h1').waitFor();
      await small.waitForLoadState('networkidle');
      if (where === 'cohorts/new') {
        // A group of conditions, indented, with a behaviour row: still no sideways scrolling.
        await small.getByRole('button', { name: 'Add group of conditions' }).click();
        await small.getByRole('button', { name: 'Add behaviour condition to group 1' }).click();
      }
      assert.equal(await sidewaysOverflow(small), null, where);
    }
  } finally {
    await phone.close();
  }
  const problems = consoleLines.filter((line) => /Content Security Policy|Uncaught|TypeError|ReferenceError/.test(line));
  assert.deepEqual(problems, []);
});
