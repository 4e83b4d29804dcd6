/**
 * Property and event definitions as the management API reads and edits them (docs/api.md).
 * Every user value is a bound parameter; lists travel as one JSON text through json_each, so
 * the SQL text depends only on which filters are present and its statement can be reused.
 */
import type {
  DefinitionStore,
  DefinitionUpdate,
  EventDefinition,
  EventDefinitionQuery,
  Page,
  PageOf,
  PropertyDefinition,
  PropertyDefinitionPatch,
  PropertyDefinitionQuery,
  PropertyValueType,
} from '../types.js';
import { parseJson, toBool, type Sqlite, type SqliteStatement } from './database.js';
import { HIDDEN_EVENT_PROPERTY_NAMES } from '../definition-sql.js';

type Row = Record<string, unknown>;

const MAX_STATEMENTS = 256;

export interface SqlText {
  sql: string;
  params: unknown[];
}

/** Constants, so they are written into the SQL (a literal list is cheaper per row than json_each). */
const HIDDEN_EVENT_PROPERTIES = HIDDEN_EVENT_PROPERTY_NAMES.map((name) => `'${name}'`).join(', ');

/**
 * The column folded to lower case in every script. `fold_case` (database.ts) is a JavaScript call
 * per row (~1.4 µs), so only text beyond ASCII takes it: ASCII text (as many bytes as characters)
 * folds the same in SQLite's own lower(), 4× cheaper.
 */
const folded = (column: string) => `CASE WHEN length(${column}) = octet_length(${column}) THEN lower(${column}) ELSE fold_case(${column}) END`;

/** Every word must occur in the column, ignoring case in every script. */
function searchClauses(column: string, words: string[]): SqlText {
  return { sql: words.map(() => `instr(${folded(column)}, ?) > 0`).join(' AND '), params: words.map((word) => word.toLowerCase()) };
}

/** Not correlated: SQLite builds the set of names seen with the events once per query. */
const SEEN_ON_EVENTS =
  'pd.name IN (SELECT ep.property FROM event_properties ep WHERE ep.project_id = ? AND ep.event IN (SELECT value FROM json_each(?)))';

/** The page query and the count query of a property definition list; exported for the benchmark. */
export function propertyListSql(q: PropertyDefinitionQuery): { page: SqlText; count: SqlText } {
  const where = ['pd.project_id = ?', 'pd.type = ?', 'pd.group_type_index = ?'];
  const params: unknown[] = [q.projectId, q.type, q.groupTypeIndex ?? -1];
  const add = (sql: string, ...values: unknown[]) => {
    where.push(sql);
    params.push(...values);
  };
  if (q.searchWords.length > 0) {
    const search = searchClauses('pd.name', q.searchWords);
    add(search.sql, ...search.params);
  }
  if (q.names !== null) add('pd.name IN (SELECT value FROM json_each(?))', JSON.stringify(q.names));
  if (q.excludedNames.length > 0) add('pd.name NOT IN (SELECT value FROM json_each(?))', JSON.stringify(q.excludedNames));
  if (q.type === 1) {
    add(`pd.name NOT IN (${HIDDEN_EVENT_PROPERTIES})`);
    add("pd.name NOT LIKE '$session\\_entry\\_%' ESCAPE '\\'");
  }
  if (q.isFeatureFlag !== null) add(q.isFeatureFlag ? "pd.name LIKE '$feature/%'" : "pd.name NOT LIKE '$feature/%'");
  if (q.isNumerical === true) add("pd.is_numerical = 1 AND pd.name NOT IN ('distinct_id', 'timestamp')");
  if (q.isNumerical === false) add('pd.is_numerical = 0');
  const seenParams = q.eventNames === null ? null : [q.projectId, JSON.stringify(q.eventNames)];
  if (seenParams !== null && q.onlySeenWithEvents) add(SEEN_ON_EVENTS, ...seenParams);

  const whereSql = where.join(' AND ');
  const seen = seenParams === null ? 'NULL' : SEEN_ON_EVENTS;
  // Seen-on-events first when asked, then by name: a total order, so pages never overlap.
  const order = seenParams === null ? 'pd.name' : 'seen DESC, pd.name';
  return {
    page: {
      sql: `SELECT pd.*, ${seen} AS seen FROM property_definitions pd WHERE ${whereSql} ORDER BY ${order} LIMIT ? OFFSET ?`,
      params: [...(seenParams ?? []), ...params, q.limit, q.offset],
    },
    count: { sql: `SELECT count(*) AS n FROM property_definitions pd WHERE ${whereSql}`, params },
  };
}

const propertyFromRow = (row: Row): PropertyDefinition => ({
  id: row.id as string,
  project_id: row.project_id as number,
  name: row.name as string,
  type: row.type as 1 | 2 | 3,
  group_type_index: row.group_type_index === -1 ? null : (row.group_type_index as number),
  property_type: (row.property_type as PropertyDefinition['property_type']) ?? null,
  is_numerical: toBool(row.is_numerical),
  tags: parseJson<string[]>(row.tags, []),
  is_seen_on_filtered_events: row.seen === undefined || row.seen === null ? null : toBool(row.seen),
});

const eventFromRow = (row: Row): EventDefinition => ({
  id: row.id as string,
  project_id: row.project_id as number,
  name: row.name as string,
  description: (row.description as string | null) ?? null,
  tags: parseJson<string[]>(row.tags, []),
  created_at: row.created_at as string,
  last_seen_at: row.last_seen_at as string,
});

export class SqliteDefinitionStore implements DefinitionStore {
  /** Prepared statements by SQL text (filters present × number of search words), bounded. */
  private readonly statements = new Map<string, SqliteStatement>();

  constructor(private readonly db: Sqlite) {}

