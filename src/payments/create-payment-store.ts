/**
 * The payments store: the invoice store and the outbox on one database. The service builds it on
 * its shared database (`paymentStoreOn`, db/plugin.ts owns the connection); a tool or a test that
 * wants the payments alone opens a database for it (`createPaymentStore`), closed with the store.
 */
import type { Database } from '../db/database.js'
import { openDatabase, type OpenDatabaseOptions } from '../db/open-database.js'
import { InvoiceStore, type InvoiceStoreOptions } from './invoice-store.js'
import { PaymentOutbox } from './payment-outbox.js'

export interface PaymentStore {
  invoices: InvoiceStore
  outbox: PaymentOutbox
  db: Database
  /** Closes the database when the store opened it; the service's own database is closed by its owner. */
  close (): Promise<void>
}

/** The store on `db`, which its owner closes. */
export function paymentStoreOn (db: Database, options: InvoiceStoreOptions): PaymentStore {
  return {
    invoices: new InvoiceStore(db, options),
    outbox: new PaymentOutbox(db, { now: options.now }),
    db,
    close: async () => {},
  }
}

/** Opens the database (`databaseUrl`, else the embedded one in `dataDir`), migrates it, and builds the store on it. */
export async function createPaymentStore (options: OpenDatabaseOptions & InvoiceStoreOptions): Promise<PaymentStore> {
  const db = await openDatabase(options)
  return { ...paymentStoreOn(db, options), close: () => db.close() }
}
