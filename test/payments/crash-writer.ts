/**
 * For the crash test: opens the embedded payments store in the data directory given and writes
 * in a loop until it is killed, printing each fact on a line of its own once it is committed:
 * `created <invoiceId>`, then `seen <invoiceId> <txid>`. Whatever a line says must still be
 * true after a `kill -9` at any moment.
 *
 *   node --import tsx test/payments/crash-writer.ts <dataDir>
 */
import { randomBytes } from 'node:crypto'
import { createPaymentStore } from '../../src/payments/create-payment-store.js'
import { MERCHANT, paymentTransaction } from './chain-transactions.js'

const dataDir = process.argv[2]
if (dataDir === undefined) throw new Error('usage: crash-writer.ts <dataDir>')
const store = await createPaymentStore({ dataDir })
// Lines to a pipe are written synchronously on Linux: a printed line is out before the next write starts.
process.stdout.write('open\n')
for (;;) {
  const invoice = await store.invoices.createInvoice({ amountSat: 25_000_000, receiver: MERCHANT, expiresInS: 3600, confirmations: 3, metadata: { writer: process.pid } })
  process.stdout.write(`created ${invoice.id}\n`)
  const txid = randomBytes(32).toString('hex')
  const transaction = paymentTransaction({ txid, amountSat: 25_000_000, memo: invoice.memo, height: 500 })
  const result = await store.invoices.recordObservation(invoice.id, { txid, transaction, tipHeight: 500 })
  if (result.invoice.state !== 'seen') throw new Error(`expected seen, got ${result.invoice.state}`)
  process.stdout.write(`seen ${invoice.id} ${txid}\n`)
}
