/**
 * Flag answers are written as JSON bytes from cached pieces (flags/remote/wire/format.ts, json-text.ts).
 * They must be byte for byte what `JSON.stringify` gives for the same answer built as objects,
 * key order included (array-index keys first, as JS objects list them).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';

import { makeReason } from '../../../src/flags/engine/reasons.js';
import type { FlagResult, ReasonCode } from '../../../src/flags/engine/types.js';
import type { FlagEvaluation } from '../../../src/flags/evaluation/index.js';
import { decideBody } from '../../../src/flags/remote/answer.js';
import { encodePayload, flagDetails, legacyFlags } from '../../../src/flags/remote/wire/format.js';
import { indexOfKey, toJson } from '../../../src/flags/remote/wire/json-text.js';
import type { StoredFlag } from '../../../src/store/types.js';

// --- the answer as objects, the way the endpoints built it before --------------------------------

function detailsObject(evaluation: FlagEvaluation): Record<string, unknown> {
  const flags: Record<string, unknown> = {};
  for (const { flag, result } of evaluation.results) {
    const payload = result.enabled ? encodePayload(result.payload) : undefined;
    flags[flag.key] = {
      key: flag.key,
      enabled: result.enabled,
      variant: result.variant,
      ...(result.failed && { failed: true }),
      reason: result.reason,
      metadata: {
        id: flag.id,
        version: flag.version,
        ...(payload !== undefined && { payload }),
        description: flag.name || null,
        has_experiment: flag.has_experiment ?? false,
      },
    };
  }
  return flags;
}

function legacyObjects(evaluation: FlagEvaluation, enabledOnly: boolean) {
  const featureFlags: Record<string, unknown> = {};
  const featureFlagPayloads: Record<string, string> = {};
  for (const { flag, result } of evaluation.results) {
    if (result.failed || (enabledOnly && !result.enabled)) continue;
    featureFlags[flag.key] = result.enabled ? (result.variant ?? true) : false;
    const payload = result.enabled ? encodePayload(result.payload) : undefined;
    if (payload !== undefined) featureFlagPayloads[flag.key] = payload;
  }
  return { featureFlags, featureFlagPayloads };
}

function decideObject(version: number, evaluation: FlagEvaluation): Record<string, unknown> {
  const base = {
    config: { enable_collect_everything: true },
    editorParams: {},
    errorComputingFlags: evaluation.errors,
    errorsWhileComputingFlags: evaluation.errors,
    isAuthenticated: false,
    supportedCompression: ['gzip', 'gzip-js', 'lz64'],
  };
  if (version === 3) return { ...base, ...legacyObjects(evaluation, false) };
  const { featureFlags } = legacyObjects(evaluation, true);
  return { ...base, featureFlags: version === 2 ? featureFlags : Object.keys(featureFlags) };
}

// --- random evaluations ------------------------------------------------------------------------------

const keyArb = fc.oneof(
  fc.stringMatching(/^[a-zA-Z0-9_-]{1,12}$/),
  fc.constantFrom('0', '7', '123', '007', '4294967294', '4294967295', '99999999999', '-1', '1e3', '__proto__', 'constructor'),
);
const codes: ReasonCode[] = ['condition_match', 'no_condition_match', 'out_of_rollout_bound', 'no_group_type', 'holdout_condition_value', 'disabled'];
const resultArb = fc.record({
  enabled: fc.boolean(),
  variant: fc.option(fc.constantFrom('control', 'test', 'v"1', 'ü'), { nil: null }),
  failed: fc.boolean(),
  code: fc.constantFrom(...codes),
  index: fc.option(fc.nat(3), { nil: null }),
  payload: fc.oneof(fc.constant(null), fc.constantFrom('{"a":1}', '"quoted \\" text"', 'plain'), fc.jsonValue()),
});
const flagArb = fc.record({
  id: fc.nat(10_000),
  version: fc.nat(50),
  name: fc.constantFrom('', 'Beta', 'He said "hi" — ü\u2028'),
  has_experiment: fc.option(fc.boolean(), { nil: undefined }),
});
const evaluationArb = fc
  .uniqueArray(fc.tuple(keyArb, flagArb, resultArb), { selector: ([key]) => key, maxLength: 25 })
  .chain((entries) => fc.record({ entries: fc.constant(entries), errors: fc.boolean() }))
  .map(({ entries, errors }): FlagEvaluation => ({
    errors,
    results: entries.map(([key, meta, r]) => {
      const flag = { ...meta, key, project_id: 1, filters: { groups: [] }, active: true, deleted: false } as unknown as StoredFlag;
      const result: FlagResult = {
        key,
        enabled: r.enabled,
        variant: r.variant,
        reason: makeReason(r.code, r.index),
        payload: r.payload,
        ...(r.failed && { failed: true as const }),
      };
      return { flag, result };
    }),
  }));

test('v2 flag details are JSON.stringify of the same answer, byte for byte', () => {
  fc.assert(
    fc.property(evaluationArb, (evaluation) => {
      assert.equal(toJson({ flags: flagDetails(evaluation), n: 1 }).toString(), JSON.stringify({ flags: detailsObject(evaluation), n: 1 }));
    }),
    { numRuns: 300 },
  );
});

test('legacy maps and /decide bodies are JSON.stringify of the same answer, byte for byte', () => {
  fc.assert(
    fc.property(evaluationArb, fc.constantFrom(1, 2, 3), (evaluation, version) => {
      assert.equal(toJson(decideBody(version, evaluation)).toString(), JSON.stringify(decideObject(version, evaluation)));
      const { featureFlags, featureFlagPayloads } = legacyFlags(evaluation, false);
      assert.equal(toJson({ featureFlags, featureFlagPayloads }).toString(), JSON.stringify(legacyObjects(evaluation, false)));
    }),
    { numRuns: 300 },
  );
});

test('the same flag and result give the same text on every request (cached pieces)', () => {
  fc.assert(
    fc.property(evaluationArb, (evaluation) => {
      const first = toJson({ flags: flagDetails(evaluation) });
      assert.deepEqual(toJson({ flags: flagDetails(evaluation) }), first);
    }),
    { numRuns: 50 },
  );
});

test('toJson leaves out members JSON.stringify leaves out', () => {
  const body = { a: undefined, b: () => 1, c: null, d: [undefined], e: 'x' };
  assert.equal(toJson(body).toString(), JSON.stringify(body));
});

test('array-index keys are those JS objects order first', () => {
  for (const key of ['0', '7', '4294967294']) assert.equal(indexOfKey(key), Number(key));
  for (const key of ['007', '-1', '1e3', '4294967295', 'a1', '']) assert.equal(indexOfKey(key), null);
});
