/**
 * The invoices and the payments proven for them, in the database: creating invoices, recording
 * what the chain shows about a transaction, expiring what was not paid in time. State is decided
 * only from chain data (`recordObservation`) and the clock, never from what a client says. Every
 * change is one transaction: the invoice row locked, the payment recorded under its unique txid,
 * the new standing and its events written together, so that two instances racing, or the same
 * observation twice, cannot settle anything twice. No HTTP here: routes and the chain watcher
 * call this. An invoice that grants (a SKU to an address: `grant`) writes its grant in the
 * transaction that confirms it, once (entitlements/entitlement-store.ts).
 */
import { isPocketnetAddress, memoByteLength, MAX_MEMO_BYTES, MAX_FLOAT_PKOIN, proveInvoicePayment, SATOSHI_PER_PKOIN, type ChainTransaction, type PaymentProof, type PocketnetNetwork } from 'pocketnet-client'
import type { Database, Sql } from '../db/database.js'
import { safeInteger } from '../db/database.js'
import { checkGrantTerms, type Grant, type GrantTerms } from '../entitlements/entitlement.js'
import { EntitlementError } from '../entitlements/entitlement-errors.js'
import { writeGrantedEvent } from '../entitlements/entitlement-events.js'
import { writeGrant } from '../entitlements/entitlement-store.js'
import type { Invoice, InvoiceEvent } from './invoice.js'
import { decideInvoice, eventsBetween, standingChanged, type PaymentFacts, type PaymentState } from './invoice-decision.js'
import { InvoiceError } from './invoice-errors.js'
import { newInvoiceId, newInvoiceMemo } from './invoice-ids.js'
import { INVOICE_COLUMNS, eventOfRow, invoiceOfRow, standingOf, type EventRow, type InvoiceRow } from './invoice-rows.js'

export const INVOICE_LIMITS = {
  /** Below 2^25 PKOIN, so that the host's PKOIN number for it is exact. */
  maxAmountSat: MAX_FLOAT_PKOIN * SATOSHI_PER_PKOIN - 1,
  maxExpiresInS: 31_536_000,
  maxConfirmations: 1000,
  maxMetadataBytes: 8192,
} as const

/** The consumer the outbox delivers to when none are named: the app's own handlers. */
export const DEFAULT_CONSUMERS: readonly string[] = ['app']

export interface InvoiceStoreOptions {
  /** Now, in milliseconds. Default `Date.now`. */
  now?: () => number
  /** Receivers must be addresses of this network. Default: any non-empty string. */
  network?: PocketnetNetwork
  /** Who the outbox delivers each event to (`PaymentOutbox`). Default `['app']`. */
  consumers?: readonly string[]
  /**
   * Who the outbox tells of the grant a confirmation writes (an `entitlementGranted` event, in the
   * same transaction): the webhook sender, with PAYMENT_WEBHOOK_URL. Default none.
   */
  grantConsumers?: readonly string[]
  /**
   * Consumers told of an invoice's expiry only when the invoice asks it (`expiryWebhook`, on by
   * default): the webhook sender, so that anonymous tips nobody paid do not each cost a webhook.
   */
  expiryOptional?: readonly string[]
  /**
   * Consumers of `consumers` told of `confirmed` events only: the notifications of confirmed
   * invoices, which have nothing to say of the rest.
   */
  confirmedOnly?: readonly string[]
}

export interface CreateInvoiceRequest {
  /** The price, in satoshi: a positive safe integer. */
  amountSat: number
  receiver: string
  /**
   * The memo, or how to make it from the new invoice's id (the host checkout's `pay_<hash>`
   * depends on a payload holding the id). Default: a random one. 1 to 80 bytes of UTF-8.
   */
  memo?: string | ((invoiceId: string) => string)
  metadata?: Record<string, unknown>
  expiresInS: number
  confirmations: number
  /** Whether the consumers in `expiryOptional` hear of its expiry. Default true. */
  expiryWebhook?: boolean
  /** What it grants once confirmed: written in the same transaction, once (docs/entitlements.md). */
  grant?: GrantTerms
}

