/**
 * Property and event definitions in PostgreSQL: the same lists, order and paging as the SQLite
 * store (sqlite/definitions.ts). Every user value is a bound parameter; lists are one array
 * parameter (`= ANY($n)`).
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
import { toBool } from '../rows.js';
import { HIDDEN_EVENT_PROPERTY_NAMES } from '../definition-sql.js';
import { changes, jsonValue, one, Params, rows, transaction, type PgPool, type Row } from './database.js';

/** Every word must occur in the column, ignoring case (lower() folds every script here). */
function searchClauses(column: string, words: string[], params: Params): string[] {
  return words.map((word) => `strpos(lower(${column}), ${params.add(word.toLowerCase())}) > 0`);
}

interface ListSql {
  page: { sql: string; params: unknown[] };
  count: { sql: string; params: unknown[] };
}

/** Whether the definition's name was seen with one of `eventNames`. */
const seenWith = (q: PropertyDefinitionQuery, eventNames: string[], params: Params) =>
  `pd.name IN (SELECT ep.property FROM event_properties ep WHERE ep.project_id = ${params.add(q.projectId)} AND ep.event = ANY(${params.add(eventNames)}::text[]))`;

/** The filters of a property list, numbered from `params`' next placeholder. */
function propertyWhere(q: PropertyDefinitionQuery, params: Params): string {
  const where = [`pd.project_id = ${params.add(q.projectId)}`, `pd.type = ${params.add(q.type)}`, `pd.group_type_index = ${params.add(q.groupTypeIndex ?? -1)}`];
  where.push(...searchClauses('pd.name', q.searchWords, params));
  if (q.names !== null) where.push(`pd.name = ANY(${params.add(q.names)}::text[])`);
  if (q.excludedNames.length > 0) where.push(`NOT (pd.name = ANY(${params.add(q.excludedNames)}::text[]))`);
  if (q.type === 1) {
    where.push(`NOT (pd.name = ANY(${params.add(HIDDEN_EVENT_PROPERTY_NAMES)}::text[]))`);
    where.push("pd.name NOT LIKE '$session\\_entry\\_%' ESCAPE '\\'");
  }
  if (q.isFeatureFlag !== null) where.push(q.isFeatureFlag ? "pd.name LIKE '$feature/%'" : "pd.name NOT LIKE '$feature/%'");
  if (q.isNumerical === true) where.push("pd.is_numerical AND pd.name NOT IN ('distinct_id', 'timestamp')");
  if (q.isNumerical === false) where.push('NOT pd.is_numerical');
  if (q.eventNames !== null && q.onlySeenWithEvents) where.push(seenWith(q, q.eventNames, params));
  return where.join(' AND ');
}

function propertyListSql(q: PropertyDefinitionQuery): ListSql {
  const params = new Params();
  const seen = q.eventNames === null ? 'NULL::boolean' : seenWith(q, q.eventNames, params);
  const where = propertyWhere(q, params);
  // Seen-on-events first when asked, then by name: a total order, so pages never overlap. Names
  // sort by code point (COLLATE "C"), as SQLite's BINARY does.
  const order = q.eventNames === null ? 'pd.name COLLATE "C"' : 'seen DESC, pd.name COLLATE "C"';
  const page = `SELECT pd.*, ${seen} AS seen FROM property_definitions pd WHERE ${where}
    ORDER BY ${order} LIMIT ${params.add(q.limit)} OFFSET ${params.add(q.offset)}`;
  const countParams = new Params();
  const count = `SELECT count(*)::int AS n FROM property_definitions pd WHERE ${propertyWhere(q, countParams)}`;
  return { page: { sql: page, params: params.values }, count: { sql: count, params: countParams.values } };
}

const propertyFromRow = (row: Row): PropertyDefinition => ({
  id: row.id as string,
  project_id: row.project_id as number,
  name: row.name as string,
  type: row.type as 1 | 2 | 3,
  group_type_index: row.group_type_index === -1 ? null : (row.group_type_index as number),
  property_type: (row.property_type as PropertyDefinition['property_type']) ?? null,
  is_numerical: toBool(row.is_numerical),
  tags: jsonValue<string[]>(row.tags, []),
  is_seen_on_filtered_events: row.seen === undefined || row.seen === null ? null : toBool(row.seen),
});

const eventFromRow = (row: Row): EventDefinition => ({
  id: row.id as string,
  project_id: row.project_id as number,
  name: row.name as string,
  description: (row.description as string | null) ?? null,
  tags: jsonValue<string[]>(row.tags, []),
  created_at: row.created_at as string,
  last_seen_at: row.last_seen_at as string,
});

export class PostgresDefinitionStore implements DefinitionStore {
  constructor(private readonly pool: PgPool) {}

  private async page<T>(query: ListSql, page: Page, map: (row: Row) => T): Promise<PageOf<T>> {
    const found = await rows(this.pool, query.page.sql, query.page.params);
    // A page that is not full and not past the end already tells the total: skip the count scan.
    const known = found.length < page.limit && (found.length > 0 || page.offset === 0);
    const count = known ? page.offset + found.length : (await one<{ n: number }>(this.pool, query.count.sql, query.count.params))!.n;
    return { count, results: found.map(map) };
  }

