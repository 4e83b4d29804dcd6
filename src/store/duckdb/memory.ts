/**
 * DuckDB's memory limit, and what follows from it. Kept apart from event-store.ts so that the
 * main thread can use it without loading DuckDB.
 */
export const DEFAULT_MEMORY_LIMIT = '512MB';

/**
 * A read page's share of DuckDB's memory limit (events/walk.ts): sorting a page takes a few
 * times its bytes, and the event store's writes and the other queries need the rest.
 */
export function readPageBytes(memoryLimit: string | undefined): number {
  const match = /^(\d+(?:\.\d+)?)\s*(K|M|G)i?B$/i.exec((memoryLimit ?? DEFAULT_MEMORY_LIMIT).trim());
  const units = { K: 2 ** 10, M: 2 ** 20, G: 2 ** 30 } as const;
  const limit = match ? Number(match[1]) * units[match[2].toUpperCase() as keyof typeof units] : 256 * 2 ** 20; // config.ts admits only sizes the pattern reads
  return Math.max(256 * 1024, Math.floor(limit / 16));
}
