/**
 * Per-user storage and the app's collections: JSON values under keys, each owned by a user's
 * address or by a named collection (`space`). Every write of an owner locks its usage row first,
 * in the same transaction, so the key count and byte total the quotas read are exact even with
 * several instances writing for one owner at once; the checks here are the last guard behind
 * that code: counts never negative, a key's size exactly its key and value's bytes, keys within
 * their rule. An owner's keys go with its usage row (DELETE /api/me deletes that row).
 */
import type { Migration } from '../migrate.js'

export const USER_STORAGE: Migration = {
  version: 6,
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
`,
}
