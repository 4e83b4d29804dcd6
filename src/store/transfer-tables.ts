/**
 * The metadata tables an export archive holds, engine-neutral: both metadata stores (SQLite and
 * PostgreSQL) name these tables and columns alike, and only spell the values differently
 * (booleans 0/1 or true/false, JSON as text or parsed, bigints as strings). An archive row
 * holds each column as the JSON value it means, whichever store wrote it.
 *
 * Listed parents first: importing in this order satisfies every foreign key. Left out, on
 * purpose: the ingestion's de-duplication (`event_uuids`, `ingest_state`: they describe the
 * old node's flush log) and the SQLite persons search index (rebuilt from `persons`).
 */
export type ColumnKind = 'text' | 'int' | 'bool' | 'json';

export interface TransferTable {
  name: string;
  /** Column → kind, in the archive's order. */
  columns: Record<string, ColumnKind>;
  /** Columns whose order makes the dump deterministic (the primary key). */
  key: string[];
  /** An integer id drawn from a sequence: the next one must follow the largest imported. */
  serial?: string;
}

const t = (name: string, key: string[], columns: Record<string, ColumnKind>, serial?: string): TransferTable => ({ name, key, columns, serial });

export const TRANSFER_TABLES: readonly TransferTable[] = [
  t('organizations', ['id'], { id: 'text', name: 'text', created_at: 'text' }),
  t('users', ['id'], {
    id: 'int', uuid: 'text', distinct_id: 'text', email: 'text', first_name: 'text', last_name: 'text',
    is_email_verified: 'bool', created_at: 'text', password_hash: 'text',
  }, 'id'),
  t('memberships', ['id'], { id: 'text', organization_id: 'text', user_id: 'int', level: 'int', joined_at: 'text', updated_at: 'text' }),
  t('organization_invites', ['id'], {
    id: 'text', organization_id: 'text', target_email: 'text', level: 'int', created_by: 'int', created_at: 'text', token_hash: 'text',
  }),
  t('projects', ['id'], {
    id: 'int', uuid: 'text', organization_id: 'text', name: 'text', api_token: 'text', timezone: 'text', anonymize_ips: 'bool',
    created_at: 'text', week_start_day: 'int', test_account_filters: 'json',
  }, 'id'),
  t('personal_api_keys', ['id'], {
    id: 'text', user_id: 'int', label: 'text', secure_value: 'text', mask_value: 'text', scopes: 'json', created_at: 'text', last_used_at: 'text',
  }),
  t('sessions', ['token_hash'], { token_hash: 'text', user_id: 'int', created_at: 'text', expires_at: 'text' }),
  // `id`: PostHog's integer person id (SQLite keeps it in person_ids, PostgreSQL in persons).
  t('persons', ['project_id', 'uuid'], {
    project_id: 'int', uuid: 'text', id: 'int', properties: 'json', is_identified: 'bool', created_at: 'text', version: 'int',
  }, 'id'),
  t('person_distinct_ids', ['project_id', 'distinct_id'], { project_id: 'int', distinct_id: 'text', person_uuid: 'text' }),
  t('group_types', ['project_id', 'group_type'], {
    project_id: 'int', group_type: 'text', group_type_index: 'int', name_singular: 'text', name_plural: 'text',
  }),
  t('groups', ['project_id', 'group_type_index', 'group_key'], {
    project_id: 'int', group_type_index: 'int', group_key: 'text', properties: 'json', created_at: 'text',
  }),
  t('property_definitions', ['id'], {
    id: 'text', project_id: 'int', name: 'text', type: 'int', group_type_index: 'int', property_type: 'text', is_numerical: 'bool',
    tags: 'json', description: 'text', created_at: 'text',
  }),
  t('event_definitions', ['id'], {
    id: 'text', project_id: 'int', name: 'text', tags: 'json', description: 'text', created_at: 'text', last_seen_at: 'text',
  }),
  t('event_properties', ['project_id', 'event', 'property'], { project_id: 'int', event: 'text', property: 'text' }),
  t('feature_flags', ['id'], {
    id: 'int', project_id: 'int', key: 'text', name: 'text', filters: 'json', active: 'bool', deleted: 'bool',
    ensure_experience_continuity: 'bool', version: 'int', created_by: 'int', created_at: 'text', updated_at: 'text',
  }, 'id'),
  t('flag_hash_key_overrides', ['project_id', 'person_uuid', 'feature_flag_key'], {
    project_id: 'int', person_uuid: 'text', feature_flag_key: 'text', hash_key: 'text',
  }),
  t('person_deletions', ['id'], {
    id: 'int', project_id: 'int', person_uuid: 'text', distinct_ids: 'json', delete_events: 'bool', after_flush_seq: 'int',
    requested_by: 'int', requested_at: 'text', finished_at: 'text', purged_at: 'text',
  }, 'id'),
  t('activity_log', ['id'], {
    id: 'int', project_id: 'int', scope: 'text', item_id: 'text', activity: 'text', user_id: 'int', detail: 'json', created_at: 'text',
  }, 'id'),
  t('insights', ['id'], {
    id: 'int', project_id: 'int', short_id: 'text', name: 'text', description: 'text', query: 'json', favorited: 'bool', tags: 'json',
    deleted: 'bool', created_by: 'int', created_at: 'text', last_modified_at: 'text', last_modified_by: 'int',
  }, 'id'),
  t('dashboards', ['id'], {
    id: 'int', project_id: 'int', name: 'text', description: 'text', pinned: 'bool', filters: 'json', tags: 'json', deleted: 'bool',
    created_by: 'int', created_at: 'text', last_modified_at: 'text',
  }, 'id'),
  t('dashboard_tiles', ['id'], { id: 'int', dashboard_id: 'int', insight_id: 'int', layouts: 'json', color: 'text', deleted: 'bool' }, 'id'),
  t('cohorts', ['id'], {
    id: 'int', project_id: 'int', name: 'text', description: 'text', filters: 'json', is_static: 'bool', deleted: 'bool', count: 'int',
    version: 'int', is_calculating: 'bool', last_calculation: 'text', errors_calculating: 'int', last_error: 'text', created_by: 'int',
    created_at: 'text', updated_at: 'text',
  }, 'id'),
  t('cohort_people', ['cohort_id', 'person_uuid'], { cohort_id: 'int', person_uuid: 'text', project_id: 'int' }),
  t('actions', ['id'], {
    id: 'int', project_id: 'int', name: 'text', description: 'text', tags: 'json', steps: 'json', deleted: 'bool', created_by: 'int',
    created_at: 'text', updated_at: 'text',
  }, 'id'),
];

