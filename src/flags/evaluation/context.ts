/**
 * The evaluation context of one request: stored person and group properties, overridden key
 * by key by what the request sent (https://posthog.com/docs/feature-flags/property-overrides),
 * plus GeoIP and the ids SDKs add.
 */
import type { JsonObject } from '../../kernel/json.js';
import type { EvaluationContext } from '../engine/types.js';
import type { FlagEvaluationInputs } from '../../store/types.js';
import type { FlagRequest } from './types.js';

/** The GeoIP properties flags see (PostHog adds these seven, not coordinates). */
const FLAG_GEO_KEYS = [
  '$geoip_city_name',
  '$geoip_country_name',
  '$geoip_country_code',
  '$geoip_continent_name',
  '$geoip_continent_code',
  '$geoip_postal_code',
  '$geoip_time_zone',
] as const;

export function geoProperties(request: FlagRequest): JsonObject {
  const found = request.location as JsonObject | null;
  const properties: JsonObject = {};
  if (request.geoipDisable || !found) return properties;
  for (const key of FLAG_GEO_KEYS) if (found[key] !== undefined) properties[key] = found[key];
  return properties;
}

/** `inputs` is null when the store could not be read: the request's own properties are all there is. */
export function buildContext(request: FlagRequest, inputs: FlagEvaluationInputs | null): EvaluationContext {
  // Like posthog-node: `distinct_id` first so a caller's explicit value wins; GeoIP before the
  // request's properties for the same reason.
  const personProperties = {
    ...inputs?.personProperties,
    distinct_id: request.distinctId,
    ...geoProperties(request),
    ...request.personProperties,
  };
  const groupProperties: Record<string, JsonObject> = {};
  for (const [name, key] of Object.entries(request.groups)) {
    groupProperties[name] = { ...inputs?.groupProperties[name], ...request.groupProperties[name], $group_key: key };
  }
  return {
    distinctId: request.distinctId,
    groups: request.groups,
    personProperties,
    groupProperties,
    groupTypeMapping: inputs?.groupTypeMapping ?? {},
    now: new Date(),
    hashKeyOverrides: inputs?.hashKeyOverrides,
    deviceId: request.deviceId,
  };
}
