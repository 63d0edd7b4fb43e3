/**
 * The durable event log holds the entitlements' events too: a grant (`entitlementGranted`) and a
 * revocation (`entitlementRevoked`), each with its outbox rows, written in the transaction that
 * grants or revokes, as an invoice's transitions are written in the one that moves the invoice.
 * The table is renamed for what it now is, `outbox_events` (the events the outbox delivers), and
 * its constraints, index and identity sequence with it; the outbox and the delivery log reference
 * it by identity, not by name, so their rows stay as they are.
 *
 * An event is of an invoice (its id and sequence, no grant) or of a grant (its id, no invoice or
 * sequence), as its type says: a CHECK, so that no code can write one half-made. A grant is told
 * granted once and revoked once (a partial unique index), as an invoice is confirmed once: two
 * instances or a retried write never tell it twice.
 */
import type { Migration } from '../migrate.js'

export const OUTBOX_EVENTS: Migration = {
  version: 9,
  name: 'outbox-events',
  sql: `
ALTER TABLE payment_events RENAME TO outbox_events;
-- Every constraint by its new name: migration 1's keys and checks, and the NOT NULL ones where the
-- server names them (PostgreSQL 18, the embedded database; 15 does not). A key's index follows its key.
DO $$
DECLARE
  old_name text;
BEGIN
  FOR old_name IN SELECT conname FROM pg_constraint WHERE conrelid = 'outbox_events'::regclass AND starts_with(conname, 'payment_events_') LOOP
    EXECUTE format('ALTER TABLE outbox_events RENAME CONSTRAINT %I TO %I', old_name, 'outbox_events_' || substr(old_name, length('payment_events_') + 1));
  END LOOP;
END
$$;
ALTER INDEX payment_events_confirmed_once RENAME TO outbox_events_confirmed_once;
ALTER SEQUENCE payment_events_id_seq RENAME TO outbox_events_id_seq;

ALTER TABLE outbox_events ALTER COLUMN invoice_id DROP NOT NULL;
ALTER TABLE outbox_events ALTER COLUMN sequence DROP NOT NULL;
ALTER TABLE outbox_events ADD COLUMN grant_id bigint CONSTRAINT outbox_events_grant_id_fkey REFERENCES entitlement_grants (id);

ALTER TABLE outbox_events DROP CONSTRAINT outbox_events_type_check;
ALTER TABLE outbox_events ADD CONSTRAINT outbox_events_type_check
  CHECK (type IN ('pending', 'seen', 'confirmed', 'expired', 'underpaid', 'overpaid', 'paidLate', 'entitlementGranted', 'entitlementRevoked'));
ALTER TABLE outbox_events ADD CONSTRAINT outbox_events_subject_check CHECK (
  CASE WHEN type IN ('entitlementGranted', 'entitlementRevoked')
    THEN grant_id IS NOT NULL AND invoice_id IS NULL AND sequence IS NULL
    ELSE invoice_id IS NOT NULL AND sequence IS NOT NULL AND grant_id IS NULL
  END
);
CREATE UNIQUE INDEX outbox_events_grant_once ON outbox_events (grant_id, type) WHERE grant_id IS NOT NULL;
`,
}
