/**
 * PKOIN payments (docs/payments.md), on when PAYMENT_ADDRESS is set: the invoice store on its
 * database (DATABASE_URL, else the embedded one in DATA_DIR), `app.payments` for the app's
 * routes, and the watcher: the node event source follows the receiver, a payment to it is checked
 * on chain at once, and each block re-checks what is not final (on one instance at a time: the
 * `payments-watcher` lease). Transitions go to the event stream (`payment:<id>`), to the app's
 * handlers (`app.payments.on('confirmed', …)`) and, with PAYMENT_WEBHOOK_URL, to a signed webhook.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { parseNodeList, REAL_TIMERS, type Timers } from 'pocketnet-client'
import { ChainCursor } from './chain-cursor.js'
import { ChainWatcher } from './chain-watcher.js'
import { createPaymentStore, type PaymentStore } from './create-payment-store.js'
import { PaymentCrossCheck } from './cross-check.js'
import { DEFAULT_CONSUMERS } from './invoice-store.js'
import { registerPaymentMetrics } from './payment-metrics.js'
import { PaymentSightings } from './payment-sightings.js'
import { PaymentsService, invoiceView } from './payments-service.js'
import { SightingReader } from './sighting-reader.js'
import { ALWAYS_HELD, WatcherLease, type WatcherTurn } from './watcher-lease.js'
import { WebhookDeliveryLog } from './webhook-deliveries.js'
import { WEBHOOK_CONSUMER, WebhookSender } from './webhook-sender.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Undefined while payments are off (no PAYMENT_ADDRESS). */
    payments: PaymentsService | undefined
  }
}

export interface PaymentsPluginOptions {
  /** Milliseconds since the epoch (tests). */
  now?: (() => number) | undefined
  /** The webhook sender's and the watcher lease's timers (tests). Default REAL_TIMERS. */
  timers?: Timers | undefined
  /** In [0, 1), for the webhook retries' jitter (tests). Default Math.random. */
  random?: (() => number) | undefined
}

const errorFields = (err: unknown) => ({ err: { message: err instanceof Error ? err.message : String(err), code: (err as { code?: unknown } | null)?.code } })

export default fp<PaymentsPluginOptions>(async (app, { now = Date.now, timers = REAL_TIMERS, random = Math.random }) => {
  const config = app.config
  if (config.PAYMENT_ADDRESS === '') {
    app.decorate('payments', undefined)
    return
  }
  const webhooksOn = config.PAYMENT_WEBHOOK_URL !== ''
  const store: PaymentStore = await createPaymentStore({
    ...(config.DATABASE_URL === '' ? { dataDir: config.DATA_DIR } : { databaseUrl: config.DATABASE_URL }),
    clock: now,
    network: config.POCKETNET_NETWORK,
    // With webhooks on, each event also gets a row for the sender, in the transaction that makes it.
    consumers: webhooksOn ? [...DEFAULT_CONSUMERS, WEBHOOK_CONSUMER] : DEFAULT_CONSUMERS,
    // An invoice made with `expiryWebhook: false` (tips, unless PAYMENT_TIP_EXPIRY_WEBHOOKS) expires without a webhook.
    expiryOptional: [WEBHOOK_CONSUMER],
  })
  const sender = webhooksOn
    ? new WebhookSender({
      outbox: store.outbox,
      deliveries: new WebhookDeliveryLog(store.db),
      url: config.PAYMENT_WEBHOOK_URL,
      secret: config.PAYMENT_WEBHOOK_SECRET,
      timeoutMs: config.PAYMENT_WEBHOOK_TIMEOUT_MS,
      log: app.log,
      clock: now,
      timers,
      random,
    })
    : undefined
  const crossCheck = confirmationCrossCheck(app)
  const payments = new PaymentsService(store, () => app.pocketnet.get(), {
    receiver: config.PAYMENT_ADDRESS,
    confirmations: config.PAYMENT_CONFIRMATIONS,
    invoiceTtlS: config.PAYMENT_INVOICE_TTL_S,
  }, event => {
    app.events.announce(`payment:${event.invoiceId}`, 'payment', { type: event.type, sequence: event.sequence, invoice: invoiceView(event.invoice) })
    sender?.wake()
  }, crossCheck, { clock: now, timers, random, log: app.log, retentionMs: config.PAYMENT_RETENTION_S * 1000 })
  app.decorate('payments', payments)

  // The watcher: the receiver is followed whether or not a stream follows it. On a server shared
  // by several instances, the per-block work is the lease holder's; the embedded database has
  // one process, always the holder (watcher-lease.ts).
  const receivers = [config.PAYMENT_ADDRESS]
  app.events.addInterest(() => receivers)
  const failed = (err: Error): void => { app.log.warn(errorFields(err), 'Payments: a check on chain failed; it is tried again') }
  const turn: WatcherTurn = store.db.kind === 'embedded'
    ? ALWAYS_HELD
    : new WatcherLease({
      db: store.db,
      clock: now,
      timers,
      // Taken over from an instance that stopped: what it may have missed is checked at once.
      onTakeover: () => { watcher.recheck() },
      onError: err => { app.log.warn(errorFields(err), 'Payments: the watcher lease could not be renewed; it is tried again') },
    })
  // A restart reads the chain back from the last block whose payments were checked.
  const cursor = new ChainCursor(store.db, now)
  app.events.durableResume = () => cursor.read()
  // Each payment the source reports is kept until its read succeeds (payment-sightings.ts).
  const sightings = new PaymentSightings(store.db, now)
  const reader = new SightingReader({ sightings, read: txid => payments.onPayment(txid), log: app.log, clock: now, timers, random })
  const watcher = new ChainWatcher({
    payments,
    turn,
    receivers,
    sightings,
    sighted: () => { reader.wake() },
    failed,
    onBlockHandled: block => cursor.note(block),
  })
  app.events.onChainEvent(event => { watcher.onChainEvent(event) })
  registerPaymentMetrics(app.metrics.registry, turn, sender === undefined ? undefined : { sender, outbox: store.outbox }, crossCheck, { sightings, reader })

  app.addHook('onReady', async () => {
    await turn.start()
    payments.deliver().catch(failed)
    // Sightings a crash left unread.
    reader.wake()
    sender?.wake()
  })
  app.addHook('onClose', async () => {
    // No request left in flight, the re-check finished, the lease given up, then the database.
    await sender?.close()
    await watcher.close()
    await reader.close()
    await payments.close()
    await turn.close()
    await store.close()
  })
}, { name: 'payments', dependencies: ['events', 'pocketnet-client', 'metrics'] })

/**
 * How many nodes back a payment before it confirms an invoice (PAYMENT_CONFIRM_NODES, at most the
 * nodes configured, with a warning when that is fewer); undefined when one node's word decides.
 */
function confirmationCrossCheck (app: FastifyInstance): PaymentCrossCheck | undefined {
  const asked = app.config.PAYMENT_CONFIRM_NODES
  const configured = parseNodeList(app.config.POCKETNET_NODES).length
  const nodesRequired = Math.min(asked, configured)
  if (nodesRequired < asked) {
    app.log.warn({ asked, configured }, `Payments: PAYMENT_CONFIRM_NODES asks ${asked} nodes to agree before an invoice is confirmed, but POCKETNET_NODES names ${configured}: confirmations rest on ${nodesRequired === 1 ? 'one node\'s word' : `${nodesRequired} nodes`}`)
  }
  return nodesRequired > 1 ? new PaymentCrossCheck({ nodesRequired, log: app.log }) : undefined
}
