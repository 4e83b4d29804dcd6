/** Rows as RFC 4180 CSV: fields with a quote, comma or line break are quoted, quotes doubled. */
const field = (value: unknown): string => {
  const text = value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
};

export const toCsv = (columns: string[], rows: unknown[][]): string => [columns, ...rows].map((row) => row.map(field).join(',')).join('\r\n') + '\r\n';
