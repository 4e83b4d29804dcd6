/**
 * Versioned schema of the SQLite metadata store. Migrations are append-only: a released
 * migration is never edited, a change is a new entry. Each runs in its own transaction.
 */
import { personSearchKeysMigration } from './person-search-keys.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const migrations: Migration[] = [
  {
    version: 1,
    name: 'tenancy, persons, groups, definitions, flags, ingest state',
    sql: `
      CREATE TABLE organizations (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE TABLE users (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        uuid TEXT NOT NULL UNIQUE,
        distinct_id TEXT NOT NULL,
        email TEXT NOT NULL UNIQUE COLLATE NOCASE,
        first_name TEXT NOT NULL DEFAULT '',
        last_name TEXT NOT NULL DEFAULT '',
        is_email_verified INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL
      );
      CREATE TABLE memberships (
        id TEXT PRIMARY KEY,
        organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        level INTEGER NOT NULL,
        joined_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (organization_id, user_id)
      );
      CREATE INDEX memberships_user ON memberships(user_id);
      CREATE TABLE organization_invites (
        id TEXT PRIMARY KEY,
        organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        target_email TEXT NOT NULL COLLATE NOCASE,
        level INTEGER NOT NULL,
        created_by INTEGER REFERENCES users(id) ON DELETE SET NULL,
        created_at TEXT NOT NULL
      );
      CREATE TABLE projects (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        uuid TEXT NOT NULL UNIQUE,
        organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        api_token TEXT NOT NULL UNIQUE,
        timezone TEXT NOT NULL DEFAULT 'UTC',
        anonymize_ips INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL
      );
      CREATE INDEX projects_organization ON projects(organization_id);
      CREATE TABLE personal_api_keys (
        id TEXT PRIMARY KEY,
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        label TEXT NOT NULL,
        secure_value TEXT NOT NULL UNIQUE,
        mask_value TEXT NOT NULL,
        scopes TEXT,
        created_at TEXT NOT NULL,
        last_used_at TEXT
      );
      CREATE INDEX personal_api_keys_user ON personal_api_keys(user_id);

      CREATE TABLE persons (
        project_id INTEGER NOT NULL,
        uuid TEXT NOT NULL,
        properties TEXT NOT NULL,
        is_identified INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        version INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (project_id, uuid)
      ) WITHOUT ROWID;
      CREATE TABLE person_distinct_ids (
        project_id INTEGER NOT NULL,
        distinct_id TEXT NOT NULL,
        person_uuid TEXT NOT NULL,
        PRIMARY KEY (project_id, distinct_id)
      ) WITHOUT ROWID;
      CREATE INDEX person_distinct_ids_person ON person_distinct_ids(project_id, person_uuid);

      CREATE TABLE group_types (
        project_id INTEGER NOT NULL,
        group_type TEXT NOT NULL,
        group_type_index INTEGER NOT NULL,
        PRIMARY KEY (project_id, group_type),
        UNIQUE (project_id, group_type_index)
      );
      CREATE TABLE groups (
        project_id INTEGER NOT NULL,
        group_type_index INTEGER NOT NULL,
        group_key TEXT NOT NULL,
        properties TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (project_id, group_type_index, group_key)
      ) WITHOUT ROWID;

      CREATE TABLE property_definitions (
        id TEXT PRIMARY KEY,
        project_id INTEGER NOT NULL,
        name TEXT NOT NULL,
        type INTEGER NOT NULL,
        group_type_index INTEGER NOT NULL DEFAULT -1,
        property_type TEXT,
        is_numerical INTEGER NOT NULL DEFAULT 0,
        tags TEXT NOT NULL DEFAULT '[]',
        description TEXT,
        created_at TEXT NOT NULL,
        UNIQUE (project_id, type, group_type_index, name)
      );
      CREATE INDEX property_definitions_list ON property_definitions(project_id, type, group_type_index, name);
      CREATE TABLE event_definitions (
        id TEXT PRIMARY KEY,
        project_id INTEGER NOT NULL,
        name TEXT NOT NULL,
        tags TEXT NOT NULL DEFAULT '[]',
        description TEXT,
        created_at TEXT NOT NULL,
        last_seen_at TEXT NOT NULL,
        UNIQUE (project_id, name)
      );
      CREATE TABLE event_properties (
        project_id INTEGER NOT NULL,
        event TEXT NOT NULL,
        property TEXT NOT NULL,
        PRIMARY KEY (project_id, event, property)
      ) WITHOUT ROWID;
      CREATE INDEX event_properties_property ON event_properties(project_id, property);

      CREATE TABLE feature_flags (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        name TEXT NOT NULL DEFAULT '',
        filters TEXT NOT NULL,
        active INTEGER NOT NULL DEFAULT 1,
        deleted INTEGER NOT NULL DEFAULT 0,
        ensure_experience_continuity INTEGER NOT NULL DEFAULT 0,
        version INTEGER NOT NULL DEFAULT 1,
        created_by INTEGER REFERENCES users(id) ON DELETE SET NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE UNIQUE INDEX feature_flags_key ON feature_flags(project_id, key) WHERE deleted = 0;
      CREATE TABLE flag_hash_key_overrides (
        project_id INTEGER NOT NULL,
        person_uuid TEXT NOT NULL,
        feature_flag_key TEXT NOT NULL,
        hash_key TEXT NOT NULL,
        PRIMARY KEY (project_id, person_uuid, feature_flag_key)
      ) WITHOUT ROWID;

      -- De-duplication of retried events, tagged with the flush that recorded them so that
      -- a crash between the metadata commit and the event commit can be undone at start-up.
      CREATE TABLE event_uuids (
        project_id INTEGER NOT NULL,
        uuid BLOB NOT NULL,
        flush_seq INTEGER NOT NULL,
        PRIMARY KEY (project_id, uuid)
      ) WITHOUT ROWID;
      CREATE TABLE ingest_state (
        key TEXT PRIMARY KEY,
        value INTEGER NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: 'passwords, browser sessions, invite links',
    sql: `
      ALTER TABLE users ADD COLUMN password_hash TEXT;
      -- Only the sha256 of a session token is kept: a copy of this file signs nobody in.
      CREATE TABLE sessions (
        token_hash TEXT PRIMARY KEY,
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX sessions_user ON sessions(user_id);
      ALTER TABLE organization_invites ADD COLUMN token_hash TEXT;
      CREATE UNIQUE INDEX organization_invites_token ON organization_invites(token_hash) WHERE token_hash IS NOT NULL;
    `,
  },
  {
    version: 3,
    name: 'project settings the insights read: week start, test account filters',
    sql: `
      -- NULL: Sunday, as PostHog reads an unset week_start_day.
      ALTER TABLE projects ADD COLUMN week_start_day INTEGER;
      ALTER TABLE projects ADD COLUMN test_account_filters TEXT NOT NULL DEFAULT '[]';
    `,
  },
  {
    version: 4,
    name: 'numeric person ids, person deletions, activity log, group type names',
    sql: `
      -- PostHog exposes an integer id next to the uuid. persons is keyed by uuid WITHOUT ROWID,
      -- so the integer lives in its own table; AUTOINCREMENT never reuses a deleted person's id.
      CREATE TABLE person_ids (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        project_id INTEGER NOT NULL,
        uuid TEXT NOT NULL,
        UNIQUE (project_id, uuid)
      );
      INSERT INTO person_ids (project_id, uuid) SELECT project_id, uuid FROM persons ORDER BY created_at, uuid;
      CREATE INDEX persons_created ON persons(project_id, created_at);
      -- Work queue of deletions: the distinct ids are kept only until the deletion has finished.
      CREATE TABLE person_deletions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        project_id INTEGER NOT NULL,
        person_uuid TEXT NOT NULL,
        distinct_ids TEXT NOT NULL,
        delete_events INTEGER NOT NULL,
        after_flush_seq INTEGER NOT NULL,
        requested_by INTEGER,
        requested_at TEXT NOT NULL,
        finished_at TEXT,
        purged_at TEXT
      );
      CREATE INDEX person_deletions_open ON person_deletions(finished_at);
      -- Who did what to which object, when. No personal data: ids only.
      CREATE TABLE activity_log (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        project_id INTEGER NOT NULL,
        scope TEXT NOT NULL,
        item_id TEXT NOT NULL,
        activity TEXT NOT NULL,
        user_id INTEGER,
        detail TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL
      );
      CREATE INDEX activity_log_scope ON activity_log(project_id, scope, id);
      -- Display names of group types, editable through the API.
      ALTER TABLE group_types ADD COLUMN name_singular TEXT;
      ALTER TABLE group_types ADD COLUMN name_plural TEXT;
      CREATE INDEX groups_created ON groups(project_id, group_type_index, created_at);
    `,
  },
  {
    version: 5,
    name: 'saved insights, dashboards and their tiles',
    sql: `
      CREATE TABLE insights (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        short_id TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL DEFAULT '',
        description TEXT NOT NULL DEFAULT '',
        query TEXT NOT NULL,
        favorited INTEGER NOT NULL DEFAULT 0,
        tags TEXT NOT NULL DEFAULT '[]',
        deleted INTEGER NOT NULL DEFAULT 0,
        created_by INTEGER REFERENCES users(id) ON DELETE SET NULL,
        created_at TEXT NOT NULL,
        last_modified_at TEXT NOT NULL,
        last_modified_by INTEGER REFERENCES users(id) ON DELETE SET NULL
      );
      CREATE INDEX insights_project ON insights(project_id, deleted);
      CREATE TABLE dashboards (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        name TEXT NOT NULL DEFAULT '',
        description TEXT NOT NULL DEFAULT '',
        pinned INTEGER NOT NULL DEFAULT 0,
        filters TEXT NOT NULL DEFAULT '{}',
        tags TEXT NOT NULL DEFAULT '[]',
        deleted INTEGER NOT NULL DEFAULT 0,
        created_by INTEGER REFERENCES users(id) ON DELETE SET NULL,
        created_at TEXT NOT NULL,
        last_modified_at TEXT NOT NULL
      );
      CREATE INDEX dashboards_project ON dashboards(project_id, deleted);
      -- One tile per insight and dashboard: removing a tile marks it deleted, placing it again restores it.
      CREATE TABLE dashboard_tiles (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        dashboard_id INTEGER NOT NULL REFERENCES dashboards(id) ON DELETE CASCADE,
        insight_id INTEGER NOT NULL REFERENCES insights(id) ON DELETE CASCADE,
        layouts TEXT NOT NULL DEFAULT '{}',
        color TEXT,
        deleted INTEGER NOT NULL DEFAULT 0,
        UNIQUE (dashboard_id, insight_id)
      );
      CREATE INDEX dashboard_tiles_insight ON dashboard_tiles(insight_id);
    `,
  },
  {
    version: 6,
    name: 'cohorts and their materialised membership',
    sql: `
      CREATE TABLE cohorts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        name TEXT NOT NULL DEFAULT '',
        description TEXT NOT NULL DEFAULT '',
        -- PostHog's {"properties": PropertyGroup}; '{}' for static cohorts.
        filters TEXT NOT NULL DEFAULT '{}',
        is_static INTEGER NOT NULL DEFAULT 0,
        deleted INTEGER NOT NULL DEFAULT 0,
        count INTEGER,
        -- Bumped by every definition change: a calculation started on an older version does not
        -- overwrite the membership of a newer one.
        version INTEGER NOT NULL DEFAULT 1,
        is_calculating INTEGER NOT NULL DEFAULT 0,
        last_calculation TEXT,
        errors_calculating INTEGER NOT NULL DEFAULT 0,
        last_error TEXT,
        created_by INTEGER REFERENCES users(id) ON DELETE SET NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX cohorts_project ON cohorts(project_id, deleted);
      -- Who is in a cohort: written whole by each calculation (dynamic) or by uploads (static).
      CREATE TABLE cohort_people (
        cohort_id INTEGER NOT NULL REFERENCES cohorts(id) ON DELETE CASCADE,
        person_uuid TEXT NOT NULL,
        project_id INTEGER NOT NULL,
        PRIMARY KEY (cohort_id, person_uuid)
      ) WITHOUT ROWID;
      CREATE INDEX cohort_people_person ON cohort_people(project_id, person_uuid);
    `,
  },
  {
    version: 7,
    name: 'actions',
    sql: `
      -- Steps are kept as one JSON list: they are always read and written whole, with the action.
      CREATE TABLE actions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        tags TEXT NOT NULL DEFAULT '[]',
        steps TEXT NOT NULL DEFAULT '[]',
        deleted INTEGER NOT NULL DEFAULT 0,
        created_by INTEGER REFERENCES users(id) ON DELETE SET NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX actions_project ON actions(project_id, deleted);
    `,
  },
  {
    version: 8,
    name: 'a trigram index for the persons search',
    sql: `
      -- The persons list's search (a substring of the email or the name) from a trigram index,
      -- not a pass over every person. Keyed by the person's integer id; the triggers keep it
      -- current whatever writes persons (ingestion, the API, splits, deletions).
      CREATE VIRTUAL TABLE persons_search USING fts5(email, name, content='', contentless_delete=1, tokenize='trigram case_sensitive 0');
      INSERT INTO persons_search (rowid, email, name)
        SELECT i.id, json_extract(p.properties, '$.email'), json_extract(p.properties, '$.name')
        FROM person_ids i JOIN persons p ON p.project_id = i.project_id AND p.uuid = i.uuid;
      -- Every writer adds the person's row, then its id.
      CREATE TRIGGER persons_search_add AFTER INSERT ON person_ids BEGIN
        INSERT INTO persons_search (rowid, email, name)
          SELECT new.id, json_extract(properties, '$.email'), json_extract(properties, '$.name')
          FROM persons WHERE project_id = new.project_id AND uuid = new.uuid;
      END;
      CREATE TRIGGER persons_search_remove AFTER DELETE ON person_ids BEGIN
        DELETE FROM persons_search WHERE rowid = old.id;
      END;
      CREATE TRIGGER persons_search_change AFTER UPDATE OF properties ON persons
        WHEN json_extract(old.properties, '$.email') IS NOT json_extract(new.properties, '$.email')
          OR json_extract(old.properties, '$.name') IS NOT json_extract(new.properties, '$.name')
      BEGIN
        DELETE FROM persons_search WHERE rowid = (SELECT id FROM person_ids WHERE project_id = new.project_id AND uuid = new.uuid);
        INSERT INTO persons_search (rowid, email, name)
          SELECT id, json_extract(new.properties, '$.email'), json_extract(new.properties, '$.name')
          FROM person_ids WHERE project_id = new.project_id AND uuid = new.uuid;
      END;
    `,
  },
  {
    version: 9,
    name: 'the persons search index keyed in the list order',
    sql: personSearchKeysMigration,
  },
];
