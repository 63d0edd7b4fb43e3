/**
 * For the crash test: opens the embedded payments store in the data directory given and, in a
 * loop until it is killed, creates an invoice that grants and confirms it, printing
 * `confirmed <invoiceId>` once that is committed. Whatever a line says must still be true after
 * a `kill -9` at any moment.
 *
 *   node --import tsx test/entitlements/grant-crash-writer.ts <dataDir>
 */
import { randomBytes } from 'node:crypto'
import { createPaymentStore } from '../../src/payments/create-payment-store.js'
import { MERCHANT, PAYER, paymentTransaction } from '../payments/chain-transactions.js'

const dataDir = process.argv[2]
if (dataDir === undefined) throw new Error('usage: grant-crash-writer.ts <dataDir>')
const store = await createPaymentStore({ dataDir })
process.stdout.write('open\n')
for (;;) {
  const invoice = await store.invoices.createInvoice({ amountSat: 25_000_000, receiver: MERCHANT, expiresInS: 3600, confirmations: 1, grant: { sku: 'premium', to: PAYER, durationS: 60 } })
  const txid = randomBytes(32).toString('hex')
  const transaction = paymentTransaction({ txid, amountSat: 25_000_000, memo: invoice.memo, height: 500 })
  const result = await store.invoices.recordObservation(invoice.id, { txid, transaction, tipHeight: 500 })
  if (result.invoice.state !== 'confirmed') throw new Error(`expected confirmed, got ${result.invoice.state}`)
  process.stdout.write(`confirmed ${invoice.id}\n`)
}
