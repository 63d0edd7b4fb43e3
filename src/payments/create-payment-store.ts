/**
 * The payments store as the service opens it: the database its configuration names, migrated,
 * with the invoice store and the outbox on it, closed together.
 */
import type { Database } from '../db/database.js'
import { openDatabase, type OpenDatabaseOptions } from '../db/open-database.js'
import { InvoiceStore, type InvoiceStoreOptions } from './invoice-store.js'
import { PaymentOutbox } from './payment-outbox.js'

export interface PaymentStore {
  invoices: InvoiceStore
  outbox: PaymentOutbox
  db: Database
  close (): Promise<void>
}

/** Opens the database (`databaseUrl`, else the embedded one in `dataDir`), migrates it, and builds the store on it. */
export async function createPaymentStore (options: OpenDatabaseOptions & InvoiceStoreOptions): Promise<PaymentStore> {
  const db = await openDatabase(options)
  return {
    invoices: new InvoiceStore(db, options),
    outbox: new PaymentOutbox(db, { now: options.now }),
    db,
    close: () => db.close(),
  }
}
