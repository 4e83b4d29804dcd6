/** HogQL that the printers must read from the materialized columns, or not (both printers' tests). */

/** Reads `$browser`, `$os` and `$session_id` in select, where and group by. */
export const HOT_KEYS_STATEMENT = "select properties.$browser as b, count() from events where properties.$os = 'Mac OS X' and $session_id != '' group by b";

/** Property filters of the events API and insights on `$browser`, `$current_url` and `$os`. */
export const HOT_KEY_FILTERS = [
  { type: 'event', key: '$browser', operator: 'exact', value: ['Chrome', 'Safari'] },
  { type: 'event', key: '$current_url', operator: 'icontains', value: 'pricing' },
  { type: 'event', key: '$os', operator: 'is_set' },
];
export const HOT_KEY_FILTER_COLUMNS = ['mat_$browser', 'mat_$current_url', 'mat_$os'];

/** Nested paths, other keys, person properties and JSON functions: these keep the JSON path. */
export const JSON_PATH_STATEMENTS = [
  'select properties.$browser.version from events',
  'select properties.browser from events',
  'select person.properties.$browser from events',
  "select JSONExtractString(properties, '$browser') from events",
];