/** What the chain showed about one transaction, offered for one invoice. */
export interface ChainObservation {
  txid: string
  /** The node's answer (`readChainTransaction`), or null when the node does not know the txid. */
  transaction: ChainTransaction | null
  /** The chain's tip when the answer was read. */
  tipHeight: number
  /**
   * False while the answer is one node's word that other nodes have not backed yet
   * (cross-check.ts): it may move the invoice to `seen`, never to `confirmed`, so its
   * confirmations are counted at most one short of the invoice's requirement. Default true.
   */
  confirmable?: boolean
  /**
   * What `transaction` proves for this invoice at `tipHeight`, when the caller made it already
   * (the cross-check needs it first): used rather than made again. Checked against the invoice.
   */
  proof?: PaymentProof
}

/**
 * Why an observation did not count for the invoice:
 * - `UNKNOWN_TRANSACTION`: the node does not know the txid, and it was never recorded here;
 * - `MEMO_MISMATCH`: its memo is not this invoice's (or it has none);
 * - `NOT_PAID_TO_RECEIVER`: nothing in it reaches the invoice's receiver;
 * - `TXID_TAKEN`: it is already recorded for another invoice: one transaction, one invoice.
 */
export type ObservationRefusal = 'UNKNOWN_TRANSACTION' | 'MEMO_MISMATCH' | 'NOT_PAID_TO_RECEIVER' | 'TXID_TAKEN'

export interface ObservationResult {
  invoice: Invoice
  /** What the transaction proves about the invoice; absent when the node does not know it. */
  proof?: PaymentProof
  refused?: ObservationRefusal
  /** The transitions this observation caused, in order; empty when nothing changed. */
  events: InvoiceEvent[]
}

/** A recorded payment that is not final yet: what the chain watcher re-checks on each block. */
export interface OpenPayment {
  txid: string
  invoiceId: string
  state: PaymentState
  height: number | null
  blockHash: string | null
}

const TXID = /^[0-9a-f]{64}$/

function invalid (message: string): never {
  throw new InvoiceError('INVOICE_ERR_INVALID', message)
}

function checkMemo (memo: string): void {
  if (typeof memo !== 'string' || memo === '' || memoByteLength(memo) > MAX_MEMO_BYTES) invalid(`the memo must be 1 to ${MAX_MEMO_BYTES} bytes of UTF-8`)
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(memo)) invalid('the memo must not hold control characters')
}

function isPlainObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype
}

function checkRequest (request: CreateInvoiceRequest, network: PocketnetNetwork | undefined): void {
  const { amountSat, receiver, expiresInS, confirmations, metadata } = request
  if (!Number.isSafeInteger(amountSat) || amountSat < 1 || amountSat > INVOICE_LIMITS.maxAmountSat) invalid(`the amount must be a whole number of satoshi from 1 to ${INVOICE_LIMITS.maxAmountSat}`)
  if (typeof receiver !== 'string' || receiver === '') invalid('the receiver must be an address')
  if (network !== undefined && !isPocketnetAddress(receiver, network)) invalid(`the receiver is not an address of the ${network} network`)
  if (!Number.isSafeInteger(expiresInS) || expiresInS < 1 || expiresInS > INVOICE_LIMITS.maxExpiresInS) invalid(`expiresInS must be a whole number of seconds from 1 to ${INVOICE_LIMITS.maxExpiresInS}`)
  if (!Number.isSafeInteger(confirmations) || confirmations < 1 || confirmations > INVOICE_LIMITS.maxConfirmations) invalid(`confirmations must be a whole number from 1 to ${INVOICE_LIMITS.maxConfirmations}`)
  if (request.expiryWebhook !== undefined && typeof request.expiryWebhook !== 'boolean') invalid('expiryWebhook must be true or false')
  if (metadata !== undefined) {
    if (!isPlainObject(metadata)) invalid('metadata must be a plain object')
    if (Buffer.byteLength(JSON.stringify(metadata)) > INVOICE_LIMITS.maxMetadataBytes) invalid(`metadata must be at most ${INVOICE_LIMITS.maxMetadataBytes} bytes of JSON`)
  }
  if (request.grant !== undefined) {
    try {
      checkGrantTerms(request.grant, network)
    } catch (err) {
      if (err instanceof EntitlementError) invalid(`grant: ${err.message}`)
      throw err
    }
  }
}

