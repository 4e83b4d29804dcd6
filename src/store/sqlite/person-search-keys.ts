/**
 * The persons search's trigram index is keyed in the list's order, so that a search can read
 * its hits newest first straight from the index (FTS5 walks rowids backwards without a sort) and
 * stop once it has a page, instead of loading and sorting every hit.
 *
 * A person's key is its `created_at` in milliseconds times SLOTS, plus a slot that tells apart
 * persons of the same millisecond. Keys only need to be *weakly* in order: a search reads hits
 * down to the millisecond where it has its page, reads that millisecond to its end, and sorts
 * what it read by (created_at, uuid) itself. Only canonical timestamps (what toISOString()
 * writes, so that text order is time order) get such a key; any other text, and the persons of a
 * millisecond whose slots are full, get a key above every timestamp's, read by every search.
 * Migration 9 makes the keys (person_search_keys) and re-fills the index with them.
 */

/** Persons of one millisecond that get ordered keys; more go above (OUT_OF_ORDER). */
export const SLOTS = 16_384;
/** Keys from here up are out of time order (2^62, above the key of 9999-12-31's last millisecond). */
export const OUT_OF_ORDER = 4_611_686_018_427_387_904n;

/** SQL: the millisecond of a canonical `created_at` text (negative ones as 0), else NULL. */
const millisecond = (createdAt: string) =>
  `(CASE WHEN strftime('%Y-%m-%dT%H:%M:%fZ', ${createdAt}) IS ${createdAt} ` +
  `THEN max(0, CAST(strftime('%s', ${createdAt}) AS INTEGER) * 1000 + CAST(substr(${createdAt}, 21, 3) AS INTEGER)) END)`;

/** SQL: the next free key above every key out of order. */
const nextOutOfOrder = `(SELECT max(coalesce(max(key), 0) + 1, ${OUT_OF_ORDER}) FROM person_search_keys)`;

/** SQL: a new person's key, from its `created_at` (read once): the next free slot of its millisecond, else out of order. */
function newKey(createdAt: string): string {
  const inOrder =
    `(SELECT CASE WHEN taken IS NULL THEN first WHEN taken < first + ${SLOTS - 1} THEN taken + 1 END FROM ` +
    `(SELECT first, (SELECT max(key) FROM person_search_keys WHERE key BETWEEN first AND first + ${SLOTS - 1}) AS taken ` +
    `FROM (SELECT ${millisecond('c')} * ${SLOTS} AS first FROM (SELECT ${createdAt} AS c)) WHERE first IS NOT NULL))`;
  return `coalesce(${inOrder}, ${nextOutOfOrder})`;
}

const keyOf = (projectId: string, uuid: string) => `(SELECT key FROM person_search_keys WHERE project_id = ${projectId} AND uuid = ${uuid})`;

/** Migration 9: the index keyed in the list's order, and the triggers that keep it so. */
export const personSearchKeysMigration = `
  DROP TRIGGER persons_search_add;
  DROP TRIGGER persons_search_remove;
  DROP TRIGGER persons_search_change;
  DROP TABLE persons_search;
  CREATE TABLE person_search_keys (key INTEGER PRIMARY KEY, project_id INTEGER NOT NULL, uuid TEXT NOT NULL);
  CREATE UNIQUE INDEX person_search_keys_person ON person_search_keys(project_id, uuid);
  INSERT INTO person_search_keys (key, project_id, uuid)
    SELECT ms * ${SLOTS} + n - 1, project_id, uuid FROM (
      SELECT i.project_id, i.uuid, ${millisecond('p.created_at')} AS ms, row_number() OVER (PARTITION BY ${millisecond('p.created_at')} ORDER BY i.id) AS n
      FROM person_ids i JOIN persons p ON p.project_id = i.project_id AND p.uuid = i.uuid)
    WHERE ms IS NOT NULL AND n <= ${SLOTS};
  INSERT INTO person_search_keys (key, project_id, uuid)
    SELECT ${OUT_OF_ORDER} + row_number() OVER (ORDER BY i.id) - 1, i.project_id, i.uuid FROM person_ids i
    WHERE NOT EXISTS (SELECT 1 FROM person_search_keys k WHERE k.project_id = i.project_id AND k.uuid = i.uuid);
  CREATE VIRTUAL TABLE persons_search USING fts5(email, name, content='', contentless_delete=1, tokenize='trigram case_sensitive 0');
  INSERT INTO persons_search (rowid, email, name)
    SELECT k.key, json_extract(p.properties, '$.email'), json_extract(p.properties, '$.name')
    FROM person_search_keys k JOIN persons p ON p.project_id = k.project_id AND p.uuid = k.uuid ORDER BY k.key;
  -- Every writer adds the person's row, then its id.
  CREATE TRIGGER persons_search_add AFTER INSERT ON person_ids BEGIN
    INSERT INTO person_search_keys (key, project_id, uuid)
      SELECT ${newKey('p.created_at')}, p.project_id, p.uuid FROM persons p WHERE p.project_id = new.project_id AND p.uuid = new.uuid;
    INSERT INTO persons_search (rowid, email, name)
      SELECT k.key, json_extract(p.properties, '$.email'), json_extract(p.properties, '$.name')
      FROM person_search_keys k JOIN persons p ON p.project_id = k.project_id AND p.uuid = k.uuid WHERE k.project_id = new.project_id AND k.uuid = new.uuid;
  END;
  CREATE TRIGGER persons_search_remove AFTER DELETE ON person_ids BEGIN
    DELETE FROM persons_search WHERE rowid = ${keyOf('old.project_id', 'old.uuid')};
    DELETE FROM person_search_keys WHERE project_id = old.project_id AND uuid = old.uuid;
  END;
  -- A merge moves created_at earlier: the person gets a new key.
  CREATE TRIGGER persons_search_change AFTER UPDATE OF properties, created_at ON persons
    WHEN (json_extract(old.properties, '$.email') IS NOT json_extract(new.properties, '$.email')
      OR json_extract(old.properties, '$.name') IS NOT json_extract(new.properties, '$.name')
      OR old.created_at IS NOT new.created_at)
      AND EXISTS (SELECT 1 FROM person_search_keys WHERE project_id = new.project_id AND uuid = new.uuid)
  BEGIN
    DELETE FROM persons_search WHERE rowid = ${keyOf('new.project_id', 'new.uuid')};
    DELETE FROM person_search_keys WHERE project_id = new.project_id AND uuid = new.uuid;
    INSERT INTO person_search_keys (key, project_id, uuid) VALUES (${newKey('new.created_at')}, new.project_id, new.uuid);
    INSERT INTO persons_search (rowid, email, name)
      VALUES (${keyOf('new.project_id', 'new.uuid')}, json_extract(new.properties, '$.email'), json_extract(new.properties, '$.name'));
  END;
`;
