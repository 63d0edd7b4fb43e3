/**
 * PKOIN payments (docs/payments.md), on when PAYMENT_ADDRESS is set: the invoice store on the
 * service's database (db/plugin.ts, opened at ready), `app.payments` for the app's
 * routes, and the watcher: the node event source follows the receiver, a payment to it is checked
 * on chain at once, and each block re-checks what is not final (on one instance at a time: the
 * `payments-watcher` lease). Transitions go to the event stream (`payment:<id>`), to the app's
 * handlers (`app.payments.on('confirmed', …)`) and, with PAYMENT_WEBHOOK_URL, to a signed webhook.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { parseNodeList, REAL_TIMERS, type ChainEvent, type Timers } from 'pocketnet-client'
import { entitlementView } from '../entitlements/entitlement-view.js'
import { paymentTopic } from '../events/topics.js'
import { eventNoticeSettings, NOTIFY_CONSUMER } from '../notifications/event-notices.js'
import { ChainCursor } from './chain-cursor.js'
import { ChainWatcher } from './chain-watcher.js'
import { paymentStoreOn, type PaymentStore } from './create-payment-store.js'
import { PaymentCrossCheck } from './cross-check.js'
import { DEFAULT_CONSUMERS } from './invoice-store.js'
import { registerPaymentMetrics } from './payment-metrics.js'
import { PaymentSightings } from './payment-sightings.js'
import { PaymentsService, invoiceView } from './payments-service.js'
import { SightingReader } from './sighting-reader.js'
import { ALWAYS_HELD, watcherLease, type WatcherTurn } from './watcher-turn.js'
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
  const config = app.miniAppConfig
  if (config.PAYMENT_ADDRESS === '') {
    app.decorate('payments', undefined)
    return
  }
  const webhooksOn = config.PAYMENT_WEBHOOK_URL !== ''
  const notices = eventNoticeSettings(config)
  // The database opens while the app gets ready (onReady, below); the store is built on it then.
  let resolveStore!: (store: PaymentStore) => void
  let rejectStore!: (err: unknown) => void
  const storeOpened = new Promise<PaymentStore>((resolve, reject) => { resolveStore = resolve; rejectStore = reject })
  // Refused at ready; never an unhandled rejection besides.
  storeOpened.catch(() => {})
  const crossCheck = confirmationCrossCheck(app)
  const payments = new PaymentsService(storeOpened, () => app.pocketnet.get(), {
    receiver: config.PAYMENT_ADDRESS,
    confirmations: config.PAYMENT_CONFIRMATIONS,
    invoiceTtlS: config.PAYMENT_INVOICE_TTL_S,
  }, event => {
    app.events.announce(paymentTopic(event.invoiceId), 'payment', { type: event.type, sequence: event.sequence, invoice: invoiceView(event.invoice), ...(event.grant === undefined ? {} : { grant: entitlementView(event.grant) }) })
    // Written with the confirmation: this instance's cache, the others' and the user's live events follow.
    if (event.grant !== undefined) app.entitlements.granted(event.grant)
    running?.sender?.wake()
  }, crossCheck, { now, timers, random, log: app.log, retentionMs: config.PAYMENT_RETENTION_S * 1000, refunds: app.payouts })
  app.decorate('payments', payments)

  // The watcher: the receiver is followed whether or not a stream follows it.
  const receivers = [config.PAYMENT_ADDRESS]
  app.events.interests.add(() => receivers)
  // A restart reads the chain back from the last block whose payments were checked: the events
  // wait for the database before they ingest the chain, so none reaches the watcher before it is.
  app.events.useDurablePosition(async () => await (await watching).cursor.read())
  // Chain events another instance ingested can come sooner (the shared log): kept until then.
  const early: ChainEvent[] = []
  let running: Watching | undefined
  // A grant or a revocation by server code waits in the outbox for the sender, as an invoice's event does.
  app.entitlements.onWritten(() => { running?.sender?.wake() })
  // So does a payout's transition (payouts/payout-events.ts).
  app.payouts?.onChange(() => { running?.sender?.wake() })
  app.events.onChainEvent(event => {
    if (running === undefined) early.push(event)
    else running.watcher.onChainEvent(event)
  })
  const watching = storeOpened.then(store => watch(app, store, payments, receivers, crossCheck, { now, timers, random, webhooksOn }))
  watching.catch(() => {})

  app.addHook('onReady', async () => {
    app.database.open().then(db => paymentStoreOn(db, {
      now,
      network: config.POCKETNET_NETWORK,
      // With webhooks on, each event also gets a row for the sender, in the transaction that makes it,
      // and so does the grant a confirmation writes.
      consumers: [...DEFAULT_CONSUMERS, ...(webhooksOn ? [WEBHOOK_CONSUMER] : []), ...(notices.invoiceConfirmed === undefined ? [] : [NOTIFY_CONSUMER])],
      grantConsumers: [...(webhooksOn ? [WEBHOOK_CONSUMER] : []), ...(notices.entitlementGranted === undefined ? [] : [NOTIFY_CONSUMER])],
      // The notifications tell of confirmations only (notifications/event-notices.ts).
      confirmedOnly: [NOTIFY_CONSUMER],
      // An invoice made with `expiryWebhook: false` (tips, unless PAYMENT_TIP_EXPIRY_WEBHOOKS) expires without a webhook.
      expiryOptional: [WEBHOOK_CONSUMER],
    })).then(resolveStore, rejectStore)
    running = await watching
    for (const event of early.splice(0)) running.watcher.onChainEvent(event)
    await running.turn.start()
    payments.deliver().catch(running.failed)
    // Sightings a crash left unread.
    running.reader.wake()
    running.sender?.wake()
  })
  app.addHook('onClose', async () => {
    // Not running (closed before it was ready, or the database did not open).
    if (running === undefined) {
      await payments.close()
      return
    }
    // No request left in flight, the re-check finished, the lease given up; the database closes
    // after (db/plugin.ts, registered before this plugin).
    await running.sender?.close()
    await running.watcher.close()
    await running.reader.close()
    await payments.close()
    await running.turn.close()
  })
}, { name: 'payments', dependencies: ['database', 'events', 'entitlements', 'pocketnet-client', 'metrics', 'payouts'] })

/**
 * How many nodes back a payment before it confirms an invoice (PAYMENT_CONFIRM_NODES, at most the
 * nodes configured, with a warning when that is fewer); undefined when one node's word decides.
 */
