/**
 * The shapes flag results take on the wire: v2 flag details (`/flags?v=2`, `/decide?v=4`) and
 * the legacy `featureFlags` / `featureFlagPayloads` maps. The flag maps are written as JSON
 * (json-text.ts): a flag's results take few distinct forms (reason × variant), so the JSON of
 * each form is kept with the loaded flag and an answer mostly joins cached pieces.
 */
import { flagValue } from '../../engine/index.js';
import type { FlagResult, FlagValue } from '../../engine/types.js';
import type { FlagEvaluation } from '../../evaluation/index.js';
import type { StoredFlag } from '../../../store/types.js';
import { indexOfKey, JsonObjectBytes, JsonObjectText, memberBytes, type MemberBytes, type RawJson } from './json-text.js';
import { requestId } from './request-id.js';

/** SDKs parse payloads from JSON text, so a payload stored as a JSON value is encoded once. */
export function encodePayload(payload: unknown): string | undefined {
  if (payload === null || payload === undefined) return undefined;
  return typeof payload === 'string' ? payload : JSON.stringify(payload);
}

/**
 * A loaded flag's members in the answers (`"<key>":…`), each form serialised once: the large v2
 * details as UTF-8 bytes, the small legacy members as text (see `RawJson`).
 */
class FlagText {
  /**
   * False for the key `__proto__`: the answers were objects built by assignment, which turns
   * that key into the prototype, so JSON never listed such a flag. Kept as it was.
   */
  readonly listed: boolean;
  /** The key as an array index (objects list those first), or null. */
  readonly index: number | null;
  /** `"<key>"` */
  readonly name: string;
  private readonly detailsHead: string;
  private readonly metadataHead: string;
  private readonly metadataTail: string;
  private readonly details = new WeakMap<FlagResult, MemberBytes>();
  private readonly values = new Map<FlagValue, string>();
  private readonly payloads = new Map<string, string>();

  constructor(flag: StoredFlag) {
    this.listed = flag.key !== '__proto__';
    this.index = indexOfKey(flag.key);
    this.name = JSON.stringify(flag.key);
    this.detailsHead = `${this.name}:{"key":${this.name},"enabled":`;
    this.metadataHead = `"metadata":{"id":${JSON.stringify(flag.id)},"version":${JSON.stringify(flag.version)}`;
    this.metadataTail = `,"description":${JSON.stringify(flag.name || null)},"has_experiment":${JSON.stringify(flag.has_experiment ?? false)}}}`;
  }

  /** `"<key>":{key, enabled, variant, [failed], reason, metadata: {id, version, [payload], description, has_experiment}}` */
  detailsMember(result: FlagResult): MemberBytes {
    // Results are immutable (and shared across requests by the engine), so the text is kept per result.
    let member = this.details.get(result);
    if (member === undefined) {
      const payload = result.enabled ? encodePayload(result.payload) : undefined;
      member = memberBytes(
        `${this.detailsHead}${JSON.stringify(result.enabled)},"variant":${JSON.stringify(result.variant)},` +
          `${result.failed ? '"failed":true,' : ''}"reason":${JSON.stringify(result.reason)},${this.metadataHead}` +
          `${payload === undefined ? '' : `,"payload":${JSON.stringify(payload)}`}${this.metadataTail}`,
      );
      this.details.set(result, member);
    }
    return member;
  }

  /** `"<key>":<value>` */
  valueMember(value: FlagValue): string {
    return this.member(this.values, value);
  }

  /** `"<key>":"<payload>"` */
  payloadMember(payload: string): string {
    return this.member(this.payloads, payload);
  }

  /** `"<key>":<JSON of value>`, remembered for the first MAX_FORMS values. */
  private member<V>(forms: Map<V, string>, value: V): string {
    let member = forms.get(value);
    if (member === undefined) {
      member = `${this.name}:${JSON.stringify(value)}`;
      if (forms.size < MAX_FORMS) forms.set(value, member);
    }
    return member;
  }
}

/** Values and payloads come from the flag's definition, so few; past this many they are not kept. */
const MAX_FORMS = 256;

// Loaded flags are never changed in place (the flag cache replaces them), and a flag's results
// come from its own definition, so the cached texts stay few and live exactly as long as it.
const flagTexts = new WeakMap<StoredFlag, FlagText>();

function textOf(flag: StoredFlag): FlagText {
  let text = flagTexts.get(flag);
  if (!text) flagTexts.set(flag, (text = new FlagText(flag)));
  return text;
}

/** `{key: details}` of every evaluated flag; failed flags say so (posthog-js keeps its old value). */
export function flagDetails(evaluation: FlagEvaluation): RawJson {
  const details = new JsonObjectBytes();
  for (const { flag, result } of evaluation.results) {
    const text = textOf(flag);
    if (text.listed) details.add(text.detailsMember(result), text.index);
  }
  return details.toRaw();
}

/**
 * `featureFlags` (all evaluated flags, or only enabled ones) and `featureFlagPayloads` (enabled
 * flags with a payload). Failed flags are left out so clients keep their previous values.
 */
export function legacyFlags(evaluation: FlagEvaluation, enabledOnly: boolean) {
  const featureFlags = new JsonObjectText();
  const featureFlagPayloads = new JsonObjectText();
  for (const { flag, result } of evaluation.results) {
    const text = textOf(flag);
    if (result.failed || (enabledOnly && !result.enabled) || !text.listed) continue;
    featureFlags.add(text.valueMember(flagValue(result)), text.index);
    const payload = result.enabled ? encodePayload(result.payload) : undefined;
    if (payload !== undefined) featureFlagPayloads.add(text.payloadMember(payload), text.index);
  }
  return { featureFlags: featureFlags.toRaw(), featureFlagPayloads: featureFlagPayloads.toRaw() };
}

/** The keys of the enabled-only `featureFlags`, as `Object.keys()` lists them (`/decide?v=1`). */
export function enabledFlagKeys(evaluation: FlagEvaluation): RawJson {
  const keys = new JsonObjectText();
  for (const { flag, result } of evaluation.results) {
    const text = textOf(flag);
    if (result.failed || !result.enabled || !text.listed) continue;
    keys.add(text.name, text.index);
  }
  return keys.toRaw('[', ']');
}

/** What every `/flags` answer carries next to its flags. */
export const responseMeta = (evaluation: FlagEvaluation) => ({
  errorsWhileComputingFlags: evaluation.errors,
  quotaLimited: [] as string[],
  requestId: requestId(),
  evaluatedAt: Date.now(),
});

/** `{flags, ...responseMeta}`, written out (no spread: this runs on every request). */
export const v2Envelope = (evaluation: FlagEvaluation) => ({
  flags: flagDetails(evaluation),
  errorsWhileComputingFlags: evaluation.errors,
  quotaLimited: [] as string[],
  requestId: requestId(),
  evaluatedAt: Date.now(),
});

export const NO_FLAGS: FlagEvaluation = { results: [], errors: false };
