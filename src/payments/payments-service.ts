/**
 * Invoices as the service offers them (`app.payments`, docs/payments.md): created by the app's
 * own routes at the price it decides, settled only by what the chain shows. A transaction comes to
 * be checked three ways, and each is only a hint: the front-end reports the txid it got from the
 * host, the node event source reports a payment to a receiver, and each new block re-checks the
 * payments not final yet (confirmations, re-orgs). The store (invoice-store.ts) decides every
 * transition in one transaction, so a txid settles one invoice once, whichever way it came. An
 * answer that would confirm an invoice is first backed by other nodes (cross-check.ts): one
 * node's word can make an invoice `seen`, never `confirmed`.
 *
 * App code reacts with `app.payments.on('confirmed', event => …)` (and every other transition):
 * delivered at least once through the outbox, the invoice id and sequence as idempotency key.
 */
import {
  buildHostCheckout,
  isUnknownTransactionError,
  memoOfScript,
  proveInvoicePayment,
  type PaymentProof,
  readChainTransaction,
  satoshiToPkoinNumber,
  type ChainTransaction,
  type HostCheckout,
  type HostCheckoutRequest,
  type HostPayment,
  type PocketNetProxyApi,
  REAL_TIMERS,
  type Timers,
} from 'pocketnet-client'
import type { GrantTerms } from '../entitlements/entitlement.js'
import { OutboxConsumer } from '../outbox/outbox-consumer.js'
import { RetryPolicy, type RetrySchedule } from '../outbox/retry-policy.js'
import type { PaymentStore } from './create-payment-store.js'
import type { PaymentCrossCheck } from './cross-check.js'
import type { Invoice, InvoiceEvent, InvoiceEventType } from './invoice.js'
import type { ObservationRefusal, ObservationResult } from './invoice-store.js'
import { isInvoiceEvent, type ClaimedEvent } from './payment-outbox.js'
import type { SightingRead } from './sighting-reader.js'
import type { PayoutOutcome, PayoutsService, RefundRequest } from '../payouts/payouts-service.js'

export interface PaymentsConfig {
  /** The app's receiving address. */
  receiver: string
  confirmations: number
  invoiceTtlS: number
}

export interface NewInvoice {
  /** The price, in satoshi. */
  amount: number
  receiver?: string
  memo?: string
  metadata?: Record<string, unknown>
  expiresInS?: number
  confirmations?: number
  /**
   * Also offer the host's checkout (`sdk.ext`): its memo becomes the invoice's (`pay_<hash>`), and
   * `callbackUrl` is where the host POSTs `{tx, invoice}` once paid (this service's
   * `POST /api/payments/callback`: a hint, checked on chain like any other).
   */
  checkout?: { description?: string, callbackUrl?: string }
  /** Whether the webhook tells of its expiry, if it expires unpaid. Default true. */
  expiryWebhook?: boolean
  /**
   * What the invoice grants once confirmed: `sku` to the address `to`, for good or for
   * `durationS` seconds (a renewal extends from the current end). Written in the transaction that
   * confirms the invoice, exactly once (docs/entitlements.md).
   */
  grant?: GrantTerms
}

/** What the checkout is built from, kept with the invoice so that its view can show it again. */
interface CheckoutSpec { description?: string, callbackUrl?: string }

/** The host's checkout of an invoice: the same object, and so the same memo, every time. */
function checkoutOf (invoice: { id: string, receiver: string, amountSat: number }, spec: CheckoutSpec): HostCheckout {
  const request: HostCheckoutRequest = {
    address: invoice.receiver,
    amountSat: invoice.amountSat,
    // The invoice id makes the hash, and so the memo, the invoice's own; the host posts it back.
    payload: { invoice: invoice.id },
    ...(spec.description === undefined ? {} : { description: spec.description }),
    ...(spec.callbackUrl === undefined ? {} : { c_url: spec.callbackUrl, c_url_type: 'fetch' as const }),
  }
  return buildHostCheckout(request)
}

/** What `sdk.payment(...)` takes in the mini-app to pay the invoice: its spelling (`recievers`) included. */
export interface HostPaymentRequest {
  recievers: Array<{ address: string, amount: number }>
  feemode: 'exclude'
  message: string
}

