/**
 * Operators where PostHog's service and posthog-node's local evaluator could part ways:
 * /flags answers as PostHog's service does; posthog-node, evaluating locally from
 * /flags/definitions, agrees, or sends the flag to /flags (for operators it does not know),
 * except in the cases docs/flags.md lists, which are pinned here so the list stays true.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PostHog } from 'posthog-node';
import { createFlag, everyone, evaluate } from '../helpers/flags.js';
import { startServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let local: PostHog;

const prop = (key: string, operator: string, value: unknown) => ({ key, operator, value, type: 'person' });
const FLAGS = [
  everyone('multi-contains', [prop('tags', 'icontains_multi', ['foo', 'BAR'])]),
  everyone('multi-excludes', [prop('tags', 'not_icontains_multi', ['foo', 'bar'])]),
  everyone('adult', [prop('age', 'gte', 25)]),
  everyone('new-app', [prop('version', 'semver_gt', '1.0.0')]),
  everyone('any-name', [prop('name', 'regex', '.+')]),
  everyone('not-x-start', [prop('name', 'not_starts_with', 'x')]),
  everyone('not-x-end', [prop('name', 'not_ends_with', 'x')]),
];

before(async () => {
  server = await startServer({ env: { SIGHTLINE_GEOIP: 'false' } });
  for (const flag of FLAGS) await createFlag(server, flag);
  local = new PostHog(server.projectKey, { host: server.url, personalApiKey: server.personalKey, featureFlagsPollingInterval: 60_000 });
  assert.equal(await local.waitForLocalEvaluationReady(10_000), true);
});

after(async () => {
  await local?.shutdown(2000);
  await server?.stop();
});

async function remote(properties: Record<string, unknown>): Promise<Record<string, boolean>> {
  const answer = await evaluate(server, '/flags?v=2', { api_key: server.projectKey, distinct_id: 'someone', person_properties: properties });
  assert.equal(answer.errorsWhileComputingFlags, false);
  return Object.fromEntries(Object.entries(answer.flags as Record<string, { enabled: boolean }>).map(([key, flag]) => [key, flag.enabled]));
}

async function locally(key: string, properties: Record<string, unknown>): Promise<unknown> {
  return local.getFeatureFlag(key, 'someone', { personProperties: properties });
}

describe('operators PostHog evaluates on the server', () => {
  it('icontains_multi and not_icontains_multi are accepted and evaluated, locally through /flags', async () => {
    for (const tags of ['xbarx', 'nothing here']) {
      const answer = await remote({ tags });
      assert.equal(answer['multi-contains'], tags === 'xbarx');
      assert.equal(answer['multi-excludes'], tags !== 'xbarx');
      assert.equal(await locally('multi-contains', { tags }), answer['multi-contains']);
      assert.equal(await locally('multi-excludes', { tags }), answer['multi-excludes']);
    }
  });

  it('a non-numeric value never satisfies a numeric comparison (posthog-node compares the texts)', async () => {
    assert.equal((await remote({ age: 'not_a_number' })).adult, false);
    assert.equal((await remote({ age: '30' })).adult, true);
    assert.equal(await locally('adult', { age: 'not_a_number' }), true, 'the difference docs/flags.md lists');
    assert.equal(await locally('adult', { age: '30' }), true);
  });

  it('a malformed version never satisfies a semver operator (posthog-node reads what it can)', async () => {
    for (const version of ['1..2.3', '1.2.3.']) {
      assert.equal((await remote({ version }))['new-app'], false, version);
      assert.equal(await locally('new-app', { version }), true, `the difference docs/flags.md lists (${version})`);
    }
    assert.equal((await remote({ version: '1.2.3' }))['new-app'], true);
    assert.equal(await locally('new-app', { version: '1.2.3' }), true);
  });

  it('null is the text "null" for string operators, on the server as locally', async () => {
    const answer = await remote({ name: null });
    assert.deepEqual(
      { any: answer['any-name'], start: answer['not-x-start'], end: answer['not-x-end'] },
      { any: true, start: true, end: true },
    );
    assert.equal(await locally('any-name', { name: null }), true);
    assert.equal(await locally('not-x-start', { name: null }), true);
    assert.equal(await locally('not-x-end', { name: null }), true);
  });
});
