/**
 * The cohorts API refuses a CSV upload with one sentence listing its bad rows
 * (`3 row(s) name no person (by email); nothing was added. row 2 ("x"): no person has this email; …`).
 * The page shows the sentence's start and each row on a line of its own.
 */
export interface CsvRefusal {
  summary: string;
  rows: string[];
}

const ROW = /row \d+(?: \("(?:[^"\\]|\\.)*"\))?: [^;]*/g;

export function csvRefusal(detail: string): CsvRefusal {
  const rows = (detail.match(ROW) ?? []).map((row) => row.replace(/\.$/, ''));
  if (rows.length === 0) return { summary: detail, rows: [] };
  const summary = detail.slice(0, detail.indexOf(rows[0]!)).trim();
  const more = /and (\d+) more\.?$/.exec(detail);
  return { summary, rows: more ? [...rows, `and ${more[1]} more rows`] : rows };
}
