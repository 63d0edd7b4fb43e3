/**
 * The payouts' tables (migration 13). A payout is created in one transaction that holds the
 * wallet's row (`payout_wallet`, `FOR UPDATE`): instances choose outputs one after another, each
 * seeing the outputs the others hold for their payouts (`payout_inputs`). In that transaction the
 * transaction is built and signed (by `sign`, given the outputs free now) and stored with the
 * outputs it spends; the primary key of `payout_inputs` (txid, vout) refuses an output held twice
 * even if the lock were bypassed. A refund also holds its invoice's row, so that two refunds of one
 * invoice count each other's amounts.
 *
 * Every later step moves the state only forward, guarded in its WHERE clause (`pending` →
 * `broadcast` → `confirmed`, either open state → `failed`), and writes a `payout_log` row with it.
 */
import { randomBytes } from 'node:crypto'
import type { Coin } from 'pocketnet-client'
import type { Database, Sql } from '../db/database.js'
import { safeInteger, sqlState, UNIQUE_VIOLATION, violatedConstraint } from '../db/database.js'
import { writePayoutEvent } from './payout-events.js'
import type { FailureReason, Payout, PayoutActor, PayoutKind, PayoutState } from './payout.js'

export const DAY_MS = 86_400_000

/** A wallet output the node listed as confirmed and unspent (pocketnet-client's `Coin`). */
export type WalletCoin = Coin

/** What was asked, checked (payout-rules.ts). */
export interface PayoutTerms {
  kind: PayoutKind
  invoiceId?: string | undefined
  to: string
  amountSat: number
  memo?: string | undefined
  requestedBy: Exclude<PayoutActor, 'service'>
}

/** A transaction signed for a payout: what `sign` returns. */
export interface SignedPayout {
  hex: string
  txid: string
  feeSat: number
  spent: WalletCoin[]
}

/** What a refund may still return of its invoice's payment, read under the invoice's lock. */
export interface RefundRoom {
  paidSat: number
  refundedSat: number
  refunds: number
}

export interface CreateOptions {
  wallet: string
  terms: PayoutTerms
  /** The caller's key; undefined for a refund without one (the store names it `refund:<invoice>:<n>`). */
  idempotencyKey: string | undefined
  /** The wallet's outputs, as the node listed them just before. */
  coins: WalletCoin[]
  /** Checks under the locks (the day's total, a refund's room); throws a PayoutError to refuse. */
  admit: (context: { paidTodaySat: number, refund: RefundRoom | undefined, terms: PayoutTerms }) => PayoutTerms
  /** Builds and signs the transaction from the outputs free now; throws to refuse (funds). */
  sign: (free: WalletCoin[], terms: PayoutTerms) => SignedPayout
}

/** A payout created, or the one its key named already. */
export type Created = { created: true, payout: Payout } | { created: false, payout: Payout }

interface PayoutRow {
  id: string
  idempotency_key: string
  kind: PayoutKind
  invoice_id: string | null
  to_address: string
  amount_sat: unknown
  fee_sat: unknown
  memo: string | null
  state: PayoutState
  reason: FailureReason | null
  txid: string
  raw_tx: string
  height: number | null
  block_hash: string | null
  confirmations: number
  broadcasts: number
  requested_by: 'app' | 'admin'
  created_at_ms: unknown
  updated_at_ms: unknown
  broadcast_at_ms: unknown
  confirmed_at_ms: unknown
  inputs: string[]
}

const COLUMNS = 'id, idempotency_key, kind, invoice_id, to_address, amount_sat, fee_sat, memo, state, reason, txid, raw_tx, height, block_hash, confirmations, broadcasts, requested_by, created_at_ms, updated_at_ms, broadcast_at_ms, confirmed_at_ms, ARRAY(SELECT i.txid || \':\' || i.vout FROM payout_inputs i WHERE i.payout_id = payouts.id ORDER BY i.txid, i.vout) AS inputs'