function checkObservation (observation: ChainObservation): void {
  const { txid, transaction, tipHeight } = observation
  if (typeof txid !== 'string' || !TXID.test(txid)) throw new InvoiceError('INVOICE_ERR_OBSERVATION', 'the txid must be 64 lowercase hex digits')
  if (transaction !== null && transaction.txid !== txid) throw new InvoiceError('INVOICE_ERR_OBSERVATION', 'the transaction is not the one of the txid')
  if (!Number.isSafeInteger(tipHeight) || tipHeight < 0) throw new InvoiceError('INVOICE_ERR_OBSERVATION', 'the tip height is not a block height')
  if (observation.confirmable !== undefined && typeof observation.confirmable !== 'boolean') throw new InvoiceError('INVOICE_ERR_OBSERVATION', 'confirmable must be true or false')
}

interface PaymentRow {
  txid: string
  received_sat: unknown
  state: PaymentState
  confirmations: number
  first_seen_at_ms: unknown
}

export class InvoiceStore {
  readonly #db: Database
  readonly #now: () => number
  readonly #network: PocketnetNetwork | undefined
  readonly #consumers: readonly string[]
  readonly #grantConsumers: readonly string[]
  readonly #expiryOptional: ReadonlySet<string>
  readonly #confirmedOnly: ReadonlySet<string>

