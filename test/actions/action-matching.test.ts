/**
 * The events API's `action_id` and `element` filters against a reference matcher
 * (helpers/actions-reference.ts) on generated autocapture events: random actions (event, URL,
 * text, href, tag and selector steps, each matching mode) must select exactly the events the
 * reference selects. Plus the fixed cases a reader can check by eye, and the 400s.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { v7 as uuidv7 } from 'uuid';
import { expectError, expectOk, q } from '../helpers/api-fixtures.js';
import { startInsightsServer } from '../helpers/insights.js';
import type { TestServer } from '../helpers/server.js';
import {
  actionMatches,
  asCaptured,
  refMatches,
  refSelectorMatches,
  rememberSelector,
  type Matching,
  type RefCompound,
  type RefElement,
  type RefEvent,
  type RefStep,
} from '../helpers/actions-reference.js';

let server: TestServer;
const ACTIONS = '/api/projects/@current/actions/';
const EVENTS = '/api/projects/@current/events/';

const TAGS = ['a', 'abbr', 'button', 'div', 'span'];
const CLASSES = ['btn', 'btn-primary', 'x', 'primary'];
const IDS = ['buy', 'buy-now', 'main'];
const WORDS = ['Buy', 'buy now', 'Buy "now"', 'a.b:c', 'x*y(z)', '50% off_', 'Sign up', ''];
const URLS = ['https://shop.test/pricing', 'https://shop.test/pricing?plan=pro', 'https://shop.test/Pricing', 'https://blog.test/a_b%c', null];
const HREFS = ['/buy', '/buy?x=1', '/pricing', 'https://x.test/"q"'];

const arbElement: fc.Arbitrary<RefElement> = fc.record({
  tag_name: fc.constantFrom(...TAGS),
  classes: fc.uniqueArray(fc.constantFrom(...CLASSES), { maxLength: 3 }),
  text: fc.option(fc.constantFrom(...WORDS.filter((w) => w !== '')), { nil: null }),
  href: fc.option(fc.constantFrom(...HREFS), { nil: null }),
  id: fc.option(fc.constantFrom(...IDS), { nil: null }),
  dataX: fc.option(fc.constantFrom('1', 'two', 'a b'), { nil: null }),
});

const arbEvent: fc.Arbitrary<Omit<RefEvent, 'uuid'>> = fc.record({
  event: fc.constantFrom('$autocapture', '$pageview', 'purchase'),
  url: fc.constantFrom(...URLS),
  plan: fc.option(fc.constantFrom('pro', 'free'), { nil: null }),
  elements: fc.array(arbElement, { maxLength: 4 }),
});

const arbCompound: fc.Arbitrary<Omit<RefCompound, 'combinator'>> = fc.record({
  tag: fc.option(fc.constantFrom(...TAGS), { nil: null }),
  classes: fc.uniqueArray(fc.constantFrom(...CLASSES), { maxLength: 2 }),
  id: fc.option(fc.constantFrom(...IDS), { nil: null, freq: 4 }),
  dataX: fc.option(fc.constantFrom('1', 'two', 'a b'), { nil: null, freq: 4 }),
});

const arbSelector = fc
  .tuple(fc.array(arbCompound, { minLength: 1, maxLength: 3 }), fc.array(fc.constantFrom<'>' | ' '>('>', ' '), { minLength: 3, maxLength: 3 }))
  .map(([compounds, links]) => compounds.map((c, i): RefCompound => ({ ...c, combinator: i === 0 ? null : links[i] })));

const arbMatching = fc.constantFrom<Matching>('exact', 'contains', 'regex');
const REGEXES = ['^Buy', 'now"?$', '(?i)pricing', 'a\\.b', '^/buy(\\?.*)?$', 'x\\*y', '[0-9]+%'];

const arbStep: fc.Arbitrary<RefStep> = fc
  .record(
    {
      event: fc.constantFrom('$autocapture', '$pageview', 'purchase'),
      url: fc.tuple(fc.constantFrom('pricing', 'https://shop.test/pricing', 'a_b%c', ...REGEXES), arbMatching),
      text: fc.tuple(fc.constantFrom(...WORDS.filter((w) => w !== ''), 'uy', ...REGEXES), arbMatching),
      href: fc.tuple(fc.constantFrom(...HREFS, 'buy', ...REGEXES), arbMatching),
      tag_name: fc.constantFrom(...TAGS),
      selector: arbSelector,
      plan: fc.constantFrom('pro', 'free'),
    },
    { requiredKeys: [] },
  )
  .map((r) => ({
    ...(r.event !== undefined && { event: r.event }),
    ...(r.url !== undefined && { url: r.url[0], url_matching: r.url[1] }),
    ...(r.text !== undefined && { text: r.text[0], text_matching: r.text[1] }),
    ...(r.href !== undefined && { href: r.href[0], href_matching: r.href[1] }),
    ...(r.tag_name !== undefined && { tag_name: r.tag_name }),
    ...(r.selector !== undefined && { selector: rememberSelector(r.selector) }),
    ...(r.plan !== undefined && { properties: [{ key: 'plan' as const, value: r.plan, type: 'event' as const }] }),
  }));

let events: RefEvent[] = [];
let actionCount = 0;

async function matchedUuids(query: string): Promise<string[]> {
  const page = await expectOk(await server.api(`${EVENTS}?limit=10000&${query}`));
  return page.results.map((e: any) => e.id).sort();
}

async function createAction(steps: unknown[]): Promise<number> {
  const action = await expectOk(await server.api(ACTIONS, { method: 'POST', body: { name: `generated ${++actionCount}`, steps } }), 201);
  return action.id;
}

const expected = (keep: (e: RefEvent) => boolean) =>
  events
    .filter(keep)
    .map((e) => e.uuid)
    .sort();

before(async () => {
  server = await startInsightsServer();
  const start = Date.now() - 3_600_000;
  events = fc.sample(arbEvent, { numRuns: 300, seed: 20261128 }).map((e) => ({ ...e, uuid: uuidv7() }));
  const batch = events.map((e, i) => ({
    uuid: e.uuid,
    event: e.event,
    distinct_id: `user-${i % 17}`,
    timestamp: new Date(start + i * 1000).toISOString(),
    properties: {
      ...(e.url !== null && { $current_url: e.url }),
      ...(e.plan !== null && { plan: e.plan }),
      ...(e.elements.length > 0 && { $elements: e.elements.map(asCaptured) }),
    },
  }));
  await expectOk(await server.post('/batch/', { api_key: server.projectKey, batch }));
});
after(async () => {
  await server?.stop();
});

test('the generated data covers each kind of match (so the property test below can fail)', () => {
  const sel = (text: string, compounds: RefCompound[]) => (rememberSelector(compounds), text);
  const aBtn = sel('div > a.btn', [
    { tag: 'div', classes: [], id: null, dataX: null, combinator: null },
    { tag: 'a', classes: ['btn'], id: null, dataX: null, combinator: '>' },
  ]);
  assert.ok(events.filter((e) => e.elements.length >= 2).length > 50);
  assert.ok(events.some((e) => actionMatches([{ selector: aBtn }], e)));
  assert.ok(events.some((e) => !actionMatches([{ selector: aBtn }], e) && e.elements.some((el) => el.tag_name === 'a')));
});

test('action_id selects exactly the events the reference matcher selects, for generated actions', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(arbStep, { minLength: 1, maxLength: 3 }), async (steps) => {
      const id = await createAction(steps);
      const got = await matchedUuids(`action_id=${id}`);
      assert.deepEqual(got, expected((e) => actionMatches(steps, e)), JSON.stringify(steps));
    }),
    { numRuns: 60, seed: 7 },
  );
});

test('element filters (text, href, tag_name, selector; positive and negative) agree with the reference', async () => {
  const ops: Record<string, Matching> = { exact: 'exact', icontains: 'contains', regex: 'regex' };
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom<'text' | 'href'>('text', 'href'),
      fc.constantFrom('exact', 'is_not', 'icontains', 'not_icontains', 'regex', 'not_regex'),
      fc.constantFrom(...WORDS.filter((w) => w !== ''), ...HREFS, 'BUY', ...REGEXES),
      async (key, operator, value) => {
        const got = await matchedUuids(`properties=${q([{ type: 'element', key, operator, value }])}`);
        const positive = ops[operator.replace(/^(is_)?not_?/, '') || 'exact'] ?? 'exact';
        const hit = (e: RefEvent) => e.elements.some((el) => refMatches(el[key], value, positive));
        const negated = operator.startsWith('not_') || operator === 'is_not';
        assert.deepEqual(got, expected((e) => hit(e) !== negated), `${key} ${operator} ${value}`);
      },
    ),
    { numRuns: 30, seed: 11 },
  );
  await fc.assert(
    fc.asyncProperty(arbSelector, fc.boolean(), async (compounds, negated) => {
      const value = rememberSelector(compounds);
      const got = await matchedUuids(`properties=${q([{ type: 'element', key: 'selector', value, operator: negated ? 'is_not' : 'exact' }])}`);
      assert.deepEqual(got, expected((e) => refSelectorMatches(compounds, e.elements) !== negated), value);
    }),
    { numRuns: 30, seed: 12 },
  );
  const tagged = await matchedUuids(`properties=${q([{ type: 'element', key: 'tag_name', value: 'abbr' }])}`);
  assert.deepEqual(tagged, expected((e) => e.elements.some((el) => el.tag_name === 'abbr')));
  for (const key of ['text', 'href', 'tag_name'] as const) {
    const has = (e: RefEvent) => e.elements.some((el) => el[key] !== null);
    assert.deepEqual(await matchedUuids(`properties=${q([{ type: 'element', key, operator: 'is_set' }])}`), expected(has), `${key} is_set`);
    assert.deepEqual(await matchedUuids(`properties=${q([{ type: 'element', key, operator: 'is_not_set' }])}`), expected((e) => !has(e)), `${key} is_not_set`);
  }
});

test('a fixed example: a step per kind, read by eye', async () => {
  const buy = (elements: RefElement[], url = 'https://shop.test/pricing') => ({ event: '$autocapture', url, plan: null, elements, uuid: '' });
  const el = (tag: string, extra: Partial<RefElement> = {}): RefElement => ({ tag_name: tag, classes: [], text: null, href: null, id: null, dataX: null, ...extra });
  const steps: RefStep[] = [{ event: '$autocapture', selector: rememberSelector([
    { tag: 'div', classes: [], id: 'main', dataX: null, combinator: null },
    { tag: 'a', classes: ['btn'], id: null, dataX: null, combinator: ' ' },
  ]), text: 'buy', text_matching: 'contains' }];
  assert.equal(steps[0].selector, 'div#main a.btn');
  assert.equal(actionMatches(steps, buy([el('a', { classes: ['btn', 'x'], text: 'Buy now' }), el('span'), el('div', { id: 'main' })])), true, 'text contains ignores case');
  assert.equal(actionMatches(steps, buy([el('a', { classes: ['btn', 'x'], text: 'Buy now' }), el('span'), el('div')])), false, 'the ancestor must match too');
  assert.equal(actionMatches([{ url: 'PRICING' }], buy([])), false, 'url contains is case-sensitive');
  assert.equal(actionMatches(steps, buy([el('a', { classes: ['btn-primary'], text: 'buy' }), el('div', { id: 'main' })])), false, 'classes are whole');
});

test('unknown, deleted or malformed action ids are 400s naming action_id; element filters with bad keys are 400s', async () => {
  await expectError(await server.api(`${EVENTS}?action_id=999999`), 400, 'invalid_choice', 'action_id');
  await expectError(await server.api(`${EVENTS}?action_id=abc`), 400, 'invalid_input', 'action_id');
  const id = await createAction([{ event: 'purchase' }]);
  assert.deepEqual(await matchedUuids(`action_id=${id}`), expected((e) => e.event === 'purchase'));
  await expectOk(await server.api(`${ACTIONS}${id}/`, { method: 'PATCH', body: { deleted: true } }));
  await expectError(await server.api(`${EVENTS}?action_id=${id}`), 400, 'invalid_choice', 'action_id');
  await expectError(await server.api(`${EVENTS}?properties=${q([{ type: 'element', key: 'color', value: 'x' }])}`), 400, 'invalid_input', 'properties');
  await expectError(await server.api(`${EVENTS}?properties=${q([{ type: 'element', key: 'selector', value: 'a:hover' }])}`), 400, 'invalid_input', 'properties');
  await expectError(await server.api(`${EVENTS}?properties=${q([{ type: 'element', key: 'text', operator: 'regex', value: '(' }])}`), 400, 'invalid_input', 'properties');
  await expectError(await server.api(`${EVENTS}?properties=${q([{ type: 'element', key: 'text', operator: 'gt', value: 1 }])}`), 400, 'invalid_input', 'properties');
});
