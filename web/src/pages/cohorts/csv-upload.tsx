/** A static cohort's CSV: chosen as a file or pasted, sent as text; a refusal listed row by row. */
import type { ApiError } from '../../api/client';
import { csvRefusal } from './csv-errors';

export function CsvUpload({ csv, adding, onChange }: { csv: string; adding: boolean; onChange: (csv: string) => void }) {
  return (
    <fieldset class="card">
      <legend>{adding ? 'Add persons from a CSV file' : 'Persons from a CSV file'}</legend>
      <p class="hint">
        One distinct ID per line, or a header row naming the column to read: <code>distinct_id</code>, <code>email</code> or <code>person_id</code>. Every row must name a person of this
        project; otherwise nothing is added and the rows at fault are listed.
      </p>
      <label class="field">
        <span>CSV file</span>
        <input
          type="file"
          accept=".csv,text/csv,text/plain"
          onChange={(e) => {
            const file = (e.target as HTMLInputElement).files?.[0];
            if (file) void file.text().then(onChange);
          }}
        />
      </label>
      <label class="field">
        <span>CSV text</span>
        <textarea class="mono" rows={6} value={csv} onInput={(e) => onChange((e.target as HTMLTextAreaElement).value)} />
      </label>
    </fieldset>
  );
}

export function CsvUploadError({ error }: { error: ApiError }) {
  const refusal = csvRefusal(error.detail);
  return (
    <div class="notice notice-error csv-refusal" role="alert">
      <p>{refusal.summary}</p>
      {refusal.rows.length > 0 && (
        <ul>
          {refusal.rows.map((row) => (
            <li key={row}>{row}</li>
          ))}
        </ul>
      )}
    </div>
  );
}
