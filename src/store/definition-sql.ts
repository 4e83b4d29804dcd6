/** SQL pieces the metadata stores' definition lists share (both speak LIKE with a backslash escape). */

/** Plumbing of every event rather than user data: never listed for type=event. */
export const HIDDEN_EVENT_PROPERTY_NAMES = [
  'distinct_id',
  '$set',
  '$set_once',
  '$initial_referrer',
  '$initial_referring_domain',
  '$groups',
  '$group_type',
  '$group_key',
  '$group_set',
  '$group_0',
  '$group_1',
  '$group_2',
  '$group_3',
  '$group_4',
];

/** `text` as a LIKE pattern that matches only itself: wildcards and the escape escaped, for `LIKE ? ESCAPE '\'`. */
export const likeExact = (text: string): string => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** `%word%` with LIKE's wildcards escaped, for `LIKE ? ESCAPE '\'`. */
export const likeContains = (word: string): string => `%${likeExact(word)}%`;
