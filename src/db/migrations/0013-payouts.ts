/**
 * Payouts and refunds from the app's own wallet (docs/payouts.md). What must hold whatever the
 * code does is a constraint here:
 *
 * - `payouts`: one row per payout, its signed transaction stored with it (`raw_tx`, `txid`) in the
 *   transaction that creates it, so that every broadcast, the first and each after a crash, sends
 *   the same bytes. An idempotency key names one payout, ever; a txid one payout; a refund names
 *   its invoice, a payout none; a failed payout says why; a confirmed one its block.
 * - `payout_inputs`: the wallet's outputs each payout spends. Its primary key is the output, so
 *   two payouts (two instances) can never both spend one: the second's insert fails. A failed
 *   payout's rows are deleted, which gives its outputs back.
 * - `payout_wallet`: one row per wallet address, locked while a payout chooses its outputs, so
 *   that instances choose one after another rather than collide.
 * - `payout_log`: every transition, who asked and why: the operators' audit log.
 *
 * A payout's transitions are outbox events too (`payoutPending`, `payoutBroadcast`,
 * `payoutConfirmed`, `payoutFailed`), for the webhook: each names its payout and no invoice or
 * grant, and each payout is told each state once (a partial unique index), written in the
 * transaction that moves it.
 */
import type { Migration } from '../migrate.js'

export const PAYOUTS: Migration = {
  version: 13,
  name: 'payouts',
  sql: `
CREATE TABLE payouts (
  id text PRIMARY KEY CHECK (id ~ '^po_[A-Za-z0-9_-]{16,64}$'),
  idempotency_key text NOT NULL CHECK (idempotency_key ~ '^[A-Za-z0-9._:-]{1,128}$'),
  kind text NOT NULL CHECK (kind IN ('payout', 'refund')),
  invoice_id text REFERENCES invoices (id),
  to_address text NOT NULL CHECK (to_address <> ''),
  amount_sat bigint NOT NULL CHECK (amount_sat > 0),
  fee_sat bigint NOT NULL CHECK (fee_sat > 0),
  memo text,
  state text NOT NULL CHECK (state IN ('pending', 'broadcast', 'confirmed', 'failed')),
  reason text,
  txid text NOT NULL CHECK (txid ~ '^[0-9a-f]{64}$'),
  raw_tx text NOT NULL CHECK (raw_tx ~ '^([0-9a-f]{2})+$'),
  height integer CHECK (height >= 0),
  block_hash text CHECK (block_hash ~ '^[0-9a-f]{64}$'),
  confirmations integer NOT NULL DEFAULT 0 CHECK (confirmations >= 0),
  broadcasts integer NOT NULL DEFAULT 0 CHECK (broadcasts >= 0),
  next_check_at_ms bigint NOT NULL DEFAULT 0,
  unseen_since_height integer CHECK (unseen_since_height >= 0),
  last_error text,
  requested_by text NOT NULL CHECK (requested_by IN ('app', 'admin')),
  day bigint NOT NULL CHECK (day >= 0),
  created_at_ms bigint NOT NULL,
  updated_at_ms bigint NOT NULL,
  broadcast_at_ms bigint,
  confirmed_at_ms bigint,
  CONSTRAINT payouts_idempotency_key_key UNIQUE (idempotency_key),
  CONSTRAINT payouts_txid_key UNIQUE (txid),
  CONSTRAINT payouts_invoice_when_refund CHECK ((kind = 'refund') = (invoice_id IS NOT NULL)),
  CONSTRAINT payouts_reason_when_failed CHECK ((state = 'failed') = (reason IS NOT NULL)),
  CONSTRAINT payouts_block_when_confirmed CHECK (state <> 'confirmed' OR (height IS NOT NULL AND block_hash IS NOT NULL AND confirmed_at_ms IS NOT NULL)),
  CONSTRAINT payouts_block_together CHECK ((height IS NULL) = (block_hash IS NULL))
);
CREATE INDEX payouts_open ON payouts (next_check_at_ms) WHERE state IN ('pending', 'broadcast');
CREATE INDEX payouts_by_invoice ON payouts (invoice_id) WHERE invoice_id IS NOT NULL;
CREATE INDEX payouts_by_day ON payouts (day) WHERE state <> 'failed';

CREATE TABLE payout_inputs (
  txid text NOT NULL CHECK (txid ~ '^[0-9a-f]{64}$'),
  vout integer NOT NULL CHECK (vout >= 0),
  payout_id text NOT NULL REFERENCES payouts (id),
  amount_sat bigint NOT NULL CHECK (amount_sat > 0),
  PRIMARY KEY (txid, vout)
);
CREATE INDEX payout_inputs_by_payout ON payout_inputs (payout_id);

CREATE TABLE payout_wallet (
  address text PRIMARY KEY CHECK (address <> '')
);

CREATE TABLE payout_log (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  payout_id text NOT NULL REFERENCES payouts (id),
  state text NOT NULL CHECK (state IN ('pending', 'broadcast', 'confirmed', 'failed')),
  actor text NOT NULL CHECK (actor IN ('app', 'admin', 'service')),
  detail jsonb NOT NULL DEFAULT '{}',
  at_ms bigint NOT NULL
);
CREATE INDEX payout_log_by_payout ON payout_log (payout_id, id);

ALTER TABLE outbox_events ADD COLUMN payout_id text CONSTRAINT outbox_events_payout_id_fkey REFERENCES payouts (id);
ALTER TABLE outbox_events DROP CONSTRAINT outbox_events_type_check;
ALTER TABLE outbox_events ADD CONSTRAINT outbox_events_type_check
  CHECK (type IN ('pending', 'seen', 'confirmed', 'expired', 'underpaid', 'overpaid', 'paidLate', 'entitlementGranted', 'entitlementRevoked', 'payoutPending', 'payoutBroadcast', 'payoutConfirmed', 'payoutFailed'));
ALTER TABLE outbox_events DROP CONSTRAINT outbox_events_subject_check;
ALTER TABLE outbox_events ADD CONSTRAINT outbox_events_subject_check CHECK (
  CASE
    WHEN type IN ('entitlementGranted', 'entitlementRevoked') THEN grant_id IS NOT NULL AND invoice_id IS NULL AND sequence IS NULL AND payout_id IS NULL
    WHEN type IN ('payoutPending', 'payoutBroadcast', 'payoutConfirmed', 'payoutFailed') THEN payout_id IS NOT NULL AND invoice_id IS NULL AND sequence IS NULL AND grant_id IS NULL
    ELSE invoice_id IS NOT NULL AND sequence IS NOT NULL AND grant_id IS NULL AND payout_id IS NULL
  END
);
CREATE UNIQUE INDEX outbox_events_payout_once ON outbox_events (payout_id, type) WHERE payout_id IS NOT NULL;
`,
}
