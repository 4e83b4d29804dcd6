/** UUID text ⇄ 16 raw bytes (compact keys in SQLite, 128-bit values in DuckDB). */
export const uuidToBytes = (uuid: string): Buffer => Buffer.from(uuid.replace(/-/g, ''), 'hex');

export const uuidToBigInt = (uuid: string): bigint => BigInt(`0x${uuid.replace(/-/g, '')}`);

/** 32 hex digits → the 8-4-4-4-12 form. */
const hyphenate = (hex: string) => `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;

export const bytesToUuid = (bytes: Uint8Array): string => hyphenate(Buffer.from(bytes).toString('hex'));

const HYPHENATED = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Whether `text` is a uuid in the lower-case hyphenated form this service stores. */
export const isHyphenatedUuid = (text: string): boolean => HYPHENATED.test(text);
const SIMPLE = /^[0-9a-f]{32}$/;

/**
 * The canonical lower-case hyphenated form of the spellings the `uuid` crate (PostHog's capture)
 * accepts: hyphenated, 32 hex digits, `urn:uuid:…` and `{…}`, any case; null for anything else.
 */
export function canonicalUuid(value: string): string | null {
  let text = value.trim().toLowerCase();
  if (text.startsWith('urn:uuid:')) text = text.slice(9);
  if (text.startsWith('{') && text.endsWith('}')) text = text.slice(1, -1);
  if (SIMPLE.test(text)) text = hyphenate(text);
  return HYPHENATED.test(text) ? text : null;
}