function payoutOf (row: PayoutRow): Payout {
  const optional = (value: unknown, column: string): number | undefined => value === null ? undefined : safeInteger(value, column)
  return {
    id: row.id,
    idempotencyKey: row.idempotency_key,
    kind: row.kind,
    invoiceId: row.invoice_id ?? undefined,
    to: row.to_address,
    amountSat: safeInteger(row.amount_sat, 'amount_sat'),
    feeSat: safeInteger(row.fee_sat, 'fee_sat'),
    memo: row.memo ?? undefined,
    state: row.state,
    reason: row.reason ?? undefined,
    txid: row.txid,
    rawTx: row.raw_tx,
    height: row.height ?? undefined,
    blockHash: row.block_hash ?? undefined,
    confirmations: row.confirmations,
    broadcasts: row.broadcasts,
    requestedBy: row.requested_by,
    createdAtMs: safeInteger(row.created_at_ms, 'created_at_ms'),
    updatedAtMs: safeInteger(row.updated_at_ms, 'updated_at_ms'),
    broadcastAtMs: optional(row.broadcast_at_ms, 'broadcast_at_ms'),
    confirmedAtMs: optional(row.confirmed_at_ms, 'confirmed_at_ms'),
    inputs: row.inputs,
  }
}

const newPayoutId = (): string => `po_${randomBytes(16).toString('base64url')}`

export class PayoutStore {
  /** @param consumers the outbox consumers told of each transition (payout-events.ts): the webhook sender's, when it runs */
  constructor (readonly db: Database, readonly now: () => number, readonly consumers: readonly string[] = []) {}

  async byId (id: string): Promise<Payout | undefined> {
    const { rows } = await this.db.query<PayoutRow>(`SELECT ${COLUMNS} FROM payouts WHERE id = $1`, [id])
    return rows[0] === undefined ? undefined : payoutOf(rows[0])
  }

  async byKey (key: string): Promise<Payout | undefined> {
    const { rows } = await this.db.query<PayoutRow>(`SELECT ${COLUMNS} FROM payouts WHERE idempotency_key = $1`, [key])
    return rows[0] === undefined ? undefined : payoutOf(rows[0])
  }

  /** A refund's invoice: its state and the payment that settled it (undefined: no such invoice). */
  async refundable (invoiceId: string): Promise<{ state: string, settlingTxid: string | undefined } | undefined> {
    const { rows } = await this.db.query<{ state: string, settling_txid: string | null }>('SELECT state, settling_txid FROM invoices WHERE id = $1', [invoiceId])
    return rows[0] === undefined ? undefined : { state: rows[0].state, settlingTxid: rows[0].settling_txid ?? undefined }
  }

  /**
   * Creates the payout, or answers the one `idempotencyKey` names already (whatever its terms:
   * the caller compares). The transaction is signed inside, from the outputs no open payout holds.
   */
  async create (options: CreateOptions): Promise<Created> {
    const { wallet, terms } = options
    try {
      return await this.db.transaction(async sql => {
        await sql.query('INSERT INTO payout_wallet (address) VALUES ($1) ON CONFLICT DO NOTHING', [wallet])
        await sql.query('SELECT address FROM payout_wallet WHERE address = $1 FOR UPDATE', [wallet])
        if (options.idempotencyKey !== undefined) {
          const { rows } = await sql.query<PayoutRow>(`SELECT ${COLUMNS} FROM payouts WHERE idempotency_key = $1`, [options.idempotencyKey])
          if (rows[0] !== undefined) return { created: false, payout: payoutOf(rows[0]) }
        }
        const refund = terms.invoiceId === undefined ? undefined : await this.#refundRoom(sql, terms.invoiceId)
        const at = this.now()
        const day = Math.floor(at / DAY_MS)
        const paid = await sql.query<{ total: unknown }>("SELECT COALESCE(SUM(amount_sat), 0)::bigint AS total FROM payouts WHERE day = $1 AND state <> 'failed'", [day])
        const admitted = options.admit({ paidTodaySat: safeInteger(paid.rows[0]?.total ?? 0, 'total'), refund, terms })
        const held = await sql.query<{ txid: string, vout: number }>(
          "SELECT i.txid, i.vout FROM payout_inputs i JOIN payouts p ON p.id = i.payout_id WHERE p.state IN ('pending', 'broadcast')")
        const taken = new Set(held.rows.map(row => `${row.txid}:${row.vout}`))
        const signed = options.sign(options.coins.filter(coin => !taken.has(`${coin.txid}:${coin.vout}`)), admitted)
        const id = newPayoutId()
        const key = options.idempotencyKey ?? `refund:${admitted.invoiceId as string}:${(refund?.refunds ?? 0) + 1}`
        await sql.query(
          `INSERT INTO payouts (id, idempotency_key, kind, invoice_id, to_address, amount_sat, fee_sat, memo, state, txid, raw_tx, requested_by, day, created_at_ms, updated_at_ms)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', $9, $10, $11, $12, $13, $13)`,
          [id, key, admitted.kind, admitted.invoiceId ?? null, admitted.to, admitted.amountSat, signed.feeSat, admitted.memo ?? null, signed.txid, signed.hex, admitted.requestedBy, day, at])
        await sql.query(
          `INSERT INTO payout_inputs (txid, vout, payout_id, amount_sat)
           SELECT txid, vout, $1, amount FROM UNNEST($2::text[], $3::int[], $4::bigint[]) AS spent (txid, vout, amount)`,
          [id, signed.spent.map(coin => coin.txid), signed.spent.map(coin => coin.vout), signed.spent.map(coin => coin.amountSat)])
        await this.#log(sql, id, 'pending', admitted.requestedBy, { to: admitted.to, amountSat: admitted.amountSat, feeSat: signed.feeSat, txid: signed.txid, ...(admitted.invoiceId === undefined ? {} : { invoiceId: admitted.invoiceId }) }, at)
        const { rows } = await sql.query<PayoutRow>(`SELECT ${COLUMNS} FROM payouts WHERE id = $1`, [id])
        const payout = payoutOf(rows[0] as PayoutRow)
        await writePayoutEvent(sql, payout, this.consumers, at)
        return { created: true, payout }
      })
    } catch (err) {
      // Another instance created this key between our read and our insert (without the wallet's lock: never, but the key is the guard).
      if (sqlState(err) === UNIQUE_VIOLATION && violatedConstraint(err) === 'payouts_idempotency_key_key' && options.idempotencyKey !== undefined) {
        const existing = await this.byKey(options.idempotencyKey)
        if (existing !== undefined) return { created: false, payout: existing }
      }
      throw err
    }
  }

