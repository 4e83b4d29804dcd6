/**
 * Versioned schema of the PostgreSQL metadata store, the same tables as the SQLite store's
 * (sqlite/migrations.ts). Append-only: a released migration is never edited, a change is a new
 * entry. Each runs in its own transaction, under an advisory lock, so nodes starting together
 * apply it once.
 *
 * Times are ISO-8601 UTC text (COLLATE "C": compared as the characters they are, whatever the
 * database's locale), as the embedded store keeps them, so both stores give the API the
 * same strings (persons keep their events' timestamps to the microsecond). JSON is `json`, not
 * `jsonb`: it keeps the text as written (key order, and `\u0000`, which jsonb refuses).
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const migrations: Migration[] = [
  {
    version: 1,
    name: 'tenancy, accounts, persons, groups, definitions, flags, ingest state',
    sql: `
      CREATE TABLE organizations (
        id text PRIMARY KEY,
        name text NOT NULL,
        created_at text COLLATE "C" NOT NULL
      );
      CREATE TABLE users (
        id serial PRIMARY KEY,
        uuid text NOT NULL UNIQUE,
        distinct_id text NOT NULL,
        email text NOT NULL,
        first_name text NOT NULL DEFAULT '',
        last_name text NOT NULL DEFAULT '',
        is_email_verified boolean NOT NULL DEFAULT false,
        created_at text COLLATE "C" NOT NULL,
        password_hash text
      );
      -- E-mails compare without case, as SQLite's COLLATE NOCASE does.
      CREATE UNIQUE INDEX users_email ON users (lower(email));
      CREATE TABLE memberships (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        level integer NOT NULL,
        joined_at text COLLATE "C" NOT NULL,
        updated_at text COLLATE "C" NOT NULL,
        UNIQUE (organization_id, user_id)
      );
      CREATE INDEX memberships_user ON memberships (user_id);
      CREATE TABLE organization_invites (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        target_email text NOT NULL,
        level integer NOT NULL,
        created_by integer REFERENCES users(id) ON DELETE SET NULL,
        created_at text COLLATE "C" NOT NULL,
        token_hash text UNIQUE
      );
      CREATE INDEX organization_invites_email ON organization_invites (organization_id, lower(target_email));
      CREATE TABLE projects (
        id serial PRIMARY KEY,
        uuid text NOT NULL UNIQUE,
        organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        name text NOT NULL,
        api_token text NOT NULL UNIQUE,
        timezone text NOT NULL DEFAULT 'UTC',
        anonymize_ips boolean NOT NULL DEFAULT false,
        created_at text COLLATE "C" NOT NULL
      );
      CREATE INDEX projects_organization ON projects (organization_id);
      CREATE TABLE personal_api_keys (
        id text PRIMARY KEY,
        user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        label text NOT NULL,
        secure_value text NOT NULL UNIQUE,
        mask_value text NOT NULL,
        scopes json,
        created_at text COLLATE "C" NOT NULL,
        last_used_at text COLLATE "C"
      );
      CREATE INDEX personal_api_keys_user ON personal_api_keys (user_id);
      -- Only the sha256 of a session token is kept: a copy of the database signs nobody in.
      CREATE TABLE sessions (
        token_hash text PRIMARY KEY,
        user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        created_at text COLLATE "C" NOT NULL,
        expires_at text COLLATE "C" NOT NULL
      );
      CREATE INDEX sessions_user ON sessions (user_id);

      CREATE TABLE persons (
        project_id integer NOT NULL,
        uuid text NOT NULL,
        properties json NOT NULL,
        is_identified boolean NOT NULL DEFAULT false,
        created_at text COLLATE "C" NOT NULL,
        version integer NOT NULL DEFAULT 0,
        PRIMARY KEY (project_id, uuid)
      );
      CREATE TABLE person_distinct_ids (
        project_id integer NOT NULL,
        distinct_id text NOT NULL,
        person_uuid text NOT NULL,
        PRIMARY KEY (project_id, distinct_id)
      );
      CREATE INDEX person_distinct_ids_person ON person_distinct_ids (project_id, person_uuid);
      CREATE TABLE group_types (
        project_id integer NOT NULL,
        group_type text NOT NULL,
        group_type_index integer NOT NULL,
        PRIMARY KEY (project_id, group_type),
        UNIQUE (project_id, group_type_index)
      );
      CREATE TABLE groups (
        project_id integer NOT NULL,
        group_type_index integer NOT NULL,
        group_key text NOT NULL,
        properties json NOT NULL,
        created_at text COLLATE "C" NOT NULL,
        PRIMARY KEY (project_id, group_type_index, group_key)
      );

      CREATE TABLE property_definitions (
        id text PRIMARY KEY,
        project_id integer NOT NULL,
        name text NOT NULL,
        type integer NOT NULL,
        group_type_index integer NOT NULL DEFAULT -1,
        property_type text,
        is_numerical boolean NOT NULL DEFAULT false,
        tags json NOT NULL DEFAULT '[]',
        description text,
        created_at text COLLATE "C" NOT NULL,
        UNIQUE (project_id, type, group_type_index, name)
      );
      CREATE TABLE event_definitions (
        id text PRIMARY KEY,
        project_id integer NOT NULL,
        name text NOT NULL,
        tags json NOT NULL DEFAULT '[]',
        description text,
        created_at text COLLATE "C" NOT NULL,
        last_seen_at text COLLATE "C" NOT NULL,
        UNIQUE (project_id, name)
      );
      CREATE TABLE event_properties (
        project_id integer NOT NULL,
        event text NOT NULL,
        property text NOT NULL,
        PRIMARY KEY (project_id, event, property)
      );
      CREATE INDEX event_properties_property ON event_properties (project_id, property);

      CREATE TABLE feature_flags (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        key text NOT NULL,
        name text NOT NULL DEFAULT '',
        filters json NOT NULL,
        active boolean NOT NULL DEFAULT true,
        deleted boolean NOT NULL DEFAULT false,
        ensure_experience_continuity boolean NOT NULL DEFAULT false,
        version integer NOT NULL DEFAULT 1,
        created_by integer REFERENCES users(id) ON DELETE SET NULL,
        created_at text COLLATE "C" NOT NULL,
        updated_at text COLLATE "C" NOT NULL
      );
      CREATE UNIQUE INDEX feature_flags_key ON feature_flags (project_id, key) WHERE NOT deleted;
      CREATE TABLE flag_hash_key_overrides (
        project_id integer NOT NULL,
        person_uuid text NOT NULL,
        feature_flag_key text NOT NULL,
        hash_key text NOT NULL,
        PRIMARY KEY (project_id, person_uuid, feature_flag_key)
      );

      -- De-duplication of retried events. Each node has its own flush log: a row names the node
      -- and flush that recorded it, so a node's start-up repair forgets only its own.
      CREATE TABLE event_uuids (
        project_id integer NOT NULL,
        uuid bytea NOT NULL,
        node text NOT NULL,
        flush_seq bigint NOT NULL,
        PRIMARY KEY (project_id, uuid)
      );
      CREATE INDEX event_uuids_flush ON event_uuids (node, flush_seq);
      -- The highest flush of each node's flush log applied here.
      CREATE TABLE ingest_state (
        node text PRIMARY KEY,
        flush_seq bigint NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: 'project settings the insights read: week start, test account filters',
    sql: `
      -- NULL: Sunday, as PostHog reads an unset week_start_day.
      ALTER TABLE projects ADD COLUMN week_start_day integer;
      ALTER TABLE projects ADD COLUMN test_account_filters json NOT NULL DEFAULT '[]';
    `,
  },
  {
    version: 3,
    name: 'integer person ids, person deletions, activity log, group type names, saved insights and dashboards',
    sql: `
      -- PostHog shows an integer id next to the uuid. An identity column: an upsert of a known
      -- person keeps its id (it draws, and skips, a number of the sequence), a deleted person's
      -- id is never reused.
      ALTER TABLE persons ADD COLUMN id bigint GENERATED BY DEFAULT AS IDENTITY;
      CREATE UNIQUE INDEX persons_id ON persons (id);
      -- Newest first, as the persons list pages them (uuids compare as the characters they are).
      CREATE INDEX persons_created ON persons (project_id, created_at, uuid COLLATE "C");
      -- Work queue of deletions: the distinct ids are kept only until the deletion has finished.
      -- after_flush_seq counts the flush log of the node that made it: that node finishes it.
      CREATE TABLE person_deletions (
        id serial PRIMARY KEY,
        node text NOT NULL,
        project_id integer NOT NULL,
        person_uuid text NOT NULL,
        distinct_ids json NOT NULL,
        delete_events boolean NOT NULL,
        after_flush_seq bigint NOT NULL,
        requested_by integer,
        requested_at text COLLATE "C" NOT NULL,
        finished_at text COLLATE "C",
        purged_at text COLLATE "C"
      );
      CREATE INDEX person_deletions_open ON person_deletions (node, finished_at);
      -- Who did what to which object, when. No personal data: ids only.
      CREATE TABLE activity_log (
        id bigserial PRIMARY KEY,
        project_id integer NOT NULL,
        scope text NOT NULL,
        item_id text NOT NULL,
        activity text NOT NULL,
        user_id integer,
        detail json NOT NULL DEFAULT '{}',
        created_at text COLLATE "C" NOT NULL
      );
      CREATE INDEX activity_log_scope ON activity_log (project_id, scope, item_id, id);
      -- Display names of group types, editable through the API.
      ALTER TABLE group_types ADD COLUMN name_singular text;
      ALTER TABLE group_types ADD COLUMN name_plural text;
      CREATE INDEX groups_created ON groups (project_id, group_type_index, created_at, group_key COLLATE "C");

      CREATE TABLE insights (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        short_id text NOT NULL UNIQUE,
        name text NOT NULL DEFAULT '',
        description text NOT NULL DEFAULT '',
        query json NOT NULL,
        favorited boolean NOT NULL DEFAULT false,
        tags json NOT NULL DEFAULT '[]',
        deleted boolean NOT NULL DEFAULT false,
        created_by integer REFERENCES users(id) ON DELETE SET NULL,
        created_at text COLLATE "C" NOT NULL,
        last_modified_at text COLLATE "C" NOT NULL,
        last_modified_by integer REFERENCES users(id) ON DELETE SET NULL
      );
      CREATE INDEX insights_project ON insights (project_id, deleted);
      CREATE TABLE dashboards (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        name text NOT NULL DEFAULT '',
        description text NOT NULL DEFAULT '',
        pinned boolean NOT NULL DEFAULT false,
        filters json NOT NULL DEFAULT '{}',
        tags json NOT NULL DEFAULT '[]',
        deleted boolean NOT NULL DEFAULT false,
        created_by integer REFERENCES users(id) ON DELETE SET NULL,
        created_at text COLLATE "C" NOT NULL,
        last_modified_at text COLLATE "C" NOT NULL
      );
      CREATE INDEX dashboards_project ON dashboards (project_id, deleted);
      -- One tile per insight and dashboard: removing a tile marks it deleted, placing it again restores it.
      CREATE TABLE dashboard_tiles (
        id serial PRIMARY KEY,
        dashboard_id integer NOT NULL REFERENCES dashboards(id) ON DELETE CASCADE,
        insight_id integer NOT NULL REFERENCES insights(id) ON DELETE CASCADE,
        layouts json NOT NULL DEFAULT '{}',
        color text,
        deleted boolean NOT NULL DEFAULT false,
        UNIQUE (dashboard_id, insight_id)
      );
      CREATE INDEX dashboard_tiles_insight ON dashboard_tiles (insight_id);
    `,
  },
  {
    version: 4,
    name: 'trigram indexes for the persons search',
    sql: `
      -- The persons list's search (a substring of the email or name, ignoring case) and its email
      -- filter, answered from trigram indexes instead of a pass over every person. pg_trgm ships
      -- with PostgreSQL and is a trusted extension (a database owner may create it); where it
      -- cannot be created, the search still works, by that pass.
      DO $$
      BEGIN
        CREATE EXTENSION IF NOT EXISTS pg_trgm;
      EXCEPTION WHEN OTHERS THEN
        RAISE NOTICE 'pg_trgm is not available (%): the persons search scans the persons', SQLERRM;
      END
      $$;
      DO $$
      BEGIN
        IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
          CREATE INDEX persons_email_trigrams ON persons USING gin (lower(properties->>'email') gin_trgm_ops);
          CREATE INDEX persons_name_trigrams ON persons USING gin (lower(properties->>'name') gin_trgm_ops);
        END IF;
      END
      $$;
    `,
  },
  {
    version: 5,
    name: 'actions',
    sql: `
      -- Steps are kept as one JSON list: they are always read and written whole, with the action.
      CREATE TABLE actions (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        name text NOT NULL,
        description text NOT NULL DEFAULT '',
        tags json NOT NULL DEFAULT '[]',
        steps json NOT NULL DEFAULT '[]',
        deleted boolean NOT NULL DEFAULT false,
        created_by integer REFERENCES users(id) ON DELETE SET NULL,
        created_at text COLLATE "C" NOT NULL,
        updated_at text COLLATE "C" NOT NULL
      );
      CREATE INDEX actions_project ON actions (project_id, deleted);
    `,
  },
  {
    version: 6,
    name: 'cohorts and their materialised membership',
    sql: `
      CREATE TABLE cohorts (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        name text NOT NULL DEFAULT '',
        description text NOT NULL DEFAULT '',
        -- PostHog's {"properties": PropertyGroup}; '{}' for static cohorts.
        filters json NOT NULL DEFAULT '{}',
        is_static boolean NOT NULL DEFAULT false,
        deleted boolean NOT NULL DEFAULT false,
        count integer,
        -- Bumped by every definition change: a calculation started on an older version does not
        -- overwrite the membership of a newer one.
        version integer NOT NULL DEFAULT 1,
        is_calculating boolean NOT NULL DEFAULT false,
        last_calculation text COLLATE "C",
        errors_calculating integer NOT NULL DEFAULT 0,
        last_error text,
        created_by integer REFERENCES users(id) ON DELETE SET NULL,
        created_at text COLLATE "C" NOT NULL,
        updated_at text COLLATE "C" NOT NULL
      );
      CREATE INDEX cohorts_project ON cohorts (project_id, deleted);
      -- Who is in a cohort: written whole by each calculation (dynamic) or by uploads (static).
      -- A deleted (or merged-away) person leaves every cohort with its row.
      CREATE TABLE cohort_people (
        cohort_id integer NOT NULL REFERENCES cohorts(id) ON DELETE CASCADE,
        person_uuid text NOT NULL,
        project_id integer NOT NULL,
        PRIMARY KEY (cohort_id, person_uuid),
        FOREIGN KEY (project_id, person_uuid) REFERENCES persons (project_id, uuid) ON DELETE CASCADE
      );
      CREATE INDEX cohort_people_person ON cohort_people (project_id, person_uuid);
    `,
  },
  {
    version: 7,
    name: "person deletions record every node's last flush",
    sql: `
      -- Per node, the last flush committed before the deletion: events in ClickHouse come from
      -- every node's flushes, each numbered by its own node.
      ALTER TABLE person_deletions ADD COLUMN flushes_before json;
    `,
  },
  {
    version: 8,
    name: 'rate windows shared by the nodes',
    sql: `
      -- API request budgets and sign-in failures, counted once for every node (rate-windows.ts).
      CREATE UNLOGGED TABLE rate_windows (
        key text COLLATE "C" PRIMARY KEY,
        started_at bigint NOT NULL,
        ends_at bigint NOT NULL,
        count integer NOT NULL
      );
    `,
  },
  {
    version: 9,
    name: "person deletions keep their distinct ids' hashes",
    sql: `
      -- sha256 of each distinct id the deletion took, kept once it finishes (the ids themselves are
      -- not): the NATS log may redeliver later a batch committed before the deletion, whose events
      -- must not come back under a person made for that distinct id since (plan/redelivered.ts).
      ALTER TABLE person_deletions ADD COLUMN distinct_id_hashes bytea[] NOT NULL DEFAULT '{}';
      CREATE INDEX person_deletions_distinct_id_hashes ON person_deletions USING gin (distinct_id_hashes);
    `,
  },
];