  constructor (db: Database, options: InvoiceStoreOptions = {}) {
    this.#db = db
    this.#now = options.now ?? Date.now
    this.#network = options.network
    this.#consumers = options.consumers ?? DEFAULT_CONSUMERS
    this.#grantConsumers = options.grantConsumers ?? []
    this.#expiryOptional = new Set(options.expiryOptional ?? [])
    this.#confirmedOnly = new Set(options.confirmedOnly ?? [])
    if (this.#consumers.some(consumer => typeof consumer !== 'string' || consumer === '')) throw new TypeError('option consumers must be a list of non-empty names')
    if (this.#grantConsumers.some(consumer => typeof consumer !== 'string' || consumer === '')) throw new TypeError('option grantConsumers must be a list of non-empty names')
  }

  /**
   * A new `pending` invoice. One INSERT; the id and a generated memo are random, and a clash with
   * an existing one (which the database refuses) is retried with new ones.
   * @throws InvoiceError `INVOICE_ERR_INVALID` for a request out of its rules ({@link INVOICE_LIMITS});
   *   `INVOICE_ERR_MEMO_TAKEN` for a memo given as text that another invoice has.
   */
  async createInvoice (request: CreateInvoiceRequest): Promise<Invoice> {
    checkRequest(request, this.#network)
    for (let attempt = 0; attempt < 5; attempt++) {
      const id = newInvoiceId()
      const memo = typeof request.memo === 'function' ? request.memo(id) : (request.memo ?? newInvoiceMemo())
      checkMemo(memo)
      const now = this.#now()
      const { rows } = await this.#db.query<InvoiceRow>(
        `INSERT INTO invoices (id, amount_sat, receiver, memo, metadata, state, confirmations_required, expires_at_ms, created_at_ms, updated_at_ms, expiry_webhook,
           grant_sku, grant_to, grant_duration_s)
         VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7, $8, $8, $9, $10, $11, $12)
         ON CONFLICT DO NOTHING
         RETURNING ${INVOICE_COLUMNS}`,
        [id, request.amountSat, request.receiver, memo, request.metadata ?? {}, request.confirmations, now + request.expiresInS * 1000, now, request.expiryWebhook ?? true,
          request.grant?.sku ?? null, request.grant?.to ?? null, request.grant?.durationS ?? null]
      )
      if (rows[0] !== undefined) return invoiceOfRow(rows[0])
      if (typeof request.memo === 'string') {
        const taken = await this.#db.query('SELECT 1 FROM invoices WHERE memo = $1', [memo])
        if (taken.rows.length > 0) throw new InvoiceError('INVOICE_ERR_MEMO_TAKEN', 'another invoice has this memo')
      }
    }
    throw new InvoiceError('INVOICE_ERR_MEMO_TAKEN', 'no free id and memo after 5 tries')
  }

  /**
   * The invoice, or undefined. One still `pending` past its expiry is expired first (with its
   * event), so that what a client reads and what the app is told agree.
   */
  async getInvoice (id: string): Promise<Invoice | undefined> {
    return (await this.readInvoice(id))?.invoice
  }

  /** {@link getInvoice}, with the events the read wrote (its expiry), for the caller to announce. */
  async readInvoice (id: string): Promise<{ invoice: Invoice, events: InvoiceEvent[] } | undefined> {
    const { rows } = await this.#db.query<InvoiceRow>(`SELECT ${INVOICE_COLUMNS} FROM invoices WHERE id = $1`, [id])
    const invoice = rows[0] === undefined ? undefined : invoiceOfRow(rows[0])
    if (invoice === undefined) return undefined
    if (invoice.state !== 'pending' || this.#now() < invoice.expiresAtMs) return { invoice, events: [] }
    return this.#db.transaction(async sql => this.#decideAndWrite(sql, await this.#lock(sql, id)))
  }

  /**
   * The newest pending invoice that grants `terms` exactly (to, SKU, duration) at `amountSat` and
   * is open until at least `openUntilMs`: a purchase asked again while one is open.
   */
  async findOpenGrantInvoice (terms: GrantTerms, amountSat: number, openUntilMs: number): Promise<Invoice | undefined> {
    const { rows } = await this.#db.query<InvoiceRow>(
      `SELECT ${INVOICE_COLUMNS} FROM invoices
       WHERE state = 'pending' AND grant_to = $1 AND grant_sku = $2 AND grant_duration_s IS NOT DISTINCT FROM $3
         AND amount_sat = $4 AND expires_at_ms >= $5
       ORDER BY expires_at_ms DESC LIMIT 1`,
      [terms.to, terms.sku, terms.durationS ?? null, amountSat, openUntilMs]
    )
    return rows[0] === undefined ? undefined : invoiceOfRow(rows[0])
  }

  /** The invoice whose memo this is: how a payment found on chain is tied to its invoice. */
  async findInvoiceByMemo (memo: string): Promise<Invoice | undefined> {
    const { rows } = await this.#db.query<InvoiceRow>(`SELECT ${INVOICE_COLUMNS} FROM invoices WHERE memo = $1`, [memo])
    return rows[0] === undefined ? undefined : invoiceOfRow(rows[0])
  }

  /**
   * Records what the chain shows about `observation.txid` for the invoice, and moves the invoice
   * accordingly, in one transaction. The proof is made here, against the invoice's own receiver,
   * amount and memo. Idempotent: the same observation again changes nothing.
   * @throws InvoiceError `INVOICE_ERR_NOT_FOUND`, `INVOICE_ERR_OBSERVATION`.
   */
  async recordObservation (invoiceId: string, observation: ChainObservation): Promise<ObservationResult> {
    checkObservation(observation)
    return this.#db.transaction(async sql => {
      const invoice = await this.#lock(sql, invoiceId)
      const now = this.#now()
      const { txid, transaction } = observation
      if (transaction === null) {
        const dropped = await sql.query(
          `UPDATE payments SET state = 'dropped', height = NULL, block_hash = NULL, confirmations = 0, checked_at_ms = $3
           WHERE txid = $1 AND invoice_id = $2`,
          [txid, invoiceId, now]
        )
        if (dropped.rowCount === 0) return { invoice, refused: 'UNKNOWN_TRANSACTION', events: [] }
        return this.#decideAndWrite(sql, invoice)
      }
      const proof = observation.proof ?? proveInvoicePayment(transaction, { receiver: invoice.receiver, amountSat: invoice.amountSat, memo: invoice.memo }, observation.tipHeight)
      // A proof made elsewhere is of this transaction, for this invoice's amount and memo.
      if (proof.txid !== txid || proof.expectedSat !== invoice.amountSat || proof.memoMatches !== (proof.memo === invoice.memo)) {
        throw new InvoiceError('INVOICE_ERR_OBSERVATION', 'the proof given is not of this transaction for this invoice')
      }
      if (!proof.memoMatches) return { invoice, proof, refused: 'MEMO_MISMATCH', events: [] }
      if (proof.receivedSat === 0) return { invoice, proof, refused: 'NOT_PAID_TO_RECEIVER', events: [] }
      // Held one short until other nodes back it; a confirmed invoice has nothing left to hold back.
      const holdBack = observation.confirmable === false && invoice.state !== 'confirmed'
      const confirmations = holdBack ? Math.min(proof.confirmations, invoice.confirmationsRequired - 1) : proof.confirmations
      const position = [proof.inBlock ? 'in_block' : 'mempool', proof.height ?? null, proof.blockHash ?? null, confirmations]
      // The txid is the primary key: of two invoices racing for one transaction, the second waits
      // for the first to commit, inserts nothing, and finds the payment is not its own.
      const inserted = await sql.query(
        `INSERT INTO payments (txid, invoice_id, received_sat, state, height, block_hash, confirmations, first_seen_at_ms, checked_at_ms)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)
         ON CONFLICT (txid) DO NOTHING`,
        [txid, invoiceId, proof.receivedSat, ...position, now]
      )
      if (inserted.rowCount === 0) {
        // A payment a re-org took out of its block is dropped, even though the node still answers
        // it without a block: on Pocketnet 0.22.7 it neither returns to the mempool nor can be
        // sent again (docs/pocketnet-node.md). Only a block holding it again brings it back.
        const updated = await sql.query(
          `UPDATE payments SET state = CASE WHEN $3 = 'mempool' AND payments.state <> 'mempool' THEN 'dropped' ELSE $3 END,
             height = $4, block_hash = $5, confirmations = $6, checked_at_ms = $7
           WHERE txid = $1 AND invoice_id = $2`,
          [txid, invoiceId, ...position, now]
        )
        if (updated.rowCount === 0) return { invoice, proof, refused: 'TXID_TAKEN', events: [] }
      }
      return { ...(await this.#decideAndWrite(sql, invoice)), proof }
    })
  }

  /**
   * Expires `pending` invoices past their expiry, at most `limit` of them (the oldest first), and
   * returns their events. Instances sweeping at once skip each other's rows.
   */
  async expireDue (limit = 500): Promise<InvoiceEvent[]> {
    return this.#db.transaction(async sql => {
      const { rows } = await sql.query<InvoiceRow>(
        `SELECT ${INVOICE_COLUMNS} FROM invoices WHERE state = 'pending' AND expires_at_ms <= $1
         ORDER BY expires_at_ms LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [this.#now(), limit]
      )
      const events: InvoiceEvent[] = []
      for (const row of rows) events.push(...(await this.#decideAndWrite(sql, invoiceOfRow(row))).events)
      return events
    })
  }

  /**
   * Deletes invoices that expired unpaid more than `retentionMs` ago, with their events, outbox
   * rows and webhook attempts, at most `limit` of them (the oldest first); returns how many. An
   * invoice any payment was recorded for is a record of money and is kept.
   */
  async pruneExpired (retentionMs: number, limit = 500): Promise<number> {
    return this.#db.transaction(async sql => {
      const { rows } = await sql.query<{ id: string }>(
        `SELECT id FROM invoices i WHERE state = 'expired' AND expires_at_ms <= $1
           AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.invoice_id = i.id)
         ORDER BY expires_at_ms LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [this.#now() - retentionMs, limit]
      )
      const ids = rows.map(row => row.id)
      if (ids.length === 0) return 0
      const events = 'SELECT id FROM outbox_events WHERE invoice_id = ANY($1::text[])'
      await sql.query(`DELETE FROM webhook_deliveries WHERE event_id IN (${events})`, [ids])
      await sql.query(`DELETE FROM outbox WHERE event_id IN (${events})`, [ids])
      await sql.query('DELETE FROM outbox_events WHERE invoice_id = ANY($1::text[])', [ids])
      await sql.query('DELETE FROM invoices WHERE id = ANY($1::text[])', [ids])
      return ids.length
    })
  }

