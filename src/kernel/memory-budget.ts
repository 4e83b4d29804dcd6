/**
 * How a memory limit is split among the parts of the service that hold memory in proportion to
 * a setting (docs/configuration-memory.md). The rest (node itself, DuckDB's library and process,
 * the worker threads' isolates, the loaded code) is a fixed cost, measured on the compiled server.
 */

const MB = 2 ** 20;

/**
 * What the service costs before any setting matters: node, the loaded code and the main isolate
 * (~90 MB idle), and while DuckDB is open its process: libduckdb, a second node runtime and its
 * isolate (node's code pages are shared with the server, so a cgroup counts them once).
 */
export const FIXED_COST_MB = 144;
/**
 * Below this the fixed cost, DuckDB's smallest limit and the smallest bounds of the waiting
 * events no longer fit in what the limit leaves the process; the server refuses to start.
 */
export const MIN_MEMORY_LIMIT_MB = 320;
/**
 * Part of the limit left to the kernel: a cgroup's limit counts the page cache of the files the
 * process reads and writes (DuckDB's file, the flush log, the GeoIP files) and the pages of node's
 * and DuckDB's code. A 512 MB soak whose process used up to ~470 MB of it stalled for minutes
 * while the kernel reclaimed those pages and faulted them back in.
 */
const PAGE_CACHE_SHARE = 0.3;
/** The budget when no limit is known: sized for a small VM (raise it with SIGHTLINE_MEMORY_LIMIT_MB). */
export const DEFAULT_MEMORY_LIMIT_MB = 512;

/** Heap bytes an event takes while it waits for a flush (a ~3 KB browser event, parsed). */
const PENDING_EVENT_BYTES = 8 * 1024;
/** Encoded bytes an event takes in a flush record, for sizing flushes (a ~3 KB browser event after GeoIP). */
const RECORD_EVENT_BYTES = 4 * 1024;
/** A cached person with its properties. */
const CACHED_PERSON_BYTES = 2 * 1024;
/** A remembered GeoIP answer. */
const GEOIP_ANSWER_BYTES = 512;
/**
 * V8 sizes its heaps for the machine, not for the budget: without a cgroup limit on a large machine
 * the main thread's heap held up to ~120 MB of garbage under the ingest load before a full
 * collection (peak RSS 570-620 MB; 430-440 MB with growth held to 20 % past the live data).
 * Above this budget the memory is there and V8's own pacing saves the collections' CPU.
 */
const HELD_HEAP_GROWTH_UP_TO_MB = 2048;
const HELD_HEAP_GROWING_PERCENT = 20;
/** What a flag thread costs once started (isolate, SQLite connection, caches). */
const FLAG_THREAD_MB = 64;
/**
 * DuckDB's smallest limit. Folding a row group of WAL rows into the file (~8,192 browser events)
 * needs ~30 MB of its buffers besides what queries hold, and a checkpoint that cannot pin a block
 * invalidates the whole database until it is reopened: at 32 MB a 320 MB soak did that every
 * few seconds, and the reopens grew the process until it was killed.
 */
export const MIN_DUCKDB_MEMORY_LIMIT_MB = 64;

export interface MemoryPlan {
  /** The whole budget, MB. */
  limitMb: number;
  /** DuckDB's own ceiling, MB. */
  duckdbMemoryLimitMb: number;
  /** Shared memory kept for flush records (resident for good once used; larger bursts get memory of their own). */
  recordMemoryBytes: number;
  /** Bytes of acknowledged records the event store may lag behind before capture waits (503 past 5 s). */
  eventStoreMaxLagBytes: number;
  flushMaxEvents: number;
  maxPendingEvents: number;
  personCacheSize: number;
  geoipCacheEntries: number;
  /** Bytes of computed query results (insights) kept for repeat requests. */
  queryCacheBytes: number;
  flagThreads: number;
  /** Largest capture body after decompression. */
  decodedLimitBytes: number;
  /** How far V8 lets a heap grow past what survived its last full collection, in %; 0 leaves it to V8. */
  heapGrowingPercent: number;
}

const clamp = (value: number, min: number, max: number) => Math.min(max, Math.max(min, Math.floor(value)));

/**
 * The split of `limitMb` (at least MIN_MEMORY_LIMIT_MB). 30 % is left to the kernel's page cache;
 * of what the process may use, after its fixed cost:
 * 30 % for DuckDB, 15 % for flush records waiting for the event store (5 % of it kept for
 * reuse), 15 % for events waiting for a flush, 5 % for the person cache, 2 % each for GeoIP answers and query results;
 * the rest is headroom for requests being decoded, query results and the garbage collectors' slack. Each figure is capped at what a large machine
 * needs, which were the fixed defaults before they followed the memory.
 */
export function planMemory(limitMb: number, cores: number): MemoryPlan {
  const usableBytes = (limitMb * (1 - PAGE_CACHE_SHARE) - FIXED_COST_MB) * MB;
  const eventStoreMaxLagBytes = clamp(usableBytes * 0.15, 8 * MB, 1024 * MB);
  return {
    limitMb,
    duckdbMemoryLimitMb: clamp((usableBytes * 0.3) / MB, MIN_DUCKDB_MEMORY_LIMIT_MB, 16 * 1024),
    recordMemoryBytes: clamp(usableBytes * 0.05, 4 * MB, 64 * MB),
    eventStoreMaxLagBytes,
    // A flush is at most a quarter of what may wait for the event store, so a few fit while it writes.
    flushMaxEvents: clamp(eventStoreMaxLagBytes / 4 / RECORD_EVENT_BYTES, 500, 10_000),
    maxPendingEvents: clamp((usableBytes * 0.15) / PENDING_EVENT_BYTES, 1_000, 200_000),
    personCacheSize: clamp((usableBytes * 0.05) / CACHED_PERSON_BYTES, 1_000, 20_000),
    geoipCacheEntries: clamp((usableBytes * 0.02) / GEOIP_ANSWER_BYTES, 1_000, 50_000),
    queryCacheBytes: clamp(usableBytes * 0.02, 2 * MB, 64 * MB),
    // Threads start on the first flag request; each then holds its own isolate and caches.
    flagThreads: clamp(Math.min(4, cores, (usableBytes / MB - 128) / FLAG_THREAD_MB), 0, 4),
    decodedLimitBytes: clamp(usableBytes / 8, 20 * MB, 100 * MB),
    heapGrowingPercent: limitMb <= HELD_HEAP_GROWTH_UP_TO_MB ? HELD_HEAP_GROWING_PERCENT : 0,
  };
}
