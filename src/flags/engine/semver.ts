/**
 * Version parsing and ordering for the `semver_*` operators, as PostHog's flag service does it:
 * a leading `v` is dropped, a missing minor/patch counts as 0 and leading zeros are ignored
 * (`3.08` is 3.8.0), and then the text must be a semantic version: exactly three numeric parts
 * (`1..2.3`, `1.2.3.` and `1.2.3.4` are not versions and match nothing), an optional
 * pre-release that orders before its release (`1.0.0-alpha < 1.0.0`), optional build metadata.
 * posthog-node's local evaluator is looser in these points; docs/flags.md lists the differences.
 */
export interface Semver {
  major: number;
  minor: number;
  patch: number;
  /** Dot-separated pre-release identifiers; empty for a release. */
  pre: readonly string[];
  build: readonly string[];
}

export interface SemverRange {
  lower: Semver;
  /** Exclusive. */
  upper: Semver;
  /** Wildcards never match a pre-release; tilde/caret only one of the lower bound's own version. */
  preReleaseOf: Semver | null;
}

const DIGITS = /^\d+$/;
const IDENTIFIER = /^[0-9A-Za-z-]+$/;

function dropLeadingZeros(part: string): string {
  if (!DIGITS.test(part)) return part;
  const trimmed = part.replace(/^0+/, '');
  return trimmed === '' ? '0' : trimmed;
}

function normalise(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? '';
  return (text.startsWith('v') ? text.slice(1) : text).trim();
}

function identifiers(text: string | undefined, numericMayLeadWithZero: boolean): string[] | null {
  if (text === undefined) return [];
  const parts = text.split('.');
  for (const part of parts) {
    if (!IDENTIFIER.test(part)) return null;
    if (!numericMayLeadWithZero && DIGITS.test(part) && part.length > 1 && part.startsWith('0')) return null;
  }
  return parts;
}

/** The version a property or filter value stands for, or null when it is not one. */
export function parseSemver(value: unknown): Semver | null {
  const text = normalise(value);
  const split = text.search(/[-+]/);
  const core = split === -1 ? text : text.slice(0, split);
  const suffix = split === -1 ? '' : text.slice(split);
  const parts = core.split('.').map(dropLeadingZeros);
  while (parts.length < 3) parts.push('0');
  if (parts.length !== 3 || !parts.every((part) => DIGITS.test(part))) return null;

  const plus = suffix.indexOf('+');
  const preText = suffix.startsWith('-') ? suffix.slice(1, plus === -1 ? undefined : plus) : undefined;
  const buildText = plus === -1 ? undefined : suffix.slice(plus + 1);
  const pre = identifiers(preText, false);
  const build = identifiers(buildText, true);
  if (!pre || !build) return null;
  const [major, minor, patch] = parts.map(Number);
  if (![major, minor, patch].every(Number.isSafeInteger)) return null;
  return { major, minor, patch, pre, build };
}

function compareIdentifiers(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const left = a[i];
    const right = b[i];
    if (left === right) continue;
    const leftNumeric = DIGITS.test(left);
    const rightNumeric = DIGITS.test(right);
    if (leftNumeric && rightNumeric) return Number(left) < Number(right) ? -1 : 1;
    if (leftNumeric !== rightNumeric) return leftNumeric ? -1 : 1;
    return left < right ? -1 : 1;
  }
  return Math.sign(a.length - b.length);
}

function compareCore(a: Semver, b: Semver): number {
  if (a.major !== b.major) return a.major < b.major ? -1 : 1;
  if (a.minor !== b.minor) return a.minor < b.minor ? -1 : 1;
  if (a.patch !== b.patch) return a.patch < b.patch ? -1 : 1;
  return 0;
}

/** Total order: core, then pre-release (a release comes after its pre-releases), then build. */
export function compareSemver(a: Semver, b: Semver): number {
  const core = compareCore(a, b);
  if (core !== 0) return core;
  if (a.pre.length === 0 || b.pre.length === 0) {
    if (a.pre.length !== b.pre.length) return a.pre.length === 0 ? 1 : -1;
  } else {
    const pre = compareIdentifiers(a.pre, b.pre);
    if (pre !== 0) return pre;
  }
  return compareIdentifiers(a.build, b.build);
}

export function inRange(version: Semver, range: SemverRange): boolean {
  if (version.pre.length > 0) {
    const own = range.preReleaseOf;
    if (!own || own.pre.length === 0 || compareCore(own, version) !== 0) return false;
  }
  return compareSemver(version, range.lower) >= 0 && compareSemver(version, range.upper) < 0;
}

function release(major: number, minor: number, patch: number): Semver {
  return { major, minor, patch, pre: [], build: [] };
}

/** `~1.2.3` → >=1.2.3 <1.3.0 */
export function tildeRange(value: unknown): SemverRange | null {
  const v = parseSemver(value);
  return v && { lower: v, upper: release(v.major, v.minor + 1, 0), preReleaseOf: v };
}

/** `^1.2.3` → <2.0.0; `^0.2.3` → <0.3.0; `^0.0.3` → <0.0.4 */
export function caretRange(value: unknown): SemverRange | null {
  const v = parseSemver(value);
  if (!v) return null;
  const upper =
    v.major > 0 ? release(v.major + 1, 0, 0) : v.minor > 0 ? release(0, v.minor + 1, 0) : release(0, 0, v.patch + 1);
  return { lower: v, upper, preReleaseOf: v };
}

/** `1.*` (or `1.x`, `1.*.*`) → >=1.0.0 <2.0.0; `1.2.*` → >=1.2.0 <1.3.0; `*` → any release */
export function wildcardRange(value: unknown): SemverRange | null {
  if (typeof value !== 'string') return null;
  const parts = normalise(value).split('.').map(dropLeadingZeros);
  const wild = (part: string) => part === '*' || part === 'x' || part === 'X';
  const fixed: number[] = [];
  let i = 0;
  for (; i < parts.length && !wild(parts[i]); i++) {
    if (!DIGITS.test(parts[i])) return null;
    fixed.push(Number(parts[i]));
  }
  // Everything after the first wildcard must be a wildcard too (`1.*.3` is not a range).
  if (i === parts.length || parts.length > 3 || !parts.slice(i).every(wild)) return null;
  if (fixed.length === 0) return { lower: release(0, 0, 0), upper: release(Number.MAX_SAFE_INTEGER, 0, 0), preReleaseOf: null };
  if (fixed.length === 1) return { lower: release(fixed[0], 0, 0), upper: release(fixed[0] + 1, 0, 0), preReleaseOf: null };
  return { lower: release(fixed[0], fixed[1], 0), upper: release(fixed[0], fixed[1] + 1, 0), preReleaseOf: null };
}
