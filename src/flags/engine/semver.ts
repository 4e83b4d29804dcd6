/**
 * Version parsing for the `semver_*` operators, following posthog-node's local evaluator:
 * a leading `v` and any pre-release/build suffix are ignored, missing minor/patch count as 0
 * and only the first three components are read. Where the SDK gives up (leading zeros) we
 * follow PostHog's server, which reads `3.08` as 3.8.0.
 */
export type SemverTuple = readonly [number, number, number];

export interface SemverRange {
  lower: SemverTuple;
  /** Exclusive. */
  upper: SemverTuple;
}

const DIGITS = /^\d+$/;

function stripPrefix(value: unknown): string {
  return String(value).trim().replace(/^[vV]/, '');
}

export function parseSemver(value: unknown): SemverTuple | null {
  const base = stripPrefix(value).split('-')[0].split('+')[0];
  if (!base || base.startsWith('.')) return null;
  const parts = base.split('.');
  const out: [number, number, number] = [0, 0, 0];
  for (let i = 0; i < 3; i++) {
    const part = parts[i];
    if (part === undefined || part === '') continue;
    if (!DIGITS.test(part)) return null;
    out[i] = parseInt(part, 10);
  }
  return out;
}

export function compareSemver(a: SemverTuple, b: SemverTuple): number {
  for (let i = 0; i < 3; i++) {
    if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return 0;
}

export function inRange(version: SemverTuple, range: SemverRange): boolean {
  return compareSemver(version, range.lower) >= 0 && compareSemver(version, range.upper) < 0;
}

/** `~1.2.3` → >=1.2.3 <1.3.0 */
export function tildeRange(value: unknown): SemverRange | null {
  const v = parseSemver(value);
  return v && { lower: v, upper: [v[0], v[1] + 1, 0] };
}

/** `^1.2.3` → <2.0.0; `^0.2.3` → <0.3.0; `^0.0.3` → <0.0.4 */
export function caretRange(value: unknown): SemverRange | null {
  const v = parseSemver(value);
  if (!v) return null;
  if (v[0] > 0) return { lower: v, upper: [v[0] + 1, 0, 0] };
  if (v[1] > 0) return { lower: v, upper: [0, v[1] + 1, 0] };
  return { lower: v, upper: [0, 0, v[2] + 1] };
}

/** `1.*` → >=1.0.0 <2.0.0; `1.2.*` → >=1.2.0 <1.3.0 */
export function wildcardRange(value: unknown): SemverRange | null {
  const cleaned = stripPrefix(value).replace(/(\.\*)+$/, '').replace(/\*$/, '');
  if (!cleaned) return null;
  const parts = cleaned.split('.');
  if (!DIGITS.test(parts[0])) return null;
  const major = parseInt(parts[0], 10);
  if (parts.length === 1) return { lower: [major, 0, 0], upper: [major + 1, 0, 0] };
  if (!DIGITS.test(parts[1])) return null;
  const minor = parseInt(parts[1], 10);
  return { lower: [major, minor, 0], upper: [major, minor + 1, 0] };
}