  private statement(sql: string): SqliteStatement {
    let statement = this.statements.get(sql);
    if (!statement) {
      if (this.statements.size >= MAX_STATEMENTS) this.statements.clear();
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  private page<T>(query: { page: SqlText; count: SqlText }, page: Page, map: (row: Row) => T): PageOf<T> {
    const rows = this.statement(query.page.sql).all(...query.page.params) as Row[];
    // A page that is not full and not past the end already tells the total: skip the count scan.
    const known = rows.length < page.limit && (rows.length > 0 || page.offset === 0);
    const count = known ? page.offset + rows.length : (this.statement(query.count.sql).get(...query.count.params) as { n: number }).n;
    return { count, results: rows.map(map) };
  }

  async listProperties(query: PropertyDefinitionQuery): Promise<PageOf<PropertyDefinition>> {
    return this.page(propertyListSql(query), query, propertyFromRow);
  }

  async getProperty(projectId: number, id: string): Promise<PropertyDefinition | null> {
    const row = this.statement('SELECT * FROM property_definitions WHERE project_id = ? AND id = ?').get(projectId, id) as Row | undefined;
    return row ? propertyFromRow(row) : null;
  }

  async updateProperty(projectId: number, id: string, patch: PropertyDefinitionPatch): Promise<DefinitionUpdate<PropertyDefinition>> {
    return this.db.transaction((): DefinitionUpdate<PropertyDefinition> => {
      const row = this.statement('SELECT * FROM property_definitions WHERE project_id = ? AND id = ?').get(projectId, id) as Row | undefined;
      if (!row) return 'not_found';
      const current = propertyFromRow(row);
      const name = patch.name ?? current.name;
      if (name !== current.name) {
        const taken = this.statement(
          'SELECT 1 FROM property_definitions WHERE project_id = ? AND type = ? AND group_type_index = ? AND name = ? AND id <> ?',
        ).get(projectId, current.type, current.group_type_index ?? -1, name, id);
        if (taken) return 'name_taken';
      }
      const propertyType = patch.property_type ?? current.property_type;
      // A new value type decides is_numerical unless the caller set it explicitly.
      const isNumerical = patch.is_numerical ?? (patch.property_type ? patch.property_type === 'Numeric' : current.is_numerical);
      if (propertyType !== null && isNumerical !== (propertyType === 'Numeric')) return 'inconsistent_type';
      this.statement('UPDATE property_definitions SET name = ?, property_type = ?, is_numerical = ?, tags = ? WHERE id = ?').run(
        name,
        propertyType,
        isNumerical ? 1 : 0,
        JSON.stringify(patch.tags ?? current.tags),
        id,
      );
      return { ...current, name, property_type: propertyType, is_numerical: isNumerical, tags: patch.tags ?? current.tags };
    })();
  }

  async deleteProperty(projectId: number, id: string): Promise<boolean> {
    return this.statement('DELETE FROM property_definitions WHERE project_id = ? AND id = ?').run(projectId, id).changes > 0;
  }

  async seenTogether(projectId: number, eventNames: string[], property: string): Promise<Record<string, boolean>> {
    const rows = this.statement(
      'SELECT event FROM event_properties WHERE project_id = ? AND property = ? AND event IN (SELECT value FROM json_each(?))',
    ).all(projectId, property, JSON.stringify(eventNames)) as { event: string }[];
    const seen = new Set(rows.map((row) => row.event));
    return Object.fromEntries(eventNames.map((event) => [event, seen.has(event)]));
  }

  async propertyTypes(projectId: number, type: 1 | 2, names: string[]): Promise<Map<string, PropertyValueType>> {
    if (names.length === 0) return new Map();
    const rows = this.statement(
      'SELECT name, property_type FROM property_definitions WHERE project_id = ? AND type = ? AND group_type_index = -1 AND property_type IS NOT NULL AND name IN (SELECT value FROM json_each(?))',
    ).all(projectId, type, JSON.stringify(names)) as { name: string; property_type: PropertyValueType }[];
    return new Map(rows.map((row) => [row.name, row.property_type]));
  }

  async listEvents(query: EventDefinitionQuery): Promise<PageOf<EventDefinition>> {
    const search = searchClauses('name', query.searchWords);
    const where = ['project_id = ?', ...(search.sql ? [search.sql] : [])].join(' AND ');
    const params = [query.projectId, ...search.params];
    return this.page(
      {
        page: { sql: `SELECT * FROM event_definitions WHERE ${where} ORDER BY name LIMIT ? OFFSET ?`, params: [...params, query.limit, query.offset] },
        count: { sql: `SELECT count(*) AS n FROM event_definitions WHERE ${where}`, params },
      },
      query,
      eventFromRow,
    );
  }

  async getEvent(projectId: number, id: string): Promise<EventDefinition | null> {
    const row = this.statement('SELECT * FROM event_definitions WHERE project_id = ? AND id = ?').get(projectId, id) as Row | undefined;
    return row ? eventFromRow(row) : null;
  }

  async updateEvent(projectId: number, id: string, patch: { description?: string | null; tags?: string[] }): Promise<EventDefinition | null> {
    const current = await this.getEvent(projectId, id);
    if (!current) return null;
    const next = { ...current, description: patch.description === undefined ? current.description : patch.description, tags: patch.tags ?? current.tags };
    this.statement('UPDATE event_definitions SET description = ?, tags = ? WHERE id = ?').run(next.description, JSON.stringify(next.tags), id);
    return next;
  }

  async deleteEvent(projectId: number, id: string): Promise<boolean> {
    return this.statement('DELETE FROM event_definitions WHERE project_id = ? AND id = ?').run(projectId, id).changes > 0;
  }
}
