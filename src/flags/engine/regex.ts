/**
 * Compiles `regex` / `not_regex` patterns once. PostHog's server is Rust, where a leading
 * inline flag group such as `(?i)` is the usual way to ask for case-insensitivity; JS has
 * no such syntax, so a leading group of i/m/s flags becomes RegExp flags.
 */
const MAX_CACHED = 1000;
const cache = new Map<string, RegExp | null>();

function compile(pattern: string): RegExp | null {
  const inline = /^\(\?([ims]+)\)/.exec(pattern);
  const flags = inline ? [...new Set(inline[1])].join('') : '';
  const source = inline ? pattern.slice(inline[0].length) : pattern;
  try {
    return new RegExp(source, flags);
  } catch {
    return null;
  }
}

/** The compiled pattern, or null when it is not a valid regular expression. */
export function compileFlagRegex(pattern: string): RegExp | null {
  const cached = cache.get(pattern);
  if (cached !== undefined) return cached;
  const compiled = compile(pattern);
  // Patterns come from stored flags, so the set is small; a full reset keeps it bounded.
  if (cache.size >= MAX_CACHED) cache.clear();
  cache.set(pattern, compiled);
  return compiled;
}
