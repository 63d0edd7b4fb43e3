/**
 * Per-user storage and the app's collections: JSON values under keys, each owned by a user's
 * address or by a named collection (`space`). Every write of an owner locks its usage row first,
 * so the key count and byte total the quotas read are exact even with several instances writing
 * for one owner at once; the checks on the tables are the last guard behind that: counts never
 * negative, a key's size exactly its key and value's bytes, keys within their rule. An owner's
 * keys go with its usage row (DELETE /api/me deletes that row).
 *
 * A write is one call of a function here, one statement and so one transaction, rather than a
 * transaction of five or six statements sent one by one: each call into the embedded database
 * costs about as much as the statement it runs, and a PUT in one call takes 40 % of the time at the
 * median (bench/results.md, "Per-user storage"). In a PL/pgSQL function each statement reads what was
 * committed when it began, as a statement sent alone does: the key is read after the lock is
 * held, so it is never older than the last write of the owner.
 */
import type { Migration } from '../migrate.js'

export const USER_STORAGE: Migration = {
  version: 7,
  name: 'user-storage',
  sql: `
CREATE TABLE storage_usage (
  space text NOT NULL CHECK (space IN ('user', 'collection')),
  owner text NOT NULL CHECK (owner <> ''),
  keys integer NOT NULL DEFAULT 0 CHECK (keys >= 0),
  bytes bigint NOT NULL DEFAULT 0 CHECK (bytes >= 0),
  PRIMARY KEY (space, owner)
);

-- Keys in byte order (COLLATE "C"), the same on every server and in the embedded database: the
-- listing's cursor is a key, compared with >.
CREATE TABLE storage_items (
  space text NOT NULL,
  owner text NOT NULL,
  key text COLLATE "C" NOT NULL CHECK (key ~ '^[A-Za-z0-9._-]{1,128}$'),
  value text NOT NULL,
  size integer NOT NULL CHECK (size = octet_length(key) + octet_length(value)),
  version text NOT NULL CHECK (version ~ '^[A-Za-z0-9_-]{16}$'),
  updated_at_ms bigint NOT NULL,
  PRIMARY KEY (space, owner, key),
  FOREIGN KEY (space, owner) REFERENCES storage_usage (space, owner) ON DELETE CASCADE
);

-- Whether a write's conditions hold for the stored version (NULL: no such key). if_versions NULL:
-- no If-Match; '*' among them: any stored version.
CREATE FUNCTION storage_conditions_hold (stored text, if_versions text[], if_absent boolean) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
  SELECT NOT (if_absent AND stored IS NOT NULL)
    AND (if_versions IS NULL OR (stored IS NOT NULL AND (stored = ANY (if_versions) OR '*' = ANY (if_versions))))
$$;

-- Writes a key within the owner's quotas, if its conditions hold. outcome: written,
-- precondition_failed, too_many_keys or owner_full (nothing written); with the owner's totals
-- before the write and the key's stored version and size before it (NULL: new key).
CREATE FUNCTION storage_put (
  p_space text, p_owner text, p_key text, p_value text, p_size integer, p_version text, p_updated_at_ms bigint,
  p_if_versions text[], p_if_absent boolean, p_max_keys integer, p_max_bytes bigint,
  OUT outcome text, OUT owner_keys integer, OUT owner_bytes bigint, OUT stored_version text, OUT stored_size integer
) LANGUAGE plpgsql AS $$
BEGIN
  -- The owner's usage row, locked, created on its first write: its writers take turns here.
  INSERT INTO storage_usage AS u (space, owner) VALUES (p_space, p_owner)
    ON CONFLICT (space, owner) DO UPDATE SET keys = u.keys
    RETURNING u.keys, u.bytes INTO owner_keys, owner_bytes;
  SELECT i.version, i.size INTO stored_version, stored_size
    FROM storage_items i WHERE i.space = p_space AND i.owner = p_owner AND i.key = p_key;
  IF NOT storage_conditions_hold(stored_version, p_if_versions, p_if_absent) THEN
    outcome := 'precondition_failed';
  ELSIF stored_version IS NULL AND owner_keys >= p_max_keys THEN
    outcome := 'too_many_keys';
  -- Only what grows is refused: an owner above a quota lowered since can still shrink.
  ELSIF owner_bytes - coalesce(stored_size, 0) + p_size > p_max_bytes AND p_size > coalesce(stored_size, 0) THEN
    outcome := 'owner_full';
  ELSE
    INSERT INTO storage_items AS i (space, owner, key, value, size, version, updated_at_ms)
      VALUES (p_space, p_owner, p_key, p_value, p_size, p_version, p_updated_at_ms)
      ON CONFLICT (space, owner, key) DO UPDATE
      SET value = EXCLUDED.value, size = EXCLUDED.size, version = EXCLUDED.version, updated_at_ms = EXCLUDED.updated_at_ms;
    UPDATE storage_usage AS u
      SET keys = owner_keys + (CASE WHEN stored_version IS NULL THEN 1 ELSE 0 END), bytes = owner_bytes - coalesce(stored_size, 0) + p_size
      WHERE u.space = p_space AND u.owner = p_owner;
    outcome := 'written';
  END IF;
END
$$;

-- Deletes a key, if its condition holds. outcome: deleted, missing or precondition_failed; with
-- the key's stored version before (NULL: none).
CREATE FUNCTION storage_delete (p_space text, p_owner text, p_key text, p_if_versions text[], OUT outcome text, OUT stored_version text)
LANGUAGE plpgsql AS $$
DECLARE
  stored_size integer;
BEGIN
  -- The same lock, in the same order, as a write: the two never wait for each other in a circle.
  PERFORM 1 FROM storage_usage u WHERE u.space = p_space AND u.owner = p_owner FOR UPDATE;
  SELECT i.version, i.size INTO stored_version, stored_size
    FROM storage_items i WHERE i.space = p_space AND i.owner = p_owner AND i.key = p_key;
  IF NOT storage_conditions_hold(stored_version, p_if_versions, false) THEN
    outcome := 'precondition_failed';
  ELSIF stored_version IS NULL THEN
    outcome := 'missing';
  ELSE
    DELETE FROM storage_items i WHERE i.space = p_space AND i.owner = p_owner AND i.key = p_key;
    UPDATE storage_usage u SET keys = u.keys - 1, bytes = u.bytes - stored_size WHERE u.space = p_space AND u.owner = p_owner;
    outcome := 'deleted';
  END IF;
END
$$;
`,
}
