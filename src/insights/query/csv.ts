/**
 * A query's results as CSV, for spreadsheets: what a reader expects of each result shape.
 * Tables (HogQL, events, actors) keep their columns; series (trends, stickiness, lifecycle) are a
 * row per series with a column per bucket; retention a row per cohort with a column per period;
 * anything else a row per result with a column per scalar field (nested values as JSON). Cells
 * go through the events export's writer (events/csv.ts), which also defuses spreadsheet formulas.
 */
import { csvLine } from '../../events/csv.js';

type Json = Record<string, unknown>;

export function resultCsv(body: Json): string {
  const { header, rows } = table(body);
  return [csvLine(header), ...rows.map(csvLine)].join('');
}

function table(body: Json): { header: string[]; rows: unknown[][] } {
  const results = Array.isArray(body.results) ? (body.results as unknown[]) : [];
  if (Array.isArray(body.columns) && results.every(Array.isArray)) return { header: body.columns.map(String), rows: results as unknown[][] };
  // Funnels with breakdowns answer a list of step lists: one table of every step.
  const flat = results.every(Array.isArray) ? (results as unknown[][]).flat() : results;
  const objects = flat.filter((r): r is Json => r !== null && typeof r === 'object' && !Array.isArray(r));
  if (objects.length > 0 && objects.every((r) => Array.isArray(r.data))) return series(objects);
  if (objects.length > 0 && objects.every((r) => Array.isArray(r.values))) return cohorts(objects);
  const keys = [...new Set(objects.flatMap((r) => Object.keys(r).filter((k) => !isNested(r[k]))))];
  if (keys.length === 0) return { header: ['value'], rows: flat.map((r) => [r]) };
  return { header: keys, rows: objects.map((r) => keys.map((k) => r[k])) };
}

/** A row per series: its label (and breakdown), then a value per bucket. */
function series(results: Json[]): { header: string[]; rows: unknown[][] } {
  const longest = results.reduce((a, b) => ((b.data as unknown[]).length > (a.data as unknown[]).length ? b : a));
  const buckets = ((longest.labels ?? longest.days ?? (longest.data as unknown[]).map((_v, i) => String(i))) as unknown[]).map(String);
  const withBreakdown = results.some((r) => r.breakdown_value !== undefined);
  const header = ['series', ...(withBreakdown ? ['breakdown_value'] : []), ...buckets];
  const rows = results.map((r) => [r.label ?? (r.action as Json | undefined)?.name ?? '', ...(withBreakdown ? [r.breakdown_value] : []), ...(r.data as unknown[])]);
  return { header, rows };
}

/** Retention: a row per cohort, a column per period's count. */
function cohorts(results: Json[]): { header: string[]; rows: unknown[][] } {
  const periods = Math.max(...results.map((r) => (r.values as unknown[]).length));
  const header = ['cohort', ...Array.from({ length: periods }, (_v, i) => `period ${i}`)];
  const rows = results.map((r) => [r.label ?? r.date ?? '', ...(r.values as unknown[]).map((v) => (v !== null && typeof v === 'object' ? (v as Json).count : v))]);
  return { header, rows };
}

const isNested = (value: unknown) => value !== null && typeof value === 'object';
