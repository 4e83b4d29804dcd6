/**
 * Every 400 speaks to a person: a sentence, the parameter as `attr`, `required` for a missing
 * one, `invalid_choice` for a value outside a list, never the schema's own paths. Query
 * strings are read as DRF reads them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { expectError, expectOk, ingest } from '../helpers/api-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let orgId: string;
let memberUuid: string;

before(async () => {
  server = await startServer();
  await ingest(server, [{ event: 'signup', properties: { plan: 'pro', '$feature/beta': true } }]);
  orgId = (await expectOk(await server.api('/api/organizations/@current/'))).id;
  // A second member whose level the owner may change.
  const added = await server.api(`/api/organizations/${orgId}/members/`, { method: 'GET' });
  const members = await expectOk(added);
  memberUuid = members.results[0].user.uuid;
});

after(async () => {
  await server?.stop();
});

const SCHEMA_WORDING = /querystring|body\/|params\/|must be >=|must NOT|must have required|must be equal to one of|must be (integer|boolean|string)/;

async function refused(response: Response, code: string, attr: string): Promise<string> {
  const body = await expectError(response, 400, code, attr);
  assert.doesNotMatch(body.detail, SCHEMA_WORDING, body.detail);
  assert.match(body.detail, /^[A-Z"].*\.$/, `a sentence: ${body.detail}`);
  return body.detail;
}

describe('400 answers', () => {
  it('name the parameter in a sentence', async () => {
    const defs = '/api/projects/@current/property_definitions/';
    assert.match(await refused(await server.api(`${defs}?limit=0`), 'invalid_input', 'limit'), /greater than or equal to 1/);
    assert.match(await refused(await server.api(`${defs}?limit=abc`), 'invalid_input', 'limit'), /valid integer/);
    assert.match(await refused(await server.api(`${defs}?type=nope`), 'invalid_choice', 'type'), /"event", "person", "group"/);
    await refused(await server.api(`${defs}?is_numerical=maybe`), 'invalid_input', 'is_numerical');
    const plan = (await expectOk(await server.api(`${defs}?search=plan`))).results[0];
    assert.match(await refused(await server.api(`${defs}${plan.id}/`, { method: 'PATCH', body: { name: '' } }), 'blank', 'name'), /blank/);
  });

  it('use `required` for every missing parameter', async () => {
    await refused(await server.api('/api/projects/@current/property_definitions/seen_together/?event_names=["signup"]'), 'required', 'property_name');
    await refused(await server.api(`/api/organizations/${orgId}/members/${memberUuid}/`, { method: 'PATCH', body: {} }), 'required', 'level');
    await refused(await server.api('/api/projects/@current/feature_flags/', { method: 'POST', body: { name: 'no key' } }), 'required', 'key');
  });

  it('an unknown member level is invalid_choice; its text ("8") is a level', async () => {
    await refused(await server.api(`/api/organizations/${orgId}/members/${memberUuid}/`, { method: 'PATCH', body: { level: 2 } }), 'invalid_choice', 'level');
    // The only member is the key's owner, who may not change their own level: a 403, after
    // "8" was read as a valid level.
    const own = await server.api(`/api/organizations/${orgId}/members/${memberUuid}/`, { method: 'PATCH', body: { level: '8' } });
    assert.equal(own.status, 403, await own.text());
  });

  it('say what is wrong with a capture key that is not text', async () => {
    const response = await server.post('/capture/', { api_key: 123, event: 'e', distinct_id: 'u' });
    assert.equal(response.status, 401);
    assert.match((await response.json()).detail, /must be a non-empty text/);
  });
});

describe('query strings read as DRF reads them', () => {
  const defs = '/api/projects/@current/property_definitions/';
  const names = async (query: string) => (await expectOk(await server.api(`${defs}?${query}`))).results.map((r: { name: string }) => r.name);

  it('booleans: 1/yes/on/t/true and 0/no/off/f/false, any case', async () => {
    for (const yes of ['1', 'yes', 'on', 't', 'True', 'YES']) assert.deepEqual(await names(`is_feature_flag=${yes}`), ['$feature/beta'], yes);
    for (const no of ['0', 'no', 'off', 'f', 'False']) assert.ok(!(await names(`is_feature_flag=${no}`)).includes('$feature/beta'), no);
  });

  it('an empty number is absent and a repeated one counts with its last value', async () => {
    const all = await expectOk(await server.api(`${defs}?limit=`));
    assert.ok(all.results.length > 1);
    const last = await expectOk(await server.api(`${defs}?limit=5&limit=1`));
    assert.equal(last.results.length, 1);
  });
});