  async #refundRoom (sql: Sql, invoiceId: string): Promise<RefundRoom> {
    const invoice = await sql.query<{ received_sat: unknown }>(
      `SELECT p.received_sat FROM invoices i JOIN payments p ON p.txid = i.settling_txid
        WHERE i.id = $1 AND i.state = 'confirmed' FOR UPDATE OF i`, [invoiceId])
    const paidSat = invoice.rows[0] === undefined ? 0 : safeInteger(invoice.rows[0].received_sat, 'received_sat')
    const { rows } = await sql.query<{ total: unknown, refunds: unknown }>(
      "SELECT COALESCE(SUM(amount_sat) FILTER (WHERE state <> 'failed'), 0)::bigint AS total, COUNT(*) AS refunds FROM payouts WHERE invoice_id = $1", [invoiceId])
    return { paidSat, refundedSat: safeInteger(rows[0]?.total ?? 0, 'total'), refunds: safeInteger(rows[0]?.refunds ?? 0, 'refunds') }
  }

  /** Payouts still open, oldest first, but those waiting out a backoff after a broadcast not taken. */
  async due (limit: number): Promise<Payout[]> {
    const { rows } = await this.db.query<PayoutRow>(
      `SELECT ${COLUMNS} FROM payouts WHERE state IN ('pending', 'broadcast') AND next_check_at_ms <= $1 ORDER BY created_at_ms, id LIMIT $2`, [this.now(), limit])
    return rows.map(payoutOf)
  }

  /** The payouts not final yet, by state, and when the oldest of them was created (undefined: none): for the metrics. */
  async openTotals (): Promise<{ pending: number, broadcast: number, oldestAtMs: number | undefined }> {
    const { rows } = await this.db.query<{ pending: unknown, broadcast: unknown, oldest: unknown }>(
      `SELECT COUNT(*) FILTER (WHERE state = 'pending') AS pending, COUNT(*) FILTER (WHERE state = 'broadcast') AS broadcast, MIN(created_at_ms) AS oldest
         FROM payouts WHERE state IN ('pending', 'broadcast')`)
    const oldest = rows[0]?.oldest
    return { pending: safeInteger(rows[0]?.pending ?? 0, 'pending'), broadcast: safeInteger(rows[0]?.broadcast ?? 0, 'broadcast'), oldestAtMs: oldest === null || oldest === undefined ? undefined : safeInteger(oldest, 'oldest') }
  }

  /** A broadcast that a node took (or had already): `pending` → `broadcast`. False when it had moved on. */
  async accepted (id: string): Promise<boolean> {
    return await this.#move(id, ['pending'], 'broadcast', 'broadcasts = broadcasts + 1, broadcast_at_ms = $3, last_error = NULL, unseen_since_height = NULL, next_check_at_ms = 0', {})
  }

  /** A broadcast (the first or a later one) the node did not take, or could not be asked: tried again at `retryAtMs`. */
  async notAccepted (id: string, error: string, retryAtMs: number): Promise<void> {
    await this.db.query('UPDATE payouts SET broadcasts = broadcasts + 1, last_error = $2, next_check_at_ms = $3, updated_at_ms = $4 WHERE id = $1', [id, error, retryAtMs, this.now()])
  }

  /** The transaction in a block not yet deep enough (or out of any: `block` undefined); checked again at the next check. */
  async inBlock (id: string, block: { height: number, blockHash: string, confirmations: number } | undefined): Promise<void> {
    await this.db.query(
      `UPDATE payouts SET height = $2, block_hash = $3, confirmations = $4, unseen_since_height = NULL, last_error = NULL, next_check_at_ms = 0, updated_at_ms = $5
        WHERE id = $1 AND state = 'broadcast'`,
      [id, block?.height ?? null, block?.blockHash ?? null, block?.confirmations ?? 0, this.now()])
  }

  /**
   * No node has the transaction, and an output it spends is no longer unspent: another
   * transaction spent it. Answers the tip at which that was first seen (kept while it stays so),
   * so that the caller fails the payout once that spend is buried.
   */
  async unseen (id: string, tipHeight: number): Promise<number> {
    const { rows } = await this.db.query<{ unseen_since_height: number }>(
      `UPDATE payouts SET unseen_since_height = COALESCE(unseen_since_height, $2), height = NULL, block_hash = NULL, confirmations = 0, next_check_at_ms = 0, updated_at_ms = $3
        WHERE id = $1 AND state IN ('pending', 'broadcast') RETURNING unseen_since_height`, [id, tipHeight, this.now()])
    return rows[0]?.unseen_since_height ?? tipHeight
  }

  /** Deep enough, as the nodes asked agree: final. */
  async confirmed (id: string, block: { height: number, blockHash: string, confirmations: number }): Promise<boolean> {
    return await this.#move(id, ['broadcast'], 'confirmed', 'height = $4, block_hash = $5, confirmations = $6, confirmed_at_ms = $3', { height: block.height, blockHash: block.blockHash }, [block.height, block.blockHash, block.confirmations])
  }

  /** It can never confirm: final, and its outputs are given back. */
  async failed (id: string, reason: FailureReason, detail: Record<string, unknown>): Promise<boolean> {
    return await this.db.transaction(async sql => {
      const moved = await this.#move(id, ['pending', 'broadcast'], 'failed', 'reason = $4', { reason, ...detail }, [reason], sql)
      if (moved) await sql.query('DELETE FROM payout_inputs WHERE payout_id = $1', [id])
      return moved
    })
  }

  /** The audit log of a payout, oldest first. */
  async log (id: string): Promise<Array<{ state: PayoutState, actor: PayoutActor, detail: Record<string, unknown>, atMs: number }>> {
    const { rows } = await this.db.query<{ state: PayoutState, actor: PayoutActor, detail: Record<string, unknown>, at_ms: unknown }>('SELECT state, actor, detail, at_ms FROM payout_log WHERE payout_id = $1 ORDER BY id', [id])
    return rows.map(row => ({ state: row.state, actor: row.actor, detail: row.detail, atMs: safeInteger(row.at_ms, 'at_ms') }))
  }

  /**
   * Moves `id` from one of `from` to `to` with `set` (parameters from $4, after id, to and the
   * time), and logs it and tells it (its outbox event) in the same transaction; false when it was
   * in none of `from` (another instance moved it first).
   */
  async #move (id: string, from: PayoutState[], to: PayoutState, set: string, detail: Record<string, unknown>, params: unknown[] = [], sql?: Sql): Promise<boolean> {
    if (sql === undefined) return await this.db.transaction(async inner => await this.#move(id, from, to, set, detail, params, inner))
    const at = this.now()
    const { rows } = await sql.query<PayoutRow>(
      `UPDATE payouts SET state = $2, updated_at_ms = $3, ${set} WHERE id = $1 AND state = ANY($${4 + params.length}::text[]) RETURNING ${COLUMNS}`,
      [id, to, at, ...params, from])
    if (rows[0] === undefined) return false
    await this.#log(sql, id, to, 'service', detail, at)
    await writePayoutEvent(sql, payoutOf(rows[0]), this.consumers, at)
    return true
  }

  async #log (sql: Sql, id: string, state: PayoutState, actor: PayoutActor, detail: Record<string, unknown>, at: number): Promise<void> {
    await sql.query('INSERT INTO payout_log (payout_id, state, actor, detail, at_ms) VALUES ($1, $2, $3, $4, $5)', [id, state, actor, JSON.stringify(detail), at])
  }
}