/** An invoice as the API answers it. */
export interface InvoiceView {
  id: string
  /** Satoshi. */
  amount: number
  receiver: string
  memo: string
  state: Invoice['state']
  txid: string | null
  confirmations: number
  confirmationsRequired: number
  expiresAt: string
  underpaid: boolean
  underpaidAmount: number
  overpaid: boolean
  overpaidAmount: number
  paidLate: boolean
  paidLateAmount: number
  metadata: Record<string, unknown>
  hostRequest: HostPaymentRequest
  /** With `checkout`: the object for `sdk.ext(...)`, passed on unchanged (its key order is part of its hash). */
  hostCheckout?: HostPayment
  /** With a grant: what the invoice grants once confirmed. */
  grant?: GrantTerms
}

/** Where an invoice keeps its checkout's spec, in its metadata. */
const CHECKOUT_KEY = 'hostCheckout'

export function invoiceView (invoice: Invoice): InvoiceView {
  const { [CHECKOUT_KEY]: checkout, ...metadata } = invoice.metadata
  return {
    id: invoice.id,
    amount: invoice.amountSat,
    receiver: invoice.receiver,
    memo: invoice.memo,
    state: invoice.state,
    txid: invoice.txid,
    confirmations: invoice.confirmations,
    confirmationsRequired: invoice.confirmationsRequired,
    expiresAt: new Date(invoice.expiresAtMs).toISOString(),
    underpaid: invoice.underpaid,
    underpaidAmount: invoice.underpaidSat,
    overpaid: invoice.overpaid,
    overpaidAmount: invoice.overpaidSat,
    paidLate: invoice.paidLate,
    paidLateAmount: invoice.paidLateSat,
    metadata,
    ...(checkout === undefined ? {} : { hostCheckout: checkoutOf(invoice, checkout as CheckoutSpec).payment }),
    ...(invoice.grant === null ? {} : { grant: invoice.grant }),
    // `exclude`: the payer pays the fee, so the receiver gets the whole amount.
    hostRequest: { recievers: [{ address: invoice.receiver, amount: satoshiToPkoinNumber(invoice.amountSat) }], feemode: 'exclude', message: invoice.memo },
  }
}

export interface CheckResult {
  invoice: InvoiceView
  /** Why the transaction does not count for this invoice, when it does not. */
  refused?: ObservationRefusal
}

/** The consumer name of the app's own handlers in the outbox. */
const APP_CONSUMER = 'app'
/**
 * A handler that threw is offered the event again: from a second, doubling, up to five minutes,
 * each delay moved by up to a quarter either way; never given up (the app's own code, fixed and
 * deployed, takes what waited).
 */
const HANDLER_RETRY: RetrySchedule = { firstDelayMs: 1000, maxDelayMs: 300_000, jitter: 0.25 }
/** The longest the handlers' delivery sleeps: events other instances wrote and could not deliver. */
const DELIVERY_POLL_MS = 60_000
/** Events claimed at once, handed to the handlers one after the other. */
const DELIVERY_BATCH = 100
/** How long a claimed event stays with this instance: its handlers have that long. */
const DELIVERY_LEASE_MS = 30_000

export interface PaymentsServiceOptions {
  /** Milliseconds since the epoch. Default Date.now. */
  now?: () => number
  /** The handlers' retries (tests). Default REAL_TIMERS. */
  timers?: Timers
  /** In [0, 1), the retries' jitter. Default Math.random. */
  random?: () => number
  /** Where a handler's failure is told. */
  log?: { warn (fields: object, message: string): void }
  /** Unpaid invoices expired longer ago than this are deleted (PAYMENT_RETENTION_S). Default 30 days. */
  retentionMs?: number
  /** What refunds an invoice: the payouts, when the app has a hot wallet (PAYOUT_KEY_FILE). */
  refunds?: Pick<PayoutsService, 'refund'> | undefined
}

/** What the node that answered says of a txid (null: it does not know it), and the tip it was read at. */
interface ChainRead {
  transaction: ChainTransaction | null
  tipHeight: number
}

export class PaymentsService {
  /** Opened while the app gets ready (plugin.ts): every use waits for it. */
  readonly #store: Promise<PaymentStore>
  readonly #api: () => Promise<PocketNetProxyApi>
  readonly #config: PaymentsConfig
  readonly #announce: (event: InvoiceEvent) => void
  readonly #crossCheck: PaymentCrossCheck | undefined
  readonly #retentionMs: number
  readonly #refunds: Pick<PayoutsService, 'refund'> | undefined
  /** The app's handlers' outbox consumer, made once the store is open. */
  readonly #deliveryReady: Promise<OutboxConsumer<ClaimedEvent>>
  #delivery: OutboxConsumer<ClaimedEvent> | undefined
  #closed = false
  /** The app's handlers, by transition, in the order they were added: the outbox consumer `app` calls them. */
  readonly #handlers = new Map<InvoiceEventType, Array<(event: InvoiceEvent) => unknown>>()
  /** The tip as the node event source last reported it: fresher than the pool's probes. */
  #tip: number | undefined
  /** Reads of a txid in flight: a second caller joins the first. */
  readonly #reading = new Map<string, Promise<ChainRead>>()
  /** Milliseconds since the epoch. */
  readonly #now: () => number

