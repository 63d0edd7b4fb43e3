/**
 * `app.payouts`: money out of the app's wallet, exactly once (docs/payouts.md). One payout's life,
 * top to bottom:
 *
 * 1. `send` / `refund`: checked (payout-rules.ts), then in one database transaction under the
 *    wallet's lock, signed from the outputs no open payout holds and stored `pending` with the
 *    outputs it spends (payout-store.ts). Nothing is on the network yet: a crash here loses nothing
 *    and sends nothing. The same idempotency key answers the same payout, whatever happened since.
 * 2. Broadcast: the stored bytes go to a node. Taken, or already known → `broadcast`. Not taken
 *    (the node unreachable, or refusing for now) → still `pending`, sent again after a backoff.
 *    A crash between the node's answer and the database's write leaves `pending`: the next check
 *    sends the same bytes, which the node already has.
 * 3. Follow, on every block and every `checkIntervalMs`: the transaction in a block with enough
 *    confirmations, as enough nodes agree → `confirmed`. In a block not yet deep → noted, followed
 *    on. Out of any block (waiting in a mempool, its block gone in a re-org, or known to no node)
 *    → the same bytes sent again: a node does not mine a disconnected block's transactions again
 *    unless they are sent again (docs/pocketnet-node.md, "The wallet side").
 * 4. Failed, only when it can never confirm: an output it spends was spent by another transaction
 *    and that has stayed so for `confirmations` blocks, or the node refused the very first
 *    broadcast for a reason that is not a conflict (nothing was ever on the network). Its outputs
 *    are given back; a new payout needs a new key. No transaction is ever rebuilt for a payout.
 *
 * The follow-up runs on one instance at a time (the `payouts` lease, plugin.ts); `send` broadcasts
 * its own payout at once on whichever instance took it. Every transition is guarded in the store,
 * so that two instances doing the same step change nothing.
 */
import { backoffDelayMs, CoalescingRun, REAL_TIMERS, type TimerHandle, type Timers } from 'pocketnet-client'
import { PayoutError } from './payout-errors.js'
import { checkAddress, checkAllowed, checkAmount, checkIdempotencyKey, checkMemo, admit, type PayoutLimits } from './payout-rules.js'
import { payoutView, type Payout, type PayoutActor, type PayoutState, type PayoutView } from './payout.js'
import type { PayoutStore, PayoutTerms, SignedPayout, WalletCoin } from './payout-store.js'
import type { BroadcastOutcome, WalletNode } from './wallet-node.js'

/** The app's hot wallet: its address and the signer of its transactions (hot-wallet.ts). */
export interface PayoutSigner {
  readonly address: string
  /** Builds and signs a transaction paying `terms` from `coins` (throws PAYOUT_ERR_INSUFFICIENT_FUNDS). */
  sign (coins: WalletCoin[], terms: PayoutTerms, feeRateSatPerKb: number, nTimeS: number): SignedPayout
}

export interface PayoutRequest {
  to: string
  amountSat: number
  memo?: string | undefined
  idempotencyKey: string
}

export interface RefundRequest {
  /** Satoshi to return; absent: all that is left of the payment. */
  amountSat?: number | undefined
  /** Names this refund; absent: `refund:<invoice>:<n>`, the invoice's n-th. */
  idempotencyKey?: string | undefined
}

/** One row of a payout's audit log. */
export interface PayoutLogEntry {
  state: PayoutState
  actor: PayoutActor
  /** ISO 8601. */
  at: string
  /** What was known then: the terms and txid at signing, a failure's reason and the node's code. */
  detail: Record<string, unknown>
}

/** A payout as `send` or `refund` left it; `created` false when its idempotency key named it already. */
export interface PayoutOutcome {
  created: boolean
  payout: PayoutView
}

export interface PayoutsLog {
  info (fields: object, message: string): void
  warn (fields: object, message: string): void
}

export interface PayoutsOptions {
  limits: PayoutLimits
  /** Blocks on a payout's transaction before it is confirmed; also how long a spend elsewhere must stand before a payout fails. */
  confirmations: number
  /** How often open payouts are checked without a block. */
  checkIntervalMs: number
  /** Milliseconds since the epoch. */
  now: () => number
  timers?: Timers
  log: PayoutsLog
  /** Whether this instance checks open payouts now (the lease); default always. */
  mayCheck?: () => boolean
}

