/**
 * Property definitions (docs/api.md, "Property definitions"): every list filter, ordering, pagination
 * walks, retrieve, PATCH validation, DELETE, seen_together. Data arrives through /batch/.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { expectError, expectOk, ingest, q, walk } from '../helpers/api-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
const BASE = '/api/projects/@current/property_definitions/';

before(async () => {
  server = await startServer({ env: { SIGHTLINE_GEOIP: 'false' } });
  await ingest(server, [
    {
      event: 'signup',
      properties: {
        plan: 'pro',
        amount: 12,
        '$feature/beta': 'on',
        '$feature/new-nav': true,
        'discount%': 'none',
        plan_name: 'Pro plan',
        distinct_id: 'user-1',
        $initial_referrer: 'x',
        $session_entry_url: 'y',
        timestamp: 5,
        $set: { email: 'a@b.test', name: 'Ann' },
      },
    },
    { event: 'purchase', properties: { amount: 40, price: 9.5, currency: 'EUR' } },
    { event: '$pageview', properties: { $browser: 'Firefox', title: 'Home' } },
    { event: '$groupidentify', properties: { $group_type: 'company', $group_key: 'acme', $group_set: { industry: 'tech', employees: 50 } } },
    { event: '$groupidentify', properties: { $group_type: 'team', $group_key: 'core', $group_set: { size: 3 } } },
  ]);
});
after(async () => {
  await server.stop();
});

const list = async (query = '') => expectOk(await server.api(`${BASE}?limit=1000&${query}`));
const names = async (query = '') => (await list(query)).results.map((d: any) => d.name);
const byName = async (name: string) => (await list(`properties=${q(name)}`)).results[0];

test('type=event (default) lists event properties by name, without the core ones', async () => {
  const all = await names();
  assert.deepEqual(all, [...all].sort(), 'ordered by name');
  for (const expected of ['plan', 'amount', 'price', '$browser', '$feature/beta', 'discount%', 'timestamp']) assert.ok(all.includes(expected), expected);
  for (const hidden of ['distinct_id', '$initial_referrer', '$session_entry_url', '$set', 'email', 'industry']) assert.ok(!all.includes(hidden), hidden);
  assert.deepEqual(await names('type=event'), all);
  const plan = await byName('plan');
  assert.deepEqual(Object.keys(plan).sort(), ['id', 'is_numerical', 'is_seen_on_filtered_events', 'name', 'property_type', 'tags']);
  assert.equal(plan.property_type, 'String');
  assert.equal(plan.is_seen_on_filtered_events, null);
  assert.deepEqual(plan.tags, []);
  assert.equal((await byName('amount')).is_numerical, true);
});

test('type=person and type=group select other definitions; group needs group_type_index', async () => {
  const person = await names('type=person');
  assert.ok(person.includes('email') && person.includes('name'));
  assert.ok(!person.includes('plan'));
  assert.deepEqual(await names('type=group&group_type_index=0'), ['employees', 'industry']);
  assert.deepEqual(await names('type=group&group_type_index=1'), ['size']);
  await expectError(await server.api(`${BASE}?type=group`), 400, 'required', 'group_type_index');
  await expectError(await server.api(`${BASE}?type=event&group_type_index=0`), 400, 'invalid_input', 'group_type_index');
  await expectError(await server.api(`${BASE}?type=group&group_type_index=7`), 400, 'invalid_input', 'group_type_index');
  await expectError(await server.api(`${BASE}?type=cohort`), 400, 'invalid_choice', 'type');
});

test('search: every word must match, case-insensitive, wildcards taken literally', async () => {
  assert.deepEqual(await names('search=PLAN'), ['plan', 'plan_name']);
  assert.deepEqual(await names(`search=${q('name plan')}`), ['plan_name']);
  assert.deepEqual(await names(`search=${q('feature beta')}`), ['$feature/beta']);
  assert.deepEqual(await names(`search=${q('%')}`), ['discount%']);
  assert.deepEqual(await names(`search=${q('n_n')}`), ['plan_name']);
  assert.deepEqual(await names('search=zzz'), []);
});

test('search ignores case in every script, not only ASCII', async () => {
  await ingest(server, [{ event: 'signup', properties: { prénom: 'Zoë', 'ΌΝΟΜΑ': 'x', '\u212Aelvin': 'x' } }]);
  assert.deepEqual(await names(`search=${q('PRÉN')}`), ['prénom']);
  assert.deepEqual(await names(`search=${q('όνομα')}`), ['ΌΝΟΜΑ']);
  // The Kelvin sign folds to an ASCII k: non-ASCII text that an ASCII search finds.
  assert.deepEqual(await names(`search=${q('kelvin')}`), ['\u212Aelvin']);
});

test('properties, excluded_properties, is_feature_flag, is_numerical', async () => {
  assert.deepEqual(await names(`properties=${q('price,amount, nope')}`), ['amount', 'price']);
  const excluded = await names(`excluded_properties=${q(['plan', 'amount'])}`);
  assert.ok(!excluded.includes('plan') && !excluded.includes('amount') && excluded.includes('price'));
  await expectError(await server.api(`${BASE}?excluded_properties=plan`), 400, 'invalid_input', 'excluded_properties');
  await expectError(await server.api(`${BASE}?excluded_properties=${q({ a: 1 })}`), 400, 'invalid_input', 'excluded_properties');

  assert.deepEqual(await names('is_feature_flag=true'), ['$feature/beta', '$feature/new-nav']);
  const notFlags = await names('is_feature_flag=false');
  assert.ok(notFlags.length > 0 && notFlags.every((n: string) => !n.startsWith('$feature/')));

  // `timestamp` is numeric here, yet never offered as a numerical property.
  assert.equal((await byName('timestamp')).is_numerical, true);
  assert.deepEqual(await names('is_numerical=true'), ['amount', 'price']);
  const nonNumeric = await names('is_numerical=false');
  assert.ok(nonNumeric.includes('plan') && !nonNumeric.includes('amount'));
  await expectError(await server.api(`${BASE}?is_numerical=maybe`), 400, 'invalid_input', 'is_numerical');
});

test('event_names fills is_seen_on_filtered_events and orders seen ones first; filter_by_event_names keeps only them', async () => {
  // $ip rides on every event; leaving it out keeps the expectations about the data sent here.
  const noIp = `excluded_properties=${q(['$ip'])}`;
  const page = await list(`event_names=${q(['purchase'])}&${noIp}`);
  const seen = page.results.filter((d: any) => d.is_seen_on_filtered_events === true).map((d: any) => d.name);
  assert.deepEqual(seen, ['amount', 'currency', 'price']);
  assert.deepEqual(page.results.slice(0, 3).map((d: any) => d.name), seen, 'seen first');
  const rest = page.results.slice(3);
  assert.ok(rest.length > 0 && rest.every((d: any) => d.is_seen_on_filtered_events === false));
  assert.deepEqual(rest.map((d: any) => d.name), rest.map((d: any) => d.name).sort());

  assert.deepEqual(await names(`event_names=${q(['purchase', '$pageview'])}&filter_by_event_names=true&${noIp}`), ['$browser', 'amount', 'currency', 'price', 'title']);
  assert.deepEqual(await names(`event_names=${q(['purchase'])}&filter_by_event_names=true&search=price`), ['price']);
  await expectError(await server.api(`${BASE}?event_names=purchase`), 400, 'invalid_input', 'event_names');
  await expectError(await server.api(`${BASE}?type=person&event_names=${q(['signup'])}`), 400, 'invalid_input', 'event_names');
});

test('limit and offset: validated with attr, DRF links keep the other parameters', async () => {
  for (const [query, attr] of [
    ['limit=0', 'limit'],
    ['limit=-1', 'limit'],
    ['limit=abc', 'limit'],
    ['offset=-5', 'offset'],
    ['offset=x', 'offset'],
  ]) {
    await expectError(await server.api(`${BASE}?${query}`), 400, 'invalid_input', attr);
  }
  // Past the maximum the limit is clamped, as DRF does, and the links carry the clamped value.
  const clamped = await expectOk(await server.api(`${BASE}?limit=5000&offset=1`));
  assert.equal(new URL(clamped.previous).searchParams.get('limit'), '1000');
  const first = await expectOk(await server.api(`${BASE}?search=a&limit=2`));
  assert.equal(first.previous, null);
  const next = new URL(first.next);
  assert.equal(next.searchParams.get('search'), 'a');
  assert.equal(next.searchParams.get('limit'), '2');
  assert.equal(next.searchParams.get('offset'), '2');
  const second = await expectOk(await server.api(next.pathname + next.search));
  const back = new URL(second.previous);
  assert.equal(back.searchParams.get('offset'), null, 'previous to the first page drops offset');
  assert.equal(back.searchParams.get('search'), 'a');
  const beyond = await expectOk(await server.api(`${BASE}?limit=2&offset=1000`));
  assert.deepEqual(beyond.results, []);
  assert.equal(beyond.next, null);
  assert.equal(new URL(beyond.previous).searchParams.get('offset'), '998');
  const defaults = await expectOk(await server.api(BASE));
  assert.ok(defaults.results.length <= 100);
});

test('pagination walks visit every item exactly once, forwards and backwards', async () => {
  await ingest(server, [{ event: 'walk', properties: Object.fromEntries(Array.from({ length: 23 }, (_, i) => [`walk_${String(i).padStart(2, '0')}`, i])) }]);
  for (const limit of [1, 5, 7, 23, 100]) {
    const { results, pages } = await walk(server, `${BASE}?search=walk_&limit=${limit}`);
    assert.equal(pages[0].count, 23);
    assert.deepEqual(results.map((d: any) => d.name), Array.from({ length: 23 }, (_, i) => `walk_${String(i).padStart(2, '0')}`));
    assert.equal(pages.length, Math.ceil(23 / limit));
    // And back: previous links from the last page reach the first page again.
    let page = pages.at(-1);
    const backwards = [...page.results];
    while (page.previous) {
      page = await expectOk(await server.api(new URL(page.previous).pathname + new URL(page.previous).search));
      backwards.unshift(...page.results);
    }
    assert.deepEqual(backwards.map((d: any) => d.id), results.map((d: any) => d.id));
  }
  const seenWalk = await walk(server, `${BASE}?limit=4&event_names=${q(['walk'])}&search=walk`);
  assert.equal(new Set(seenWalk.results.map((d: any) => d.id)).size, 23);
});

test('retrieve; PATCH validation and effects', async () => {
  const plan = await byName('plan');
  const path = `${BASE}${plan.id}/`;
  assert.deepEqual(await expectOk(await server.api(path)), plan);
  const patch = (body: unknown) => server.api(path, { method: 'PATCH', body });

  await expectError(await patch({ property_type: 'Integer' }), 400, 'invalid_choice', 'property_type');
  await expectError(await patch({ property_type: null }), 400, 'invalid_input', 'property_type');
  await expectError(await patch({ is_numerical: 'yes' }), 400, 'invalid_input', 'is_numerical');
  await expectError(await patch({ tags: 'important' }), 400, 'invalid_input', 'tags');
  await expectError(await patch({ tags: [1, 2] }), 400, 'invalid_input', 'tags');
  await expectError(await patch({ name: '' }), 400, 'blank', 'name');
  await expectError(await patch({ name: 'amount' }), 400, 'unique', 'name');
  await expectError(await patch('{"tags": ['), 400, 'parse_error');
  await expectError(await patch([1]), 400, 'invalid_input');

  const typed = await expectOk(await patch({ property_type: 'Numeric', tags: [' billing ', 'billing', 'Core'] }));
  assert.equal(typed.property_type, 'Numeric');
  assert.equal(typed.is_numerical, true, 'Numeric implies is_numerical');
  assert.deepEqual(typed.tags, ['billing', 'Core']);
  const explicit = await expectOk(await patch({ property_type: 'String', is_numerical: false }));
  assert.equal(explicit.is_numerical, false);
  // A definition is never numerical without being Numeric, nor Numeric without being numerical.
  await expectError(await patch({ property_type: 'String', is_numerical: true }), 400, 'invalid_input', 'is_numerical');
  await expectError(await patch({ is_numerical: true }), 400, 'invalid_input', 'is_numerical');
  await expectError(await patch({ property_type: 'Numeric', is_numerical: false }), 400, 'invalid_input', 'is_numerical');
  assert.equal((await expectOk(await server.api(path))).is_numerical, false, 'a refused PATCH changes nothing');
  const renamed = await expectOk(await patch({ name: 'plan_tier' }));
  assert.equal(renamed.name, 'plan_tier');
  assert.deepEqual(await expectOk(await server.api(path)), { ...renamed, is_seen_on_filtered_events: null });
  assert.deepEqual(renamed.tags, ['billing', 'Core'], 'unchanged fields are kept');

  await expectError(await server.api(`${BASE}00000000-0000-0000-0000-000000000000/`, { method: 'PATCH', body: { tags: [] } }), 404, 'not_found');
  // Ingesting the old name again re-creates it (the rename dropped the ingestion cache).
  await ingest(server, [{ event: 'signup', properties: { plan: 'free' } }]);
  assert.ok((await byName('plan')).id !== plan.id);
});

test('DELETE → 204 without a body, then 404; ingestion re-creates it', async () => {
  const currency = await byName('currency');
  const response = await server.api(`${BASE}${currency.id}/`, { method: 'DELETE' });
  assert.equal(response.status, 204);
  assert.equal(await response.text(), '');
  await expectError(await server.api(`${BASE}${currency.id}/`), 404, 'not_found');
  await expectError(await server.api(`${BASE}${currency.id}/`, { method: 'DELETE' }), 404, 'not_found');
  assert.equal(await byName('currency'), undefined);

  await ingest(server, [{ event: 'purchase', properties: { currency: 'USD' } }]);
  const again = await byName('currency');
  assert.ok(again && again.id !== currency.id);
});

test('seen_together maps each event name to whether the property was seen with it', async () => {
  const path = `${BASE}seen_together/`;
  const body = await expectOk(await server.api(`${path}?event_names=${q(['signup', 'purchase', 'never'])}&property_name=amount`));
  assert.deepEqual(body, { signup: true, purchase: true, never: false });
  assert.deepEqual(await expectOk(await server.api(`${path}?event_names=${q(['$pageview', 'purchase'])}&property_name=title`)), { $pageview: true, purchase: false });
  await expectError(await server.api(`${path}?event_names=${q(['signup'])}`), 400, 'required', 'property_name');
  await expectError(await server.api(`${path}?property_name=amount`), 400, 'required', 'event_names');
  await expectError(await server.api(`${path}?event_names=signup&property_name=amount`), 400, 'invalid_input', 'event_names');
});