export function transferTable(name: string): TransferTable {
  const table = TRANSFER_TABLES.find((candidate) => candidate.name === name);
  if (!table) throw new Error(`no table ${name} in the archive's list`);
  return table;
}

/** A stored value as the archive holds it (null stays null). */
export function neutralValue(kind: ColumnKind, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (kind) {
    case 'bool':
      return value === 1 || value === true || value === '1';
    case 'int':
      return Number(value);
    case 'json':
      return typeof value === 'string' ? JSON.parse(value) : value;
    case 'text':
      return String(value);
  }
}

/** A row of the store as the archive holds it. */
export function neutralRow(table: TransferTable, row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [column, kind] of Object.entries(table.columns)) out[column] = neutralValue(kind, row[column]);
  return out;
}

/**
 * One page of a table in key order, after the last row of the page before (keyset paging: each
 * page is a short query, so no cursor stays open across the caller's awaits). `placeholder`
 * spells the n-th parameter (1-based) in the engine's SQL.
 */
export function pageStatement(
  table: TransferTable,
  select: { columns: string; from: string; qualify?: (column: string) => string },
  after: Record<string, unknown> | null,
  limit: number,
  placeholder: (n: number) => string,
): { sql: string; params: unknown[] } {
  const qualify = select.qualify ?? ((column: string) => column);
  const keys = table.key.map(qualify);
  const params: unknown[] = [];
  let where = '';
  if (after) {
    for (const column of table.key) params.push(after[column]);
    where = ` WHERE (${keys.join(', ')}) > (${params.map((_, i) => placeholder(i + 1)).join(', ')})`;
  }
  params.push(limit);
  const sql = `SELECT ${select.columns} FROM ${select.from}${where} ORDER BY ${keys.join(', ')} LIMIT ${placeholder(params.length)}`;
  return { sql, params };
}
