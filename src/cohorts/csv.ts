/**
 * A static cohort's CSV upload: one column of distinct ids, or a header row naming the column
 * to read (`distinct_id`, `email` or `person_id`). Quoted fields follow RFC 4180. Rows are
 * numbered from 1 as a spreadsheet shows them, so a report of bad rows can be found in the file.
 */

export type CsvKey = 'distinct_id' | 'email' | 'person_id';

export interface CsvRow {
  /** 1-based line of the file. */
  row: number;
  value: string;
}

export interface ParsedCsv {
  key: CsvKey;
  rows: CsvRow[];
  /** Rows whose value is missing. */
  empty: number[];
}

export const MAX_CSV_ROWS = 100_000;

const HEADERS: Record<string, CsvKey> = { distinct_id: 'distinct_id', distinct_ids: 'distinct_id', email: 'email', person_id: 'person_id', uuid: 'person_id' };

export class CsvError extends Error {}

/** Records of the text, each a list of fields. */
export function csvRecords(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  const endField = () => {
    record.push(field);
    field = '';
  };
  const endRecord = () => {
    endField();
    records.push(record);
    record = [];
  };
  while (i < text.length) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
        continue;
      }
      if (ch === '"') quoted = false;
      else field += ch;
      i++;
      continue;
    }
    if (ch === '"' && field === '') quoted = true;
    else if (ch === ',') endField();
    else if (ch === '\n') endRecord();
    else if (ch === '\r') {
      if (text[i + 1] !== '\n') endRecord();
    } else field += ch;
    i++;
  }
  if (quoted) throw new CsvError('the file ends inside a quoted field');
  if (field !== '' || record.length > 0) endRecord();
  return records;
}

export function parseCohortCsv(text: string): ParsedCsv {
  const records = csvRecords(text.replace(/^\uFEFF/, ''));
  if (records.length === 0) throw new CsvError('the file is empty');
  const header = records[0].map((cell) => cell.trim().toLowerCase());
  const column = header.findIndex((cell) => cell in HEADERS);
  const key: CsvKey = column >= 0 ? HEADERS[header[column]] : 'distinct_id';
  const from = column >= 0 ? 1 : 0;
  const at = Math.max(column, 0);
  if (records.length - from > MAX_CSV_ROWS) throw new CsvError(`the file has more than ${MAX_CSV_ROWS} rows`);
  const rows: CsvRow[] = [];
  const empty: number[] = [];
  for (let i = from; i < records.length; i++) {
    const record = records[i];
    // A blank line (a lone empty field) is skipped, as spreadsheets write them at the end.
    if (record.length === 1 && record[0].trim() === '') continue;
    const value = (record[at] ?? '').trim();
    if (value === '') empty.push(i + 1);
    else rows.push({ row: i + 1, value });
  }
  if (rows.length === 0 && empty.length === 0) throw new CsvError('the file has no rows');
  return { key, rows, empty };
}