  async listProperties(query: PropertyDefinitionQuery): Promise<PageOf<PropertyDefinition>> {
    return this.page(propertyListSql(query), query, propertyFromRow);
  }

  async getProperty(projectId: number, id: string): Promise<PropertyDefinition | null> {
    const row = await one(this.pool, 'SELECT * FROM property_definitions WHERE project_id = $1 AND id = $2', [projectId, id]);
    return row ? propertyFromRow(row) : null;
  }

  /** The row is locked while the rename is checked, so two nodes cannot both take a name. */
  async updateProperty(projectId: number, id: string, patch: PropertyDefinitionPatch): Promise<DefinitionUpdate<PropertyDefinition>> {
    return transaction(this.pool, async (client): Promise<DefinitionUpdate<PropertyDefinition>> => {
      const row = await one(client, 'SELECT * FROM property_definitions WHERE project_id = $1 AND id = $2 FOR UPDATE', [projectId, id]);
      if (!row) return 'not_found';
      const current = propertyFromRow(row);
      const name = patch.name ?? current.name;
      if (name !== current.name) {
        const taken = await one(
          client,
          'SELECT 1 FROM property_definitions WHERE project_id = $1 AND type = $2 AND group_type_index = $3 AND name = $4 AND id <> $5',
          [projectId, current.type, current.group_type_index ?? -1, name, id],
        );
        if (taken) return 'name_taken';
      }
      const propertyType = patch.property_type ?? current.property_type;
      // A new value type decides is_numerical unless the caller set it explicitly.
      const isNumerical = patch.is_numerical ?? (patch.property_type ? patch.property_type === 'Numeric' : current.is_numerical);
      if (propertyType !== null && isNumerical !== (propertyType === 'Numeric')) return 'inconsistent_type';
      const tags = patch.tags ?? current.tags;
      await client.query('UPDATE property_definitions SET name = $1, property_type = $2, is_numerical = $3, tags = $4 WHERE id = $5', [
        name,
        propertyType,
        isNumerical,
        JSON.stringify(tags),
        id,
      ]);
      return { ...current, name, property_type: propertyType, is_numerical: isNumerical, tags };
    });
  }

  async deleteProperty(projectId: number, id: string): Promise<boolean> {
    return (await changes(this.pool, 'DELETE FROM property_definitions WHERE project_id = $1 AND id = $2', [projectId, id])) > 0;
  }

  async seenTogether(projectId: number, eventNames: string[], property: string): Promise<Record<string, boolean>> {
    const found = await rows<{ event: string }>(
      this.pool,
      'SELECT event FROM event_properties WHERE project_id = $1 AND property = $2 AND event = ANY($3::text[])',
      [projectId, property, eventNames],
    );
    const seen = new Set(found.map((row) => row.event));
    return Object.fromEntries(eventNames.map((event) => [event, seen.has(event)]));
  }

  async propertyTypes(projectId: number, type: 1 | 2, names: string[]): Promise<Map<string, PropertyValueType>> {
    if (names.length === 0) return new Map();
    const found = await rows<{ name: string; property_type: PropertyValueType }>(
      this.pool,
      `SELECT name, property_type FROM property_definitions
       WHERE project_id = $1 AND type = $2 AND group_type_index = -1 AND property_type IS NOT NULL AND name = ANY($3::text[])`,
      [projectId, type, names],
    );
    return new Map(found.map((row) => [row.name, row.property_type]));
  }

  async listEvents(query: EventDefinitionQuery): Promise<PageOf<EventDefinition>> {
    const params = new Params();
    const where = [`project_id = ${params.add(query.projectId)}`, ...searchClauses('name', query.searchWords, params)].join(' AND ');
    const countParams = [...params.values];
    const page = `SELECT * FROM event_definitions WHERE ${where} ORDER BY name COLLATE "C" LIMIT ${params.add(query.limit)} OFFSET ${params.add(query.offset)}`;
    return this.page(
      { page: { sql: page, params: params.values }, count: { sql: `SELECT count(*)::int AS n FROM event_definitions WHERE ${where}`, params: countParams } },
      query,
      eventFromRow,
    );
  }

  async getEvent(projectId: number, id: string): Promise<EventDefinition | null> {
    const row = await one(this.pool, 'SELECT * FROM event_definitions WHERE project_id = $1 AND id = $2', [projectId, id]);
    return row ? eventFromRow(row) : null;
  }

  async updateEvent(projectId: number, id: string, patch: { description?: string | null; tags?: string[] }): Promise<EventDefinition | null> {
    const row = await one(
      this.pool,
      `UPDATE event_definitions SET description = CASE WHEN $1 THEN $2 ELSE description END, tags = coalesce($3::json, tags)
       WHERE project_id = $4 AND id = $5 RETURNING *`,
      [patch.description !== undefined, patch.description ?? null, patch.tags === undefined ? null : JSON.stringify(patch.tags), projectId, id],
    );
    return row ? eventFromRow(row) : null;
  }

  async deleteEvent(projectId: number, id: string): Promise<boolean> {
    return (await changes(this.pool, 'DELETE FROM event_definitions WHERE project_id = $1 AND id = $2', [projectId, id])) > 0;
  }
}
