/**
 * The catalogue (CATALOG_FILE, docs/entitlements.md): what the app sells, and buying an item: an
 * invoice at the catalogue's price that grants the item to the signed-in caller once confirmed.
 * The price and what is granted come from the file, never from the request; asked again while
 * the buyer's purchase of the item is open, it answers that invoice.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { signedInUser } from '../../auth/plugin.js'
import { loadCatalog } from '../../entitlements/catalog.js'
import { HttpError } from '../../http/errors.js'
import type { PaymentsService } from '../../payments/payments-service.js'
import { CatalogInvoiceSchema, CatalogSchema } from '../../schemas/catalog.js'

const catalogRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // Read and checked once, at start: a bad file stops the start with one line per problem.
  const catalog = loadCatalog(app.miniAppConfig.CATALOG_FILE)
  // config.ts refuses CATALOG_FILE without PAYMENT_ADDRESS and BASTYON_APP_ID.
  const payments = app.payments as PaymentsService
  const answer = { message: 'Catalogue retrieved successfully', data: { items: [...catalog.items] } }

  app.get('/catalog', { schema: CatalogSchema }, async () => answer)

  app.post('/catalog/:sku/invoice', {
    schema: CatalogInvoiceSchema,
    config: { auth: true, failureMessage: 'Failed to create the invoice' },
  }, async (request, reply) => {
    const item = catalog.get(request.params.sku)
    if (item === undefined) throw new HttpError(404, 'Item not found', `The catalogue sells no item ${request.params.sku}`)
    const buyer = signedInUser(request).address
    // One open purchase per buyer and item, however often it is asked (a reload, a script).
    const invoice = await payments.openPurchase({
      amount: item.priceSat,
      metadata: { sku: item.sku },
      grant: { sku: item.sku, to: buyer, ...(item.durationS === undefined ? {} : { durationS: item.durationS }) },
    })
    reply.header('cache-control', 'no-store')
    return { message: 'Invoice created', data: invoice }
  })
}

export default catalogRoutes
