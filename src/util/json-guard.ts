/**
 * Guards for parsed JSON from the outside world, shared by the capture decoder and the JSON
 * body parser of the Fastify instance. JSON.parse itself copes with any nesting, but
 * JSON.stringify and every recursive walk after it overflow the stack on deep values (a 500
 * where a 400 is due), and a lone surrogate (`"\ud800"`) is a JS string that cannot become
 * UTF-8: the uuid library throws on it mid-flush, failing every request of that group commit.
 */

/** serde_json's default recursion limit, which PostHog's capture service answers 400 past. */
export const MAX_JSON_DEPTH = 128;

export class JsonTooDeepError extends Error {
  constructor(readonly limit: number) {
    super(`JSON is nested more than ${limit} levels deep`);
    this.name = 'JsonTooDeepError';
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
const RAW_SURROGATE = /[\uD800-\uDFFF]/;

/** Lone surrogates → U+FFFD (String.prototype.toWellFormed, which lib ES2023 lacks). */
export const wellFormed = (text: string): string => (RAW_SURROGATE.test(text) ? text.replace(LONE_SURROGATE, '\uFFFD') : text);

/** Whether text that JSON.parse produced a value from can hold a surrogate in some string. */
export const mayHoldSurrogates = (jsonText: string): boolean => SURROGATE_ESCAPE.test(jsonText) || RAW_SURROGATE.test(jsonText);

/**
 * Throws JsonTooDeepError past `maxDepth` levels of arrays/objects; with `fixStrings`, also
 * replaces lone surrogates in every string and key, in place. Iterative: the input may be deep.
 */
export function guardJson<T>(value: T, options: { maxDepth?: number; fixStrings?: boolean } = {}): T {
  const maxDepth = options.maxDepth ?? MAX_JSON_DEPTH;
  const fix = options.fixStrings ?? false;
  if (typeof value === 'string') return (fix ? wellFormed(value) : value) as T;
  if (typeof value !== 'object' || value === null) return value;
  // Two parallel stacks: no tuple allocated per node on the ingestion hot path.
  const nodes: object[] = [value];
  const depths: number[] = [1];
  while (nodes.length > 0) {
    const node = nodes.pop()!;
    const depth = depths.pop()!;
    if (depth > maxDepth) throw new JsonTooDeepError(maxDepth);
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const item: unknown = node[i];
        if (typeof item === 'object' && item !== null) {
          nodes.push(item);
          depths.push(depth + 1);
        }
        else if (fix && typeof item === 'string') node[i] = wellFormed(item);
      }
      continue;
    }
    const record = node as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      let item = record[key];
      if (typeof item === 'object' && item !== null) {
        nodes.push(item);
        depths.push(depth + 1);
      }
      else if (fix && typeof item === 'string') {
        const fixed = wellFormed(item);
        if (fixed !== item) put(record, key, (item = fixed));
      }
      if (!fix) continue;
      const fixedKey = wellFormed(key);
      if (fixedKey !== key) {
        delete record[key];
        put(record, fixedKey, item);
      }
    }
  }
  return value;
}

// defineProperty, not assignment: JSON.parse makes `__proto__` an own key, and assigning to it
// would set the prototype instead.
const put = (record: Record<string, unknown>, key: string, value: unknown) =>
  Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