function confirmationCrossCheck (app: FastifyInstance): PaymentCrossCheck | undefined {
  const asked = app.miniAppConfig.PAYMENT_CONFIRM_NODES
  const configured = parseNodeList(app.miniAppConfig.POCKETNET_NODES).length
  const nodesRequired = Math.min(asked, configured)
  if (nodesRequired < asked) {
    app.log.warn({ asked, configured }, `Payments: PAYMENT_CONFIRM_NODES asks ${asked} nodes to agree before an invoice is confirmed, but POCKETNET_NODES names ${configured}: confirmations rest on ${nodesRequired === 1 ? 'one node\'s word' : `${nodesRequired} nodes`}`)
  }
  return nodesRequired > 1 ? new PaymentCrossCheck({ nodesRequired, log: app.log }) : undefined
}

/** What runs on the opened database: the watcher, its lease, the sightings' reader, the webhooks. */
interface Watching {
  store: PaymentStore
  turn: WatcherTurn
  cursor: ChainCursor
  reader: SightingReader
  watcher: ChainWatcher
  sender: WebhookSender | undefined
  failed: (err: Error) => void
}

function watch (app: FastifyInstance, store: PaymentStore, payments: PaymentsService, receivers: string[], crossCheck: PaymentCrossCheck | undefined, options: { now: () => number, timers: Timers, random: () => number, webhooksOn: boolean }): Watching {
  const { now, timers, random } = options
  const config = app.miniAppConfig
  const sender = options.webhooksOn
    ? new WebhookSender({
      outbox: store.outbox,
      deliveries: new WebhookDeliveryLog(store.db),
      url: config.PAYMENT_WEBHOOK_URL,
      secret: config.PAYMENT_WEBHOOK_SECRET,
      timeoutMs: config.PAYMENT_WEBHOOK_TIMEOUT_MS,
      log: app.log,
      now,
      timers,
      random,
    })
    : undefined
  const failed = (err: Error): void => { app.log.warn(errorFields(err), 'Payments: a check on chain failed; it is tried again') }
  // On a server shared by several instances, the per-block work is the lease holder's; the
  // embedded database has one process, always the holder (watcher-turn.ts).
  const turn: WatcherTurn = store.db.kind === 'embedded'
    ? ALWAYS_HELD
    : watcherLease({
      db: store.db,
      now,
      timers,
      // Taken over from an instance that stopped: what it may have missed is checked at once.
      onTakeover: () => { watcher.recheck() },
      onError: err => { app.log.warn(errorFields(err), 'Payments: the watcher lease could not be renewed; it is tried again') },
    })
  const cursor = new ChainCursor(store.db, now)
  // Each payment the source reports is kept until its read succeeds (payment-sightings.ts).
  const sightings = new PaymentSightings(store.db, now)
  const reader = new SightingReader({ sightings, read: txid => payments.onPayment(txid), log: app.log, now, timers, random })
  const watcher = new ChainWatcher({
    payments,
    turn,
    receivers,
    sightings,
    sighted: () => { reader.wake() },
    failed,
    onBlockHandled: block => cursor.note(block),
  })
  registerPaymentMetrics(app.metrics.registry, turn, sender === undefined ? undefined : { sender, outbox: store.outbox }, crossCheck, { sightings, reader })
  return { store, turn, cursor, reader, watcher, sender, failed }
}