  /**
   * @param announce called once per transition, as it is written (the event stream's `payment:<id>` topic)
   * @param crossCheck the other nodes that must back an answer before it confirms an invoice;
   *   undefined: the first answer decides (one node, or PAYMENT_CONFIRM_NODES=1)
   */
  constructor (store: PaymentStore | Promise<PaymentStore>, api: () => Promise<PocketNetProxyApi>, config: PaymentsConfig, announce: (event: InvoiceEvent) => void, crossCheck?: PaymentCrossCheck, options: PaymentsServiceOptions = {}) {
    this.#store = Promise.resolve(store)
    this.#api = api
    this.#config = config
    this.#announce = announce
    this.#crossCheck = crossCheck
    this.#retentionMs = options.retentionMs ?? 30 * 86_400_000
    this.#refunds = options.refunds
    this.#now = options.now ?? Date.now
    this.#deliveryReady = this.#store.then(store => {
      this.#delivery = this.#deliveryOn(store, options)
      if (this.#closed) this.#delivery.close().catch(() => {})
      return this.#delivery
    })
    // A store that failed to open is told by whoever waits for it (plugin.ts); never unhandled here.
    this.#deliveryReady.catch(() => {})
  }

  /**
   * The app's handler of one kind of transition (`confirmed`, `expired`, …): delivered at least
   * once, in order, through the durable outbox; a handler that throws has the event offered again
   * later. Idempotent on `event.idempotencyKey` (for `confirmed`, the invoice id is enough).
   */
  on (type: InvoiceEventType, handler: (event: InvoiceEvent) => unknown): this {
    const handlers = this.#handlers.get(type)
    if (handlers === undefined) this.#handlers.set(type, [handler])
    else handlers.push(handler)
    return this
  }

  /** Removes a handler `on` added; what it was handed before stays handled. */
  off (type: InvoiceEventType, handler: (event: InvoiceEvent) => unknown): this {
    const handlers = this.#handlers.get(type)
    const at = handlers?.indexOf(handler) ?? -1
    if (at >= 0) handlers?.splice(at, 1)
    return this
  }

  /** The receiver the service watches: the app's address. */
  get receiver (): string {
    return this.#config.receiver
  }

  /** A new invoice at the price the app decides; the front-end passes `hostRequest` to `sdk.payment`. */
  async createInvoice (request: NewInvoice): Promise<InvoiceView> {
    const receiver = request.receiver ?? this.#config.receiver
    const { checkout } = request
    const invoice = await (await this.#store).invoices.createInvoice({
      amountSat: request.amount,
      receiver,
      // The host's checkout pays with a memo of its own making: the invoice takes that one.
      ...(checkout === undefined
        ? (request.memo === undefined ? {} : { memo: request.memo })
        : { memo: (id: string) => checkoutOf({ id, receiver, amountSat: request.amount }, checkout).memo }),
      ...(request.metadata === undefined && checkout === undefined ? {} : { metadata: { ...request.metadata, ...(checkout === undefined ? {} : { [CHECKOUT_KEY]: checkout }) } }),
      expiresInS: request.expiresInS ?? this.#config.invoiceTtlS,
      confirmations: request.confirmations ?? this.#config.confirmations,
      ...(request.expiryWebhook === undefined ? {} : { expiryWebhook: request.expiryWebhook }),
      ...(request.grant === undefined ? {} : { grant: request.grant }),
    })
    return invoiceView(invoice)
  }

  /**
   * A purchase: the open invoice that grants `request.grant` at `request.amount`, made anew
   * unless one is open for at least half an invoice's time to live more. Asked again (a reload, a
   * second tab, a script), it answers the same invoice: a caller holds one open purchase per item.
   */
  async openPurchase (request: NewInvoice & { grant: GrantTerms }): Promise<InvoiceView> {
    const ttlMs = (request.expiresInS ?? this.#config.invoiceTtlS) * 1000
    const open = await (await this.#store).invoices.findOpenGrantInvoice(request.grant, request.amount, this.#now() + ttlMs / 2)
    return open === undefined ? await this.createInvoice(request) : invoiceView(open)
  }

  async getInvoice (id: string): Promise<InvoiceView | undefined> {
    const read = await (await this.#store).invoices.readInvoice(id)
    if (read === undefined) return undefined
    // Read past its expiry, a pending invoice expires: told like any other transition.
    this.#written(read.events)
    return invoiceView(read.invoice)
  }

  /**
   * Checks `txid` for invoice `id` on chain, now: what the front-end reports is a hint, and the
   * node's answer decides.
   * @returns undefined for an unknown invoice
   */
  /**
   * Returns a confirmed invoice's payment, or `amountSat` of it, to the address the payment's first
   * input spent from, from the app's hot wallet (docs/payouts.md, "Refunds"): partial refunds sum
   * to at most what was paid, and a refund of an invoice refunded in full is refused
   * (REFUND_ERR_ALREADY_REFUNDED). Needs PAYOUT_KEY_FILE.
   */
  async refund (invoiceId: string, request: RefundRequest = {}): Promise<PayoutOutcome> {
    if (this.#refunds === undefined) throw new Error('app.payments.refund needs payouts on: set PAYOUT_KEY_FILE to the app\'s hot wallet key (docs/payouts.md)')
    return await this.#refunds.refund(invoiceId, request)
  }

  async checkTransaction (id: string, txid: string): Promise<CheckResult | undefined> {
    const read = await (await this.#store).invoices.readInvoice(id)
    if (read === undefined) return undefined
    this.#written(read.events)
    const result = await this.#record(id, txid, await this.#read(txid), read.invoice)
    this.#written(result.events)
    return { invoice: invoiceView(result.invoice), ...(result.refused === undefined ? {} : { refused: result.refused }) }
  }

  /**
   * A transaction paying a watched receiver (a sighting, sighting-reader.ts): settles the invoice
   * its memo names, if any.
   * @returns `unknown` when the node does not know the txid (yet), `read` once its answer is recorded
   * @throws when the node or the database failed: the sighting is read again later
   */
  async onPayment (txid: string): Promise<SightingRead> {
    const read = await this.#read(txid)
    if (read.transaction === null) return 'unknown'
    for (const output of read.transaction.outputs) {
      const memo = memoOfScript(output.scriptHex)
      if (memo === undefined) continue
      const invoice = await (await this.#store).invoices.findInvoiceByMemo(memo)
      if (invoice === undefined) continue
      const result = await this.#record(invoice.id, txid, read, invoice)
      this.#written(result.events)
    }
    return 'read'
  }

  /**
   * The chain's tip as the node event source reports it, for the confirmations of the payments
   * this instance checks; what an instance that does not hold the watcher's turn does on a block.
   */
  noteTip (tipHeight: number): void {
    this.#tip = tipHeight
  }

  /**
   * A new block (or a re-org: the first height that changed, less one), as the node event source
   * reports it: every payment not final is read again, invoices past their time expire, and those
   * expired unpaid past the retention period are deleted. With several instances, only the
   * watcher's lease holder does this (chain-watcher.ts). A payment whose read fails does not stop
   * the others: it is read again at the next block, and the first failure is thrown at the end.
   */
  async onBlock (tipHeight?: number): Promise<void> {
    if (tipHeight !== undefined) this.#tip = tipHeight
    let failure: unknown
    for (const open of await (await this.#store).invoices.listOpenPayments()) {
      try {
        const result = await this.#record(open.invoiceId, open.txid, await this.#read(open.txid))
        this.#written(result.events)
      } catch (err) {
        failure ??= err
      }
    }
    this.#written(await (await this.#store).invoices.expireDue())
    await (await this.#store).invoices.pruneExpired(this.#retentionMs)
    if (failure !== undefined) throw failure
  }

  /** Invoices open to payment now: what the anonymous ones are capped by. */
  async countOpenInvoices (): Promise<number> {
    return (await this.#store).invoices.countOpen()
  }

  /** Hands undelivered transitions to the app's handlers, at least once each; resolves once none is due. */
  async deliver (): Promise<void> {
    if (this.#closed) return
    const delivery = await this.#deliveryReady
    delivery.wake()
    await delivery.whenIdle()
  }

  /** Stops delivering to the handlers once the event in hand is handled; what is left is delivered after the next start. */
  async close (): Promise<void> {
    this.#closed = true
    await this.#delivery?.close()
  }

  /**
   * The outbox consumer `app`: the handlers of each event's type run in order, one event after the
   * other; one that throws has the event offered again later (HANDLER_RETRY).
   */
  #deliveryOn (store: PaymentStore, options: PaymentsServiceOptions): OutboxConsumer<ClaimedEvent> {
    const { log } = options
    return new OutboxConsumer<ClaimedEvent>({
      consumer: APP_CONSUMER,
      outbox: store.outbox,
      handle: async event => {
        // Never written for this consumer: the handlers are of invoices (entitlement-events.ts, payout-events.ts).
        if (!isInvoiceEvent(event)) return
        for (const handler of [...(this.#handlers.get(event.type) ?? [])]) await handler(event)
      },
      retry: new RetryPolicy(HANDLER_RETRY, options.random ?? Math.random),
      batchSize: DELIVERY_BATCH,
      leaseMs: DELIVERY_LEASE_MS,
      pollMs: DELIVERY_POLL_MS,
      now: options.now ?? Date.now,
      timers: options.timers ?? REAL_TIMERS,
      onFailed: (event, err, decision) => {
        const fields = { event: event.idempotencyKey, type: event.type, attempts: event.attempts, err: { message: err instanceof Error ? err.message : String(err) } }
        if (decision.giveUp) log?.warn(fields, 'Payments: an app handler threw; the event was given up')
        else log?.warn({ ...fields, retryInMs: decision.retryInMs }, 'Payments: an app handler threw; the event is offered again later')
      },
      onOutboxError: err => {
        log?.warn({ err: { message: err instanceof Error ? err.message : String(err) } }, 'Payments: the app\'s handlers could not use the outbox; the events wait there, tried again later')
      },
    })
  }

  #written (events: InvoiceEvent[]): void {
    if (events.length === 0) return
    for (const event of events) this.#announce(event)
    this.deliver().catch(() => {})
  }

  /**
   * Records what a node showed of `txid` for the invoice. An answer that would confirm it counts
   * as such only once other nodes back it; until then it may make the invoice `seen`, not more.
   * @param known the invoice as the caller read it, if it did
   */
  async #record (invoiceId: string, txid: string, read: ChainRead, known?: Invoice): Promise<ObservationResult> {
    const { confirmable, proof } = await this.#backed(invoiceId, read, known)
    return (await this.#store).invoices.recordObservation(invoiceId, { txid, ...read, ...(confirmable ? {} : { confirmable: false }), ...(proof === undefined ? {} : { proof }) })
  }

  /**
   * `confirmable` false when `read` would confirm the invoice and other nodes do not back it
   * (yet); true when nothing needs backing. With the proof it made of `read`, if it made one: the
   * store and the cross-check use it rather than make it again.
   */
  async #backed (invoiceId: string, read: ChainRead, known: Invoice | undefined): Promise<{ confirmable: boolean, proof?: PaymentProof }> {
    const { transaction } = read
    if (this.#crossCheck === undefined || transaction?.blockHash === undefined) return { confirmable: true }
    let invoice = known
    if (invoice === undefined) {
      const found = await (await this.#store).invoices.readInvoice(invoiceId)
      if (found === undefined) return { confirmable: true }
      this.#written(found.events)
      invoice = found.invoice
    }
    if (invoice.state === 'confirmed') return { confirmable: true }
    const proof = proveInvoicePayment(transaction, invoice, read.tipHeight)
    if (!proof.pays || proof.confirmations < invoice.confirmationsRequired) return { confirmable: true, proof }
    return { confirmable: await this.#crossCheck.backs(await this.#api(), proof, invoice, invoice.id), proof }
  }

  /**
   * The node's answer for `txid` (null when no node knows it) and the tip it was read at. Callers
   * asking for one txid at once share one node call (the front-end, the host's callback and the
   * watcher often ask together). An answer is never kept past its call: a re-org, even one that
   * leaves the height as it was, may have moved the transaction since.
   */
  #read (txid: string): Promise<ChainRead> {
    let reading = this.#reading.get(txid)
    if (reading === undefined) {
      reading = this.#readFresh(txid).finally(() => this.#reading.delete(txid))
      this.#reading.set(txid, reading)
    }
    return reading
  }

  async #readFresh (txid: string): Promise<ChainRead> {
    const api = await this.#api()
    let answer: unknown
    try {
      // Never a cached answer: a re-org may have moved the transaction since.
      answer = await api.rpc.getrawtransaction({ txid }, { fresh: true })
    } catch (err) {
      if (isUnknownTransactionError(err)) return { transaction: null, tipHeight: this.#tipOf(api) }
      throw err
    }
    return { transaction: readChainTransaction(answer) ?? null, tipHeight: this.#tipOf(api) }
  }

  #tipOf (api: PocketNetProxyApi): number {
    return this.#tip ?? api.bestHeight ?? 0
  }
}
