/** Row → cohort, shared by the metadata stores (filters are JSON text in SQLite, `json` in PostgreSQL). */
import type { JsonObject } from '../kernel/json.js';
import type { StoredCohort } from './types.js';
import { jsonColumn, nullableNumber, toBool } from './rows.js';

type Row = Record<string, unknown>;

export const cohortFromRow = (row: Row): StoredCohort => ({
  id: row.id as number,
  project_id: row.project_id as number,
  name: row.name as string,
  description: row.description as string,
  filters: jsonColumn<JsonObject>(row.filters, {}),
  is_static: toBool(row.is_static),
  deleted: toBool(row.deleted),
  count: nullableNumber(row.count),
  version: row.version as number,
  is_calculating: toBool(row.is_calculating),
  last_calculation: (row.last_calculation as string | null) ?? null,
  errors_calculating: row.errors_calculating as number,
  last_error: (row.last_error as string | null) ?? null,
  created_by: nullableNumber(row.created_by),
  created_at: row.created_at as string,
  updated_at: row.updated_at as string,
});
