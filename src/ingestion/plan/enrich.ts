/**
 * Step 2, enrich: GeoIP properties (and the person's $set/$set_once of them) from `$ip`, then
 * `$ip` removed where the project anonymises IPs. Every event is located, personless ones too
 * (anonymous posthog-js traffic is personless); the enricher itself skips their person $set.
 */
import type { JsonObject } from '../../kernel/json.js';

export type Enricher = (properties: JsonObject) => void;

export function enrich(properties: JsonObject, anonymizeIps: boolean, enricher: Enricher | undefined): void {
  if (enricher) enricher(properties);
  if (anonymizeIps) delete properties.$ip;
}