  /** Invoices `pending` and not past their expiry: what anonymous invoices are capped by. */
  async countOpen (): Promise<number> {
    const { rows } = await this.#db.query<{ count: number }>("SELECT count(*)::integer AS count FROM invoices WHERE state = 'pending' AND expires_at_ms > $1", [this.#now()])
    return rows[0]?.count ?? 0
  }

  /**
   * Recorded payments of invoices still `pending` or `seen`: the transactions to look at again on
   * each new block (their confirmations grow; a re-org may take them out). Dropped ones too, until
   * their invoice is final: a block a re-org took away may rejoin the chain at the same height and
   * hash, which no node announces again.
   */
  async listOpenPayments (limit = 1000): Promise<OpenPayment[]> {
    const { rows } = await this.#db.query<{ txid: string, invoice_id: string, state: PaymentState, height: number | null, block_hash: string | null }>(
      `SELECT p.txid, p.invoice_id, p.state, p.height, p.block_hash FROM payments p JOIN invoices i ON i.id = p.invoice_id
       WHERE i.state IN ('pending', 'seen') ORDER BY p.first_seen_at_ms, p.txid LIMIT $1`,
      [limit]
    )
    return rows.map(row => ({ txid: row.txid, invoiceId: row.invoice_id, state: row.state, height: row.height, blockHash: row.block_hash }))
  }

  /** The receivers of invoices still `pending` or `seen`: the addresses whose incoming transactions matter. */
  async listOpenReceivers (): Promise<string[]> {
    const { rows } = await this.#db.query<{ receiver: string }>("SELECT DISTINCT receiver FROM invoices WHERE state IN ('pending', 'seen') ORDER BY receiver")
    return rows.map(row => row.receiver)
  }

  /** Every event of the invoice, in order. */
  async listEvents (invoiceId: string): Promise<InvoiceEvent[]> {
    const { rows } = await this.#db.query<EventRow>('SELECT id, invoice_id, sequence, type, payload, created_at_ms FROM outbox_events WHERE invoice_id = $1 ORDER BY sequence', [invoiceId])
    return rows.map(eventOfRow)
  }

  async #announcesExpiry (sql: Sql, invoiceId: string): Promise<boolean> {
    const { rows } = await sql.query<{ expiry_webhook: boolean }>('SELECT expiry_webhook FROM invoices WHERE id = $1', [invoiceId])
    return rows[0]?.expiry_webhook !== false
  }

  async #lock (sql: Sql, invoiceId: string): Promise<Invoice> {
    const { rows } = await sql.query<InvoiceRow>(`SELECT ${INVOICE_COLUMNS} FROM invoices WHERE id = $1 FOR UPDATE`, [invoiceId])
    if (rows[0] === undefined) throw new InvoiceError('INVOICE_ERR_NOT_FOUND', 'no invoice has this id')
    return invoiceOfRow(rows[0])
  }

  /**
   * Decides the locked invoice's standing from its payments and the clock and, when it changed,
   * writes it with its events and their outbox rows, in the caller's transaction; on its
   * confirmation, the grant it carries too, which its `confirmed` event tells, and the grant's own
   * event for the consumers of grants.
   */
  async #decideAndWrite (sql: Sql, invoice: Invoice): Promise<{ invoice: Invoice, events: InvoiceEvent[] }> {
    const now = this.#now()
    const { rows } = await sql.query<PaymentRow>('SELECT txid, received_sat, state, confirmations, first_seen_at_ms FROM payments WHERE invoice_id = $1', [invoice.id])
    const payments: PaymentFacts[] = rows.map(row => ({
      txid: row.txid,
      receivedSat: safeInteger(row.received_sat, 'received_sat'),
      state: row.state,
      confirmations: row.confirmations,
      firstSeenAtMs: safeInteger(row.first_seen_at_ms, 'first_seen_at_ms'),
    }))
    const before = standingOf(invoice)
    const after = decideInvoice({ ...invoice, settlingTxid: invoice.txid }, payments, now)
    if (!standingChanged(before, after)) return { invoice, events: [] }
    const types = eventsBetween(before, after)
    const { rows: updated } = await sql.query<InvoiceRow>(
      `UPDATE invoices SET state = $2, settling_txid = $3, confirmations = $4, underpaid_sat = $5, overpaid_sat = $6,
         paid_late_sat = $7, version = version + $8, updated_at_ms = $9
       WHERE id = $1 RETURNING ${INVOICE_COLUMNS}`,
      [invoice.id, after.state, after.settlingTxid, after.confirmations, after.underpaidSat, after.overpaidSat, after.paidLateSat, types.length, now]
    )
    const next = invoiceOfRow(updated[0] as InvoiceRow)
    // Confirmed is final and happens once (a constraint on the events): so does the grant, whose
    // invoice id is unique among the grants besides.
    let grant: Grant | undefined
    if (after.state === 'confirmed' && invoice.state !== 'confirmed' && next.grant !== null) {
      const { sku, to, durationS } = next.grant
      grant = await writeGrant(sql, { address: to, sku, invoiceId: next.id, ...(durationS === undefined ? {} : { durationS }) }, now)
    }
    const events: InvoiceEvent[] = []
    const quietExpiry = types.includes('expired') && this.#expiryOptional.size > 0 && !(await this.#announcesExpiry(sql, invoice.id))
    for (const [index, type] of types.entries()) {
      const payload = { previousState: invoice.state, invoice: next, ...(type === 'confirmed' && grant !== undefined ? { grant } : {}) }
      const { rows: written } = await sql.query<EventRow>(
        `INSERT INTO outbox_events (invoice_id, sequence, type, payload, created_at_ms) VALUES ($1, $2, $3, $4, $5)
         RETURNING id, invoice_id, sequence, type, payload, created_at_ms`,
        [invoice.id, invoice.version + index + 1, type, payload, now]
      )
      const event = eventOfRow(written[0] as EventRow)
      for (const consumer of this.#consumers) {
        if (type === 'expired' && quietExpiry && this.#expiryOptional.has(consumer)) continue
        if (type !== 'confirmed' && this.#confirmedOnly.has(consumer)) continue
        await sql.query('INSERT INTO outbox (event_id, consumer) VALUES ($1, $2)', [event.id, consumer])
      }
      events.push(event)
    }
    // Told after the confirmation that made it, in the same commit.
    if (grant !== undefined) await writeGrantedEvent(sql, grant, this.#grantConsumers, now)
    return { invoice: next, events }
  }
}
