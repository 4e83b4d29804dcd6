/**
 * The tables HogQL can read and their logical columns. Dialects map these names to their
 * physical schema. Columns marked `internal` are for statements Sightline builds itself; HogQL
 * text can never name them. Every table is scoped to one project by the dialect; the project
 * column is not a column here at all.
 */
import type { TableName } from './ir.js';
import type { HogQLType } from './types.js';

export interface ColumnSpec {
  type: HogQLType;
  /** A JSON object column whose keys are read with `column.key` (properties). */
  json?: boolean;
  internal?: boolean;
}

const groupColumns = Object.fromEntries([0, 1, 2, 3, 4].map((i) => [`$group_${i}`, { type: 'String' } as ColumnSpec]));

export const TABLES: Record<TableName, Record<string, ColumnSpec>> = {
  events: {
    uuid: { type: 'UUID' },
    event: { type: 'String' },
    properties: { type: 'String', json: true },
    timestamp: { type: 'DateTime' },
    distinct_id: { type: 'String' },
    elements_chain: { type: 'String' },
    created_at: { type: 'DateTime' },
    ...groupColumns,
    /** The person stored with the event at ingestion (the current one is `person_id`). */
    $stored_person_id: { type: 'UUID', internal: true },
    /** The ingestion flush that wrote the row (append-only stamps). */
    $flush_seq: { type: 'Integer', internal: true },
    /** The engine's own row address, for reading a page's wide columns last. */
    $row_key: { type: 'Integer', internal: true },
  },
  persons: {
    id: { type: 'UUID' },
    created_at: { type: 'DateTime' },
    properties: { type: 'String', json: true },
    is_identified: { type: 'Boolean' },
  },
  person_distinct_ids: {
    distinct_id: { type: 'String' },
    person_id: { type: 'UUID' },
  },
  /** Cohort membership (filters and breakdowns by cohort); Sightline's own statements only. */
  cohort_people: {
    cohort_id: { type: 'Integer', internal: true },
    person_id: { type: 'UUID', internal: true },
  },
  groups: {
    index: { type: 'Integer' },
    key: { type: 'String' },
    created_at: { type: 'DateTime' },
    properties: { type: 'String', json: true },
  },
};

export const TABLE_NAMES = Object.keys(TABLES) as TableName[];

export function isTableName(name: string): name is TableName {
  return Object.hasOwn(TABLES, name);
}

/** A column HogQL text may name directly (internal ones excluded). */
export function publicColumn(table: TableName, name: string): ColumnSpec | null {
  const spec = Object.hasOwn(TABLES[table], name) ? TABLES[table][name] : undefined;
  return spec && !spec.internal ? spec : null;
}
