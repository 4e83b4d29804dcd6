/**
 * Property type inference for property definitions: the first value seen for a key decides its
 * type, by PostHog's rules (`rust/property-defs-rs/src/types.rs` in github.com/PostHog/posthog).
 */

export type PropertyType = 'DateTime' | 'String' | 'Numeric' | 'Boolean';

// Key fragments that make a numeric or date-looking value a DateTime.
const DATE_KEY_WORDS = ['time', 'timestamp', 'date', '_at', '-at', 'createdat', 'updatedat'];

// Epoch numbers newer than this many seconds ago count as dates on date-ish keys.
const SIX_MONTHS_SECONDS = 15_768_000;

const DATE_PREFIX = /^((\d{4}[/-][0-2]\d[/-][0-3]\d)|([0-2]\d[/-][0-3]\d[/-]\d{4}))([ T][0-2]\d:[0-6]\d:[0-6]\d.*)?$/;

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

// `[Day, ]D Mon YYYY HH:MM[:SS] zone`, zone numeric or one of the obsolete names.
const RFC2822 =
  /^(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun),\s*)?\d{1,2}\s+(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\s+\d{2,4}\s+\d{2}:\d{2}(?::\d{2})?\s+(?:[+-]\d{4}|UT|GMT|[ECMP][SD]T|[A-IK-Za-ik-z])$/;

export function isLikelyDateString(text: string): boolean {
  if (RFC3339.test(text)) return !Number.isNaN(Date.parse(text.replace(' ', 'T')));
  if (RFC2822.test(text)) return !Number.isNaN(Date.parse(text));
  return DATE_PREFIX.test(text);
}

function isLikelyEpochSeconds(value: number, now: Date): boolean {
  // Only non-negative integers qualify (floats and negatives never did upstream).
  if (!Number.isSafeInteger(value) || value < 0) return false;
  return value >= Math.floor(now.getTime() / 1000) - SIX_MONTHS_SECONDS;
}

export function inferPropertyType(key: string, value: unknown, now: Date): PropertyType | null {
  const name = key.toLowerCase();
  // Flag values and campaign params flip between types (bool vs variant, numeric-looking ids),
  // so their type is pinned to String rather than decided by the first value.
  if (name.startsWith('utm_') || name.startsWith('$feature/')) return 'String';
  if (name === '$feature_flag_response' || name.startsWith('$survey_response')) return 'String';

  if (DATE_KEY_WORDS.some((word) => name.includes(word))) {
    if (typeof value === 'string' && isLikelyDateString(value)) return 'DateTime';
    if (typeof value === 'number' && isLikelyEpochSeconds(value, now)) return 'DateTime';
  }

  switch (typeof value) {
    case 'string': {
      const text = value.trim();
      if (text === 'true' || text === 'false' || text === 'TRUE' || text === 'FALSE') return 'Boolean';
      return isLikelyDateString(text) ? 'DateTime' : 'String';
    }
    case 'number':
      return Number.isFinite(value) ? 'Numeric' : null;
    case 'boolean':
      return 'Boolean';
    default:
      return null;
  }
}
