/**
 * What the payments watcher must not forget, and what it may: a transaction the node reported
 * paying the receiver is kept as a sighting until the node's answer for it was read (a failed
 * read is tried again, never dropped with the block that brought it); an invoice says whether
 * webhooks hear of its expiry (anonymous tips do not, unless asked); and expired invoices are
 * found by their expiry to be pruned once past the retention period.
 */
import type { Migration } from '../migrate.js'

export const SIGHTINGS_AND_RETENTION: Migration = {
  version: 4,
  name: 'sightings-and-retention',
  sql: `
CREATE TABLE payment_sightings (
  txid text PRIMARY KEY CHECK (txid ~ '^[0-9a-f]{64}$'),
  sighted_at_ms bigint NOT NULL,
  attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  available_at_ms bigint NOT NULL,
  last_error text
);
CREATE INDEX payment_sightings_due ON payment_sightings (available_at_ms);

ALTER TABLE invoices ADD COLUMN expiry_webhook boolean NOT NULL DEFAULT true;
CREATE INDEX invoices_expired_by_expiry ON invoices (expires_at_ms) WHERE state = 'expired';
`,
}