/** What this instance did, for the metrics: payouts that reached each state, and satoshi confirmed sent. */
export interface PayoutCounts {
  reached: Record<PayoutState, number>
  confirmedSat: number
}

/** The wallet as the node last listed it. */
export interface WalletState {
  address: string
  /** Satoshi in confirmed outputs not spent in the node's mempool. */
  balanceSat: number
  /** Outputs an open payout holds are part of the balance until its transaction is in a block. */
  coins: number
}

/** Open payouts read per check: the rest wait for the next one. */
const CHECK_BATCH = 100
const RETRY = { minMs: 5_000, maxMs: 300_000, jitter: 'none' } as const
/** The wallet's balance is read from a node at most this often (the readiness probe, the metrics). */
const WALLET_READ_MS = 10_000

export class PayoutsService {
  readonly #store: Promise<PayoutStore>
  readonly #node: WalletNode
  readonly #signer: PayoutSigner
  readonly #options: PayoutsOptions
  readonly #timers: Timers
  readonly #checks: CoalescingRun
  #timer: TimerHandle | undefined
  #closed = false
  #wallet: { state: Promise<WalletState>, atMs: number } | undefined
  readonly #listeners = new Set<(payout: Payout) => void>()
  readonly counts: PayoutCounts = { reached: { pending: 0, broadcast: 0, confirmed: 0, failed: 0 }, confirmedSat: 0 }

