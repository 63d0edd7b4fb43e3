/**
 * PKOIN payments (payments/, docs/payments.md), registered when PAYMENT_ADDRESS is set: an
 * invoice's state, the front-end's report of the txid the host gave (checked on chain, never
 * believed), and, with PAYMENT_TIPS, ready-made tips. Invoices of a price of the app's own come
 * from its own routes: `await app.payments.createInvoice({ amount })`.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { HttpError, ParameterError, ServiceUnavailableError } from '../../http/errors.js'
import { OpenInvoiceCount } from '../../payments/open-invoice-count.js'
import type { PaymentsService } from '../../payments/payments-service.js'
import { CallbackSchema, InvoiceSchema, InvoiceTransactionSchema, TipSchema } from '../../schemas/payments.js'

/** How long a client refused for too many open invoices waits: about as long as one takes to be paid or to expire. */
const TIPS_RETRY_AFTER_S = 60

const paymentRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const payments = app.payments as PaymentsService
  const notFound = (id: string): HttpError => new HttpError(404, 'Invoice not found', `No invoice has the id ${id}`)

  app.get('/payments/invoices/:id', { schema: InvoiceSchema }, async (request, reply) => {
    const invoice = await payments.getInvoice(request.params.id)
    if (invoice === undefined) throw notFound(request.params.id)
    reply.header('cache-control', 'no-store')
    return { message: 'Invoice retrieved successfully', data: invoice }
  })

  app.post('/payments/invoices/:id/transaction', { schema: InvoiceTransactionSchema, config: { failureMessage: 'Failed to check the transaction' } }, async (request, reply) => {
    const checked = await payments.checkTransaction(request.params.id, request.body.txid)
    if (checked === undefined) throw notFound(request.params.id)
    reply.header('cache-control', 'no-store')
    return { message: 'Transaction checked', data: checked }
  })

  // The host's checkout calls back here (`c_url`) once paid: a hint, like the front-end's report.
  app.post('/payments/callback', { schema: CallbackSchema, config: { failureMessage: 'Failed to check the callback' } }, async (request, reply) => {
    const checked = await payments.checkTransaction(request.body.invoice, request.body.tx)
    if (checked === undefined) throw notFound(request.body.invoice)
    reply.header('cache-control', 'no-store')
    return { message: 'Callback checked', data: checked }
  })

  if (app.miniAppConfig.PAYMENT_TIPS) {
    const { PAYMENT_TIP_MIN_SAT: min, PAYMENT_TIP_MAX_SAT: max, PAYMENT_TIPS_MAX_OPEN: maxOpen, PAYMENT_TIP_EXPIRY_WEBHOOKS: expiryWebhook } = app.miniAppConfig
    // Anyone may ask for a tip: each client a few a minute, and all of them together no more
    // invoices open at once than PAYMENT_TIPS_MAX_OPEN (each is a row, and a check per block).
    const openInvoices = new OpenInvoiceCount(() => payments.countOpenInvoices())
    app.post('/payments/tips', { schema: TipSchema, config: { rateLimit: { max: app.miniAppConfig.PAYMENT_TIP_RATE_LIMIT_MAX, timeWindow: 60_000 } } }, async (request, reply) => {
      const { amount } = request.body
      if (amount < min || amount > max) throw new ParameterError('body', 'amount', `must be from ${min} to ${max} satoshi (got ${amount})`)
      if (await openInvoices.atLeast(maxOpen)) throw new ServiceUnavailableError(`Too many invoices are open (${maxOpen}); retry after ${TIPS_RETRY_AFTER_S} s`, TIPS_RETRY_AFTER_S)
      reply.header('cache-control', 'no-store')
      const checkout = request.body.checkout === true ? { description: 'Tip', callbackUrl: `${ownOrigin(request.protocol, request.host)}/api/payments/callback` } : undefined
      return { message: 'Invoice created', data: await payments.createInvoice({ amount, metadata: { kind: 'tip' }, expiryWebhook, ...(checkout === undefined ? {} : { checkout }) }) }
    })
  }
}

/** A name (letters, digits, dots, hyphens) or a bracketed IPv6 address, and an optional port. */
const HOST_HEADER = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/

/**
 * The service's origin as the client reached it, for the checkout's callback (`c_url`), which the
 * host's wallet calls. The Host header is the client's word: one that is no host name or address
 * (`x"><script>`) is refused, never copied into a URL.
 */
function ownOrigin (protocol: string, host: string): string {
  if (HOST_HEADER.test(host)) {
    try {
      return new URL(`${protocol}://${host}`).origin
    } catch {} // [:::::], a port past 65535: refused below.
  }
  throw new ParameterError('headers', 'host', `must be a host name or address with an optional port, such as example.com:3000 (got ${JSON.stringify(host.slice(0, 100))})`)
}

export default paymentRoutes
