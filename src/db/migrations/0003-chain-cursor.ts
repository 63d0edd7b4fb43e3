/**
 * The last block the payments watcher handled, kept with the invoices: after a restart (or a
 * crash) the chain is read back from there, so that a payment mined while no instance followed
 * the chain is found without the front-end reporting it.
 */
import type { Migration } from '../migrate.js'

export const CHAIN_CURSOR: Migration = {
  version: 3,
  name: 'chain-cursor',
  sql: `
CREATE TABLE chain_cursors (
  name text PRIMARY KEY,
  height integer NOT NULL CHECK (height >= 0),
  block_hash text NOT NULL CHECK (block_hash ~ '^[0-9a-f]{64}$'),
  updated_at_ms bigint NOT NULL
);
`,
}