  constructor (store: Promise<PayoutStore>, node: WalletNode, signer: PayoutSigner, options: PayoutsOptions) {
    this.#store = store
    this.#node = node
    this.#signer = signer
    this.#options = options
    this.#timers = options.timers ?? REAL_TIMERS
    this.#checks = new CoalescingRun(async () => { await this.#checkDue() }, {
      onError: err => { options.log.warn({ err: errorFields(err) }, 'Payouts: a check of open payouts failed; it runs again at the next block or interval') },
    })
  }

  /** The wallet's address. */
  get address (): string {
    return this.#signer.address
  }

  /**
   * Pays `amountSat` to `to` once per idempotency key; answers the payout as it stands after its
   * first broadcast (`created` false: the key named it already, and nothing new was signed).
   */
  async send (request: PayoutRequest, actor: Exclude<PayoutActor, 'service'> = 'app'): Promise<PayoutOutcome> {
    const limits = this.#options.limits
    const key = checkIdempotencyKey(request.idempotencyKey)
    const terms: PayoutTerms = { kind: 'payout', to: checkAddress(request.to, limits), amountSat: checkAmount(request.amountSat, limits), memo: checkMemo(request.memo), requestedBy: actor }
    checkAllowed(terms.to, limits)
    const store = await this.#store
    const earlier = await store.byKey(key)
    if (earlier !== undefined) return { created: false, payout: payoutView(sameTerms(earlier, terms)) }
    return await this.#create(key, terms)
  }

  /**
   * Returns an invoice's payment, or part of it, to the address its first input spent from
   * (partial refunds sum to at most what was paid; a refund of a fully refunded invoice is refused).
   */
  async refund (invoiceId: string, request: RefundRequest = {}, actor: Exclude<PayoutActor, 'service'> = 'app'): Promise<PayoutOutcome> {
    const limits = this.#options.limits
    const key = request.idempotencyKey === undefined ? undefined : checkIdempotencyKey(request.idempotencyKey)
    const amountSat = request.amountSat === undefined ? 0 : checkAmount(request.amountSat, limits)
    const store = await this.#store
    if (key !== undefined) {
      const earlier = await store.byKey(key)
      if (earlier !== undefined) return { created: false, payout: payoutView(earlier) }
    }
    const invoice = await store.refundable(invoiceId)
    if (invoice === undefined) throw new PayoutError('REFUND_ERR_INVOICE_NOT_FOUND', `no invoice ${invoiceId}`)
    if (invoice.state !== 'confirmed' || invoice.settlingTxid === undefined) throw new PayoutError('REFUND_ERR_NOT_CONFIRMED', `invoice ${invoiceId} is ${invoice.state}, not confirmed`)
    const payer = await this.#node.payerOf(invoice.settlingTxid)
    if (payer === undefined || checkAddressOrUndefined(payer, limits) === undefined) throw new PayoutError('REFUND_ERR_PAYER_UNKNOWN', `the payment ${invoice.settlingTxid} of invoice ${invoiceId} names no payer address of the network`)
    return await this.#create(key, { kind: 'refund', invoiceId, to: payer, amountSat, requestedBy: actor })
  }

  async get (id: string): Promise<PayoutView> {
    const payout = await (await this.#store).byId(id)
    if (payout === undefined) throw new PayoutError('PAYOUT_ERR_NOT_FOUND', `no payout ${id}`)
    return payoutView(payout)
  }

  /** The payout's audit log, oldest first: each state it reached, who moved it there, when and why. */
  async history (id: string): Promise<PayoutLogEntry[]> {
    const entries = await (await this.#store).log(id)
    if (entries.length === 0) throw new PayoutError('PAYOUT_ERR_NOT_FOUND', `no payout ${id}`)
    return entries.map(entry => ({ state: entry.state, actor: entry.actor, at: new Date(entry.atMs).toISOString(), detail: entry.detail }))
  }

  /** `listener` is told each change of a payout's state, after it was written (the webhook sender wakes). */
  onChange (listener: (payout: Payout) => void): () => void {
    this.#listeners.add(listener)
    return () => { this.#listeners.delete(listener) }
  }

  /** The wallet's address and balance, read from a node at most every 10 s. */
  wallet (): Promise<WalletState> {
    const at = this.#options.now()
    if (this.#wallet === undefined || at - this.#wallet.atMs >= WALLET_READ_MS) {
      const state = this.#node.coins(this.#signer.address).then(coins => ({ address: this.#signer.address, balanceSat: coins.reduce((sum, coin) => sum + coin.amountSat, 0), coins: coins.length }))
      this.#wallet = { state, atMs: at }
      state.catch(() => { if (this.#wallet?.state === state) this.#wallet = undefined })
    }
    return this.#wallet.state
  }

  /**
   * The payouts not final yet, across instances, and how long the oldest has waited (seconds; 0
   * when none): a payout no block confirms, or that a node keeps refusing, shows here rather than
   * stalling silently.
   */
  async open (): Promise<{ pending: number, broadcast: number, oldestAgeS: number }> {
    const { pending, broadcast, oldestAtMs } = await (await this.#store).openTotals()
    return { pending, broadcast, oldestAgeS: oldestAtMs === undefined ? 0 : Math.max(0, Math.round((this.#options.now() - oldestAtMs) / 1000)) }
  }

  /** Checks open payouts now, after the check running if any (a block came; tests). */
  check (): Promise<void> {
    this.#checks.request()
    return this.#checks.whenIdle()
  }

  /** Checks open payouts every `checkIntervalMs`, and at once (what a crash left pending). */
  start (): void {
    const tick = (): void => {
      if (this.#closed) return
      this.#checks.request()
      this.#timer = this.#timers.setTimeout(tick, this.#options.checkIntervalMs)
    }
    tick()
  }

  async close (): Promise<void> {
    this.#closed = true
    if (this.#timer !== undefined) this.#timers.clearTimeout(this.#timer)
    await this.#checks.close()
  }

  /** Step 1 and the first broadcast. */
  async #create (key: string | undefined, terms: PayoutTerms): Promise<PayoutOutcome> {
    const store = await this.#store
    const [coins, feeRate] = await Promise.all([this.#node.coins(this.#signer.address), this.#node.feeRate()])
    const nTimeS = Math.floor(this.#options.now() / 1000)
    const made = await store.create({
      wallet: this.#signer.address,
      terms,
      idempotencyKey: key,
      coins,
      admit: ({ paidTodaySat, refund, terms }) => admit(terms, paidTodaySat, refund, this.#options.limits),
      sign: (free, admitted) => this.#signer.sign(free, admitted, feeRate, nTimeS),
    })
    if (!made.created) return { created: false, payout: payoutView(terms.kind === 'payout' ? sameTerms(made.payout, terms) : made.payout) }
    this.#options.log.info({ payoutId: made.payout.id, kind: terms.kind, to: made.payout.to, amountSat: made.payout.amountSat, txid: made.payout.txid }, 'Payouts: signed and stored; broadcasting')
    this.#moved(made.payout)
    return { created: true, payout: payoutView(await this.#broadcast(store, made.payout)) }
  }

  /** Step 2: the stored bytes to a node. Never throws: what failed is tried again by the checks. */
  async #broadcast (store: PayoutStore, payout: Payout): Promise<Payout> {
    let answer: BroadcastOutcome
    try {
      answer = await this.#node.broadcast(payout.rawTx)
    } catch (err) {
      await store.notAccepted(payout.id, 'unavailable', this.#retryAt(payout))
      this.#options.log.warn({ payoutId: payout.id, err: errorFields(err) }, 'Payouts: no node took the broadcast; the same transaction is sent again later')
      return payout
    }
    if ('code' in answer) return await this.#refused(store, payout, answer)
    if (payout.state !== 'pending') {
      await store.inBlock(payout.id, undefined)
      return await this.#reread(store, payout)
    }
    return await this.#taken(store, payout)
  }

  /** `pending` → `broadcast`: a node took the transaction, or had it already. */
  async #taken (store: PayoutStore, payout: Payout): Promise<Payout> {
    const moved = await store.accepted(payout.id)
    const taken = await this.#reread(store, payout)
    if (moved) this.#moved(taken)
    return taken
  }

  /** A broadcast the node answered with a refusal: a conflict is looked into, anything else sent again later. */
  async #refused (store: PayoutStore, payout: Payout, refused: Extract<BroadcastOutcome, { code: string }>): Promise<Payout> {
    try {
      // The first broadcast ever, refused for good, and no node has these bytes: they can never confirm.
      if (refused.outcome === 'rejected' && payout.broadcasts === 0 && payout.state === 'pending' && !await this.#node.knownAnywhere(payout.txid)) {
        return await this.#fail(store, payout, 'REJECTED', { code: refused.code })
      }
      if (refused.outcome === 'conflict') return await this.#conflicted(store, payout, refused.code)
    } catch (err) {
      await store.notAccepted(payout.id, refused.code, this.#retryAt(payout))
      this.#options.log.warn({ payoutId: payout.id, code: refused.code, err: errorFields(err) }, 'Payouts: a refused broadcast could not be looked into; the same transaction is sent again later')
      return payout
    }
    await store.notAccepted(payout.id, refused.code, this.#retryAt(payout))
    this.#options.log.warn({ payoutId: payout.id, code: refused.code }, 'Payouts: the node refused the broadcast; the same transaction is sent again later')
    return payout
  }

  /** Step 3, for one open payout. */
  async #follow (store: PayoutStore, payout: Payout): Promise<void> {
    if (payout.state === 'pending') {
      await this.#broadcast(store, payout)
      return
    }
    const where = await this.#node.whereabouts(payout.txid)
    if (where === null) {
      // Dropped by the node's mempool, or put back and lost in a re-org: the same bytes again.
      await this.#broadcast(store, payout)
      return
    }
    if (where.height === undefined) {
      if (payout.height !== undefined) {
        this.#options.log.warn({ payoutId: payout.id, txid: payout.txid, height: payout.height }, 'Payouts: the payout\'s block left the chain (a re-org); its transaction is sent again')
        await store.inBlock(payout.id, undefined)
      }
      // Answered without a block: in the mempool, or out of a block that left the chain, which the
      // node keeps answering so but mines again only if sent again. Sending the bytes a node has
      // in its mempool changes nothing.
      await this.#broadcast(store, await this.#reread(store, payout))
      return
    }
    const tip = await this.#node.tipHeight()
    const block = { height: where.height, blockHash: where.blockHash, confirmations: Math.max(0, tip - where.height + 1) }
    if (block.confirmations >= this.#options.confirmations && await this.#node.backs(payout.txid, block, this.#options.confirmations)) {
      if (await store.confirmed(payout.id, block)) {
        this.#options.log.info({ payoutId: payout.id, txid: payout.txid, height: block.height }, 'Payouts: confirmed')
        this.#moved(await this.#reread(store, payout))
      }
      return
    }
    if (block.blockHash !== payout.blockHash || block.confirmations !== payout.confirmations) await store.inBlock(payout.id, block)
  }

  /**
   * An output the payout spends is spent elsewhere or unknown to the node. While any is still
   * listed unspent, the conflict is in a mempool and may go: sent again later. Once none is, the
   * other spend is in a block: the payout fails when that has stood `confirmations` blocks.
   */
  async #conflicted (store: PayoutStore, payout: Payout, code: string): Promise<Payout> {
    // The spender may be this very transaction: taken before a crash, confirmed, its outputs spent since.
    const where = await this.#node.whereabouts(payout.txid)
    if (where !== null && where.height !== undefined) {
      const taken = payout.state === 'pending' ? await this.#taken(store, payout) : payout
      await this.#follow(store, taken)
      return await this.#reread(store, taken)
    }
    if (where !== null) {
      // Known without a block (out of one a re-org disconnected) while another spends an output: sent
      // again later, not followed now (following sends it again, which this answer would meet again).
      await store.notAccepted(payout.id, code, this.#retryAt(payout))
      this.#options.log.warn({ payoutId: payout.id, txid: payout.txid, code }, 'Payouts: the node knows the payout\'s transaction outside any block while another spends one of its outputs; it is sent again later')
      return payout
    }
    const [coins, tip] = await Promise.all([this.#node.coins(this.#signer.address), this.#node.tipHeight()])
    const unspent = new Set(coins.map(coin => `${coin.txid}:${coin.vout}`))
    if (payout.inputs.some(input => unspent.has(input))) {
      await store.notAccepted(payout.id, code, this.#retryAt(payout))
      return payout
    }
    const since = await store.unseen(payout.id, tip)
    // Failed only when that has stood as long as a confirmation, and no node at all has the transaction.
    if (tip - since + 1 >= this.#options.confirmations && !await this.#node.knownAnywhere(payout.txid)) return await this.#fail(store, payout, 'INPUTS_SPENT', { code, since })
    this.#options.log.warn({ payoutId: payout.id, txid: payout.txid, code }, 'Payouts: an output the payout spends was spent by another transaction; the payout fails if that stays so')
    return payout
  }

  async #fail (store: PayoutStore, payout: Payout, reason: 'INPUTS_SPENT' | 'REJECTED', detail: Record<string, unknown>): Promise<Payout> {
    const moved = await store.failed(payout.id, reason, detail)
    const failed = await this.#reread(store, payout)
    if (moved) {
      this.#options.log.warn({ payoutId: payout.id, txid: payout.txid, reason, ...detail }, 'Payouts: failed; its outputs are free again')
      this.#moved(failed)
    }
    return failed
  }

  async #checkDue (): Promise<void> {
    if (this.#closed || !(this.#options.mayCheck?.() ?? true)) return
    const store = await this.#store
    for (const payout of await store.due(CHECK_BATCH)) {
      if (this.#closed) return
      try {
        await this.#follow(store, payout)
      } catch (err) {
        await store.notAccepted(payout.id, 'check_failed', this.#retryAt(payout)).catch(() => {})
        this.#options.log.warn({ payoutId: payout.id, err: errorFields(err) }, 'Payouts: a payout could not be checked; it is checked again later')
      }
    }
  }

  async #reread (store: PayoutStore, payout: Payout): Promise<Payout> {
    return await store.byId(payout.id) ?? payout
  }

  #retryAt (payout: Payout): number {
    return this.#options.now() + backoffDelayMs(payout.broadcasts + 1, RETRY)
  }

  /** `payout` reached its state here, by this instance's write: counted and told, once per state. */
  #moved (payout: Payout): void {
    this.counts.reached[payout.state]++
    if (payout.state === 'confirmed') this.counts.confirmedSat += payout.amountSat
    for (const listener of this.#listeners) {
      try {
        listener(payout)
      } catch (err) {
        this.#options.log.warn({ payoutId: payout.id, err: errorFields(err) }, 'Payouts: a listener of payout changes threw')
      }
    }
  }
}

/** An earlier payout of the same key: it must be the same payout, or the key was reused for another. */
function sameTerms (payout: Payout, terms: PayoutTerms): Payout {
  if (payout.kind !== terms.kind || payout.to !== terms.to || payout.amountSat !== terms.amountSat || payout.memo !== terms.memo) {
    throw new PayoutError('PAYOUT_ERR_KEY_REUSED', `idempotency key ${payout.idempotencyKey} names payout ${payout.id} (${payout.amountSat} satoshi to ${payout.to}), not this one`)
  }
  return payout
}

function checkAddressOrUndefined (address: string, limits: PayoutLimits): string | undefined {
  try {
    return checkAddress(address, limits)
  } catch {
    return undefined
  }
}

function errorFields (err: unknown): { message: string, code?: unknown } {
  return { message: err instanceof Error ? err.message : String(err), code: (err as { code?: unknown } | null)?.code }
}
