/**
 * A storage write writes its owner's usage row once, not twice. Migration 7's `storage_put` took
 * the owner's lock with `INSERT … ON CONFLICT DO UPDATE SET keys = u.keys`, an update that writes
 * a new version of the row and its WAL, and then updated the row again with the new totals. The
 * lock is now `SELECT … FOR UPDATE`, which only marks the row locked; the row is inserted (under
 * the same `ON CONFLICT`, so two first writes of one owner still take turns) only when it is not
 * there. The key, read after the lock as before, is then updated or inserted as that read found
 * it: under the owner's lock no other writer can add or remove it in between, so the `ON
 * CONFLICT` of the key's insert had nothing left to catch.
 *
 * Same signature, same answers, same lock order as `storage_delete`. What it saved:
 * bench/results.md, "A write without the second write of its totals".
 */
import type { Migration } from '../migrate.js'

export const STORAGE_PUT_ONE_WRITE: Migration = {
  version: 10,
  name: 'storage-put-one-write',
  sql: `
CREATE OR REPLACE FUNCTION storage_put (
  p_space text, p_owner text, p_key text, p_value text, p_size integer, p_version text, p_updated_at_ms bigint,
  p_if_versions text[], p_if_absent boolean, p_max_keys integer, p_max_bytes bigint,
  OUT outcome text, OUT owner_keys integer, OUT owner_bytes bigint, OUT stored_version text, OUT stored_size integer
) LANGUAGE plpgsql AS $$
BEGIN
  -- The owner's usage row, locked, created on its first write: its writers take turns here.
  SELECT u.keys, u.bytes INTO owner_keys, owner_bytes
    FROM storage_usage u WHERE u.space = p_space AND u.owner = p_owner FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO storage_usage AS u (space, owner) VALUES (p_space, p_owner)
      ON CONFLICT (space, owner) DO UPDATE SET keys = u.keys
      RETURNING u.keys, u.bytes INTO owner_keys, owner_bytes;
  END IF;
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
    IF stored_version IS NULL THEN
      INSERT INTO storage_items (space, owner, key, value, size, version, updated_at_ms)
        VALUES (p_space, p_owner, p_key, p_value, p_size, p_version, p_updated_at_ms);
    ELSE
      UPDATE storage_items i SET value = p_value, size = p_size, version = p_version, updated_at_ms = p_updated_at_ms
        WHERE i.space = p_space AND i.owner = p_owner AND i.key = p_key;
    END IF;
    UPDATE storage_usage u
      SET keys = owner_keys + (CASE WHEN stored_version IS NULL THEN 1 ELSE 0 END), bytes = owner_bytes - coalesce(stored_size, 0) + p_size
      WHERE u.space = p_space AND u.owner = p_owner;
    outcome := 'written';
  END IF;
END
$$;
`,
}
