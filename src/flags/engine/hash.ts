import { hash } from 'node:crypto';

// 2^60 − 1. The value and its float64 rounding are part of the SDK contract: changing
// either reassigns users to different rollout buckets and variants.
const LONG_SCALE = 0xfffffffffffffff;

/**
 * sha1(input) → its first 15 hex digits as an integer → a float in [0, 1), exactly as the SDKs
 * compute it (`parseInt(hex.slice(0, 15), 16) / LONG_SCALE`).
 */
export function hashToUnit(input: string): number {
  // One-shot hashing is about twice as fast as createHash() for inputs this small, and reading
  // the digest's bytes from a 'binary' (latin1) string a third faster than hex text and parseInt.
  const digest = hash('sha1', input, 'binary');
  // The first 60 bits as 32 + 28: `high * 2^28` is exact, so the sum is rounded once, to
  // nearest even, as parseInt rounds.
  const high =
    ((digest.charCodeAt(0) << 24) | (digest.charCodeAt(1) << 16) | (digest.charCodeAt(2) << 8) | digest.charCodeAt(3)) >>> 0;
  const low = (digest.charCodeAt(4) << 20) | (digest.charCodeAt(5) << 12) | (digest.charCodeAt(6) << 4) | (digest.charCodeAt(7) >> 4);
  return (high * 0x10000000 + low) / LONG_SCALE;
}

/** Rollout bucket of an identifier for a flag; `salt` is `"variant"` for variant choice. */
export function flagHash(flagKey: string, bucketingValue: string, salt = ''): number {
  return hashToUnit(`${flagKey}.${bucketingValue}${salt}`);
}

export function variantHash(flagKey: string, bucketingValue: string): number {
  return flagHash(flagKey, bucketingValue, 'variant');
}

/** Holdouts hash without the flag key, so one person is held out of every experiment alike. */
export function holdoutHash(bucketingValue: string): number {
  return hashToUnit(`holdout-${bucketingValue}`);
}
