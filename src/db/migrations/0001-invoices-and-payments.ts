/**
 * Invoices, the payments proven for them, and the log of their transitions. The rules that must
 * hold whatever the code does are constraints here: a txid settles at most one invoice, ever (its
 * primary key); a memo names one invoice; an invoice is confirmed at most once, and only with the
 * payment of its own that settled it. Amounts are BIGINT satoshi, times BIGINT milliseconds of the
 * service's clock.
 */
import type { Migration } from '../migrate.js'

export const INVOICES_AND_PAYMENTS: Migration = {
  version: 1,
  name: 'invoices-and-payments',
  sql: `
CREATE TABLE invoices (
  id text PRIMARY KEY,
  amount_sat bigint NOT NULL CHECK (amount_sat > 0),
  receiver text NOT NULL,
  memo text NOT NULL,
  metadata jsonb NOT NULL DEFAULT '{}',
  state text NOT NULL CHECK (state IN ('pending', 'seen', 'confirmed', 'expired')),
  confirmations_required integer NOT NULL CHECK (confirmations_required >= 1),
  expires_at_ms bigint NOT NULL,
  created_at_ms bigint NOT NULL,
  updated_at_ms bigint NOT NULL,
  version integer NOT NULL DEFAULT 0 CHECK (version >= 0),
  settling_txid text,
  confirmations integer NOT NULL DEFAULT 0 CHECK (confirmations >= 0),
  underpaid_sat bigint NOT NULL DEFAULT 0 CHECK (underpaid_sat >= 0),
  overpaid_sat bigint NOT NULL DEFAULT 0 CHECK (overpaid_sat >= 0),
  paid_late_sat bigint NOT NULL DEFAULT 0 CHECK (paid_late_sat >= 0),
  CONSTRAINT invoices_memo_key UNIQUE (memo),
  CONSTRAINT invoices_settled_when_confirmed CHECK (state <> 'confirmed' OR settling_txid IS NOT NULL),
  CONSTRAINT invoices_settling_only_when_paid CHECK (settling_txid IS NOT NULL OR state IN ('pending', 'expired'))
);
CREATE INDEX invoices_open_by_expiry ON invoices (expires_at_ms) WHERE state = 'pending';
CREATE INDEX invoices_by_receiver ON invoices (receiver, state);

CREATE TABLE payments (
  txid text PRIMARY KEY CHECK (txid ~ '^[0-9a-f]{64}$'),
  invoice_id text NOT NULL REFERENCES invoices (id),
  received_sat bigint NOT NULL CHECK (received_sat > 0),
  state text NOT NULL CHECK (state IN ('mempool', 'in_block', 'dropped')),
  height integer,
  block_hash text,
  confirmations integer NOT NULL DEFAULT 0 CHECK (confirmations >= 0),
  first_seen_at_ms bigint NOT NULL,
  checked_at_ms bigint NOT NULL,
  CONSTRAINT payments_txid_invoice_key UNIQUE (txid, invoice_id),
  CONSTRAINT payments_block_when_in_block CHECK ((state = 'in_block') = (height IS NOT NULL) AND (height IS NULL) = (block_hash IS NULL))
);
CREATE INDEX payments_by_invoice ON payments (invoice_id);

-- The settling payment is one of the invoice's own.
ALTER TABLE invoices ADD CONSTRAINT invoices_settling_payment_fkey
  FOREIGN KEY (settling_txid, id) REFERENCES payments (txid, invoice_id);

CREATE TABLE payment_events (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  invoice_id text NOT NULL REFERENCES invoices (id),
  sequence integer NOT NULL CHECK (sequence >= 1),
  type text NOT NULL CHECK (type IN ('pending', 'seen', 'confirmed', 'expired', 'underpaid', 'overpaid', 'paidLate')),
  payload jsonb NOT NULL,
  created_at_ms bigint NOT NULL,
  CONSTRAINT payment_events_sequence_key UNIQUE (invoice_id, sequence)
);
CREATE UNIQUE INDEX payment_events_confirmed_once ON payment_events (invoice_id) WHERE type = 'confirmed';
`,
}
