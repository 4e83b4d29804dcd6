/**
 * CSV exports (RFC 4180: CRLF line ends, fields with `"`, `,`, CR or LF quoted, quotes doubled),
 * produced chunk by chunk from a streamed query so that an export never sits in memory.
 *
 * Formula injection: a text cell starting with `=`, `+`, `-`, `@`, tab or CR is prefixed with
 * `'`, so a spreadsheet shows it instead of evaluating it (OWASP's advice). Numbers and booleans
 * are written as they are, so `-5` stays a number; only text is ever changed.
 *
 * Event rows flatten their properties into `properties.<key>` columns. The key set is decided by
 * the first chunk (the first 1,000 rows, newest first): their keys, sorted, at most 1,000. Keys
 * that only appear later, or beyond that cap, are kept in a last `properties` column as a JSON
 * object of just those keys, so no value is ever dropped.
 */
import { isoTimestamp, parseObject } from './rows.js';
import type { Row } from './run.js';

export const CSV_CHUNK_ROWS = 1_000;
const MAX_PROPERTY_COLUMNS = 1_000;
const EVENT_COLUMNS = ['id', 'event', 'distinct_id', 'timestamp', 'person_id', 'elements_chain'];

/** Rows in chunks, from a streamed query or already in hand. */
type Chunks<T> = AsyncIterable<T[]> | Iterable<T[]>;

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

function cell(value: unknown): string {
  switch (typeof value) {
    case 'undefined':
      return '';
    case 'number':
    case 'boolean':
      return String(value);
    case 'string':
      return quoted(FORMULA_START.test(value) ? `'${value}` : value);
    default:
      return value === null ? '' : quoted(JSON.stringify(value));
  }
}

const quoted = (text: string) => (NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text);

export const csvLine = (cells: unknown[]) => `${cells.map(cell).join(',')}\r\n`;

/** Plain rows: a header, then one line per row. */
export async function* tableCsv(header: string[], chunks: Chunks<unknown[]>): AsyncGenerator<string> {
  yield csvLine(header);
  for await (const rows of chunks) yield rows.map(csvLine).join('');
}

/** Stored events (rows of the list query plus `person_id`), properties flattened. */
export async function* eventsCsv(chunks: Chunks<Row>): AsyncGenerator<string> {
  let keys: string[] | null = null;
  let columns = new Set<string>();
  for await (const rows of chunks) {
    const properties = rows.map((row) => parseObject(row.properties));
    if (keys === null) {
      keys = firstChunkKeys(properties);
      columns = new Set(keys);
      yield header(keys);
    }
    let text = '';
    for (let i = 0; i < rows.length; i++) text += eventLine(rows[i], properties[i], keys, columns);
    yield text;
  }
  if (keys === null) yield header([]);
}

function firstChunkKeys(objects: Record<string, unknown>[]): string[] {
  const keys = new Set<string>();
  for (const properties of objects) for (const key in properties) keys.add(key);
  return [...keys].sort().slice(0, MAX_PROPERTY_COLUMNS);
}

const header = (keys: string[]) => csvLine([...EVENT_COLUMNS, ...keys.map((key) => `properties.${key}`), 'properties']);

/** Written out cell by cell: an export builds millions of cells, so no arrays in between. */
function eventLine(row: Row, properties: Record<string, unknown>, keys: string[], columns: Set<string>): string {
  let line = `${cell(row.id)},${cell(row.event)},${cell(row.distinct_id)},${isoTimestamp(row.ts as string)},${cell(row.person_id)},${cell(row.elements_chain)}`;
  for (const key of keys) line += `,${cell(properties[key])}`;
  let rest: Record<string, unknown> | null = null;
  for (const key in properties) if (!columns.has(key)) (rest ??= {})[key] = properties[key];
  return `${line},${cell(rest)}\r\n`;
}

/** Pulls the first item before anything is sent, so that a failing query is still a clean 4xx/5xx. */
export async function primed<T>(source: AsyncIterable<T>): Promise<AsyncIterable<T>> {
  const iterator = source[Symbol.asyncIterator]();
  const first = await iterator.next();
  return {
    async *[Symbol.asyncIterator]() {
      try {
        if (first.done) return;
        yield first.value;
        for (let item = await iterator.next(); !item.done; item = await iterator.next()) yield item.value;
      } finally {
        // Closes the store's stream (and its connection) when the client goes away early.
        await iterator.return?.();
      }
    },
  };
}
