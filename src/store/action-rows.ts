/** Row → action, shared by the metadata stores (steps and tags are JSON text in SQLite, `json` in PostgreSQL). */
import type { ActionStep, StoredAction } from './types.js';
import { jsonColumn, nullableNumber, toBool } from './rows.js';

type Row = Record<string, unknown>;

export const actionFromRow = (row: Row): StoredAction => ({
  id: row.id as number,
  project_id: row.project_id as number,
  name: row.name as string,
  description: row.description as string,
  tags: jsonColumn<string[]>(row.tags, []),
  steps: jsonColumn<ActionStep[]>(row.steps, []),
  deleted: toBool(row.deleted),
  created_by: nullableNumber(row.created_by),
  created_at: row.created_at as string,
  updated_at: row.updated_at as string,
});

/** The columns a create or a patch writes. */
export const ACTION_COLUMNS = ['name', 'description', 'tags', 'steps', 'deleted'] as const;
