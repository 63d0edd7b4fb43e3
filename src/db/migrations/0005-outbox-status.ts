/**
 * An outbox row says what it is in a word: `pending` (to be delivered: due at `available_at_ms`,
 * which a claim pushes forward by its lease), `delivered` (with `delivered_at_ms`), or `given_up`
 * (its consumer tried it as often as it will; it stays undelivered). Until this version the state
 * was read from the times: `delivered_at_ms` set for delivered, and `available_at_ms` at
 * 2^53 − 1 for given up. Those rows are rewritten here, the given-up ones with `available_at_ms`
 * back to 0 (the column's default: due at once, should one be made pending again), and the due
 * rows of a consumer, and its given-up rows, each get an index of their own.
 */
import type { Migration } from '../migrate.js'

export const OUTBOX_STATUS: Migration = {
  version: 5,
  name: 'outbox-status',
  sql: `
ALTER TABLE outbox ADD COLUMN status text NOT NULL DEFAULT 'pending'
  CONSTRAINT outbox_status_check CHECK (status IN ('pending', 'delivered', 'given_up'));

UPDATE outbox SET status = 'delivered' WHERE delivered_at_ms IS NOT NULL;
UPDATE outbox SET status = 'given_up', available_at_ms = 0 WHERE delivered_at_ms IS NULL AND available_at_ms = 9007199254740991;

ALTER TABLE outbox ADD CONSTRAINT outbox_delivered_when_delivered_at CHECK ((status = 'delivered') = (delivered_at_ms IS NOT NULL));

DROP INDEX outbox_due;
CREATE INDEX outbox_pending_due ON outbox (consumer, available_at_ms, event_id) WHERE status = 'pending';
CREATE INDEX outbox_given_up ON outbox (consumer) WHERE status = 'given_up';
`,
}
