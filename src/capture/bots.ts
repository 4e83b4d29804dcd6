/**
 * Bot events (`SIGHTLINE_DROP_BOT_EVENTS`): told by what the event says of its client, never by
 * the request's User-Agent header. posthog-js sends from the browser, so the header is the
 * page's user agent and also in `$raw_user_agent`; server SDKs send with their own
 * (`posthog-node/…`), which isbot counts as a bot, as it does most HTTP client libraries.
 */
import type { JsonObject } from '../kernel/json.js';
import { isbot } from 'isbot';

const AGENT_KEYS = ['$raw_user_agent', '$user_agent'];

/**
 * posthog-js marks the events of a bot it was told to let through (`opt_out_useragent_filter`)
 * with `$browser_type: "bot"`; apps that capture from their servers pass the visitor's agent as
 * `$raw_user_agent` or `$user_agent`.
 */
export function isBotEvent(properties: JsonObject): boolean {
  if (properties.$browser_type === 'bot') return true;
  for (const key of AGENT_KEYS) {
    const agent = properties[key];
    if (typeof agent === 'string' && isbot(agent)) return true;
  }
  return false;
}
