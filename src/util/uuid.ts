/** UUID text ⇄ 16 raw bytes (compact keys in SQLite, 128-bit values in DuckDB). */
export const uuidToBytes = (uuid: string): Buffer => Buffer.from(uuid.replace(/-/g, ''), 'hex');

export const uuidToBigInt = (uuid: string): bigint => BigInt(`0x${uuid.replace(/-/g, '')}`);

export function bytesToUuid(bytes: Uint8Array): string {
  const hex = Buffer.from(bytes).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
