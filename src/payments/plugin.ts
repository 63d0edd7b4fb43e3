/**
 * PKOIN payments (docs/payments.md), on when PAYMENT_ADDRESS is set: the invoice store on its
 * database (DATABASE_URL, else the embedded one in DATA_DIR), `app.payments` for the app's
 * routes, and the watcher: the node event source follows the receiver, a payment to it is checked
 * on chain at once, and each block re-checks what is not final. Transitions go to the event
 * stream (`payment:<id>`) and to the app's handlers (`app.payments.on('confirmed', …)`).
 */
import fp from 'fastify-plugin'
import { createPaymentStore, type PaymentStore } from './create-payment-store.js'
import { PaymentsService, invoiceView } from './payments-service.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Undefined while payments are off (no PAYMENT_ADDRESS). */
    payments: PaymentsService | undefined
  }
}

export interface PaymentsPluginOptions {
  /** Milliseconds since the epoch (tests). */
  now?: (() => number) | undefined
}

export default fp<PaymentsPluginOptions>(async (app, { now = Date.now }) => {
  const config = app.config
  if (config.PAYMENT_ADDRESS === '') {
    app.decorate('payments', undefined)
    return
  }
  const store: PaymentStore = await createPaymentStore({
    ...(config.DATABASE_URL === '' ? { dataDir: config.DATA_DIR } : { databaseUrl: config.DATABASE_URL }),
    clock: now,
    network: config.POCKETNET_NETWORK,
  })
  const payments = new PaymentsService(store, () => app.pocketnet.get(), {
    receiver: config.PAYMENT_ADDRESS,
    confirmations: config.PAYMENT_CONFIRMATIONS,
    invoiceTtlS: config.PAYMENT_INVOICE_TTL_S,
  }, event => {
    app.events.announce(`payment:${event.invoiceId}`, 'payment', { type: event.type, sequence: event.sequence, invoice: invoiceView(event.invoice) })
  })
  app.decorate('payments', payments)

  // The watcher: the receiver is followed whether or not a stream follows it.
  const receivers = [config.PAYMENT_ADDRESS]
  app.events.addInterest(() => receivers)
  const failed = (err: Error): void => { app.log.warn({ err: { message: err.message, code: (err as { code?: unknown }).code } }, 'Payments: a check on chain failed; the next block tries again') }
  let blockWork = Promise.resolve()
  app.events.onChainEvent(event => {
    if (event.kind === 'transaction' && receivers.includes(event.address)) payments.onPayment(event.txid).catch(failed)
    // One re-check at a time: blocks that come while one runs share the next.
    if (event.kind === 'block' || event.kind === 'reorg') {
      const tip = event.kind === 'block' ? event.height : event.height - 1
      blockWork = blockWork.then(() => payments.onBlock(tip)).catch(failed)
    }
  })
  app.addHook('onReady', async () => { payments.deliver().catch(failed) })
  app.addHook('onClose', async () => {
    await blockWork
    await store.close()
  })
}, { name: 'payments', dependencies: ['events', 'pocketnet-client'] })
