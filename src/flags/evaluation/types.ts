import type { JsonObject } from '../../kernel/json.js';
import type { FlagResult } from '../engine/types.js';
import type { GeoProperties } from '../../geoip/geoip.js';
import type { StoredFlag } from '../../store/types.js';

/** One /decide or /flags request, read from its body (request.ts lists the fields). */
export interface FlagRequest {
  distinctId: string;
  /** Group type name → group key. */
  groups: Record<string, string>;
  /** Overrides of the stored person's properties. */
  personProperties: JsonObject;
  /** Group type name → overrides of that group's stored properties. */
  groupProperties: Record<string, JsonObject>;
  /** The previous anonymous id, sent right after identify (experience continuity). */
  anonDistinctId: string | null;
  deviceId: string | null;
  geoipDisable: boolean;
  disableFlags: boolean;
  /** Evaluate only these keys (`flag_keys_to_evaluate` / `flag_keys`); null = all. */
  flagKeys: string[] | null;
  /** GeoIP's answer for the client's address; null when unknown or not found. */
  location: GeoProperties | null;
}

export interface FlagEvaluation {
  /** Evaluated active flags, in stored order; failed ones carry `failed: true`. */
  results: { flag: StoredFlag; result: FlagResult }[];
  /** Some flag could not be computed: clients keep their previous value for it. */
  errors: boolean;
}
