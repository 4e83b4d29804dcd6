/**
 * The insights benchmark's data set, shared by its DuckDB and ClickHouse modes: both stores get
 * the same events (same formulas of the row number) so their figures sit side by side.
 */
import os from 'node:os';
import path from 'node:path';

export const EVENTS = Number(process.env.BENCH_INSIGHTS_EVENTS ?? 10_000_000);
/** duckdb (the embedded store, default) or chdb (ClickHouse 26.7 in the server's process). */
export const STORE = process.env.BENCH_INSIGHTS_STORE === 'chdb' ? 'chdb' : 'duckdb';
/**
 * The order of the events in DuckDB's file: `time` (default) as ingestion appends them, oldest
 * first, so each row group covers a short span and a date range skips the others (zone maps);
 * `scattered` in row-number order, every row group spanning all the days (the layout of data
 * sets made before 2026-11-29, and of an import of events in random order).
 */
export const LAYOUT = process.env.BENCH_INSIGHTS_LAYOUT === 'scattered' ? 'scattered' : 'time';
const folder = STORE === 'chdb' ? `chdb-${EVENTS}` : LAYOUT === 'time' ? `${EVENTS}-by-time` : `${EVENTS}`;
export const DIR = process.env.BENCH_INSIGHTS_DIR ?? path.join(os.tmpdir(), `sightline-insights-${folder}`);
export const KEYS = { projectKey: 'phc_insightsbench000000000000', personalKey: 'phx_insightsbench000000000000' };
export const PERSONS = 50_000;
export const CHUNK = 1_000_000;
export const DAYS = 90;
export const NAMES = [
  '$pageview', '$pageview', '$pageview', '$autocapture', '$pageleave', 'signed_up', 'checkout_started', 'purchase', 'video_played', 'search',
  ...Array.from({ length: 20 }, (_, i) => `feature_${i}`),
];

export interface DataSet {
  note: string;
  /** The data's "now": the newest event is just before it. */
  end: number;
}
