/**
 * `kill -9` of a process writing to the embedded store, at moments that fall anywhere in its
 * writes: after each crash the database opens, and everything the writer reported committed is
 * there, whole, exactly once.
 */
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { describe, it } from 'node:test'
import { createPaymentStore } from '../../src/payments/create-payment-store.js'
import { freshDataDir } from './databases.js'
import { writeThenKill } from '../helpers/write-then-kill.js'

const WRITER = new URL('./crash-writer.ts', import.meta.url).pathname

describe('a crash of the process writing to the embedded store', () => {
  it('loses nothing committed and settles nothing twice, crash after crash', async (t) => {
    const dataDir = await freshDataDir()
    t.after(() => rmSync(dataDir, { recursive: true, force: true }))
    const created = new Set<string>()
    const seen = new Map<string, string>()
    // Different counts, so that the kills land at different points of the writes.
    for (const lines of [23, 40, 57]) {
      const printed = await writeThenKill(WRITER, [dataDir], lines)
      assert.equal(printed[0], 'open')
      for (const line of printed.slice(1)) {
        const [fact, invoiceId, txid] = line.split(' ') as [string, string, string | undefined]
        if (fact === 'created') created.add(invoiceId)
        if (fact === 'seen') seen.set(invoiceId, txid as string)
      }
    }
    assert.ok(seen.size >= 50, `${seen.size} invoices seen`)

    const store = await createPaymentStore({ dataDir })
    t.after(() => store.close())
    for (const id of created) {
      const invoice = await store.invoices.getInvoice(id)
      assert.ok(invoice, `invoice ${id} was reported created`)
      const events = await store.invoices.listEvents(id)
      if (seen.has(id)) {
        assert.deepEqual([invoice.state, invoice.txid, invoice.confirmations], ['seen', seen.get(id), 1], id)
        assert.deepEqual(events.map(event => event.type), ['seen'], id)
      }
    }
    // Committed but not yet reported when the kill came: at most one write per crash, and whole.
    const { rows } = await store.db.query<{ state: string, payments: number, events: number, outbox: number }>(
      `SELECT i.state, (SELECT count(*)::integer FROM payments p WHERE p.invoice_id = i.id) AS payments,
         (SELECT count(*)::integer FROM outbox_events e WHERE e.invoice_id = i.id) AS events,
         (SELECT count(*)::integer FROM outbox o JOIN outbox_events e ON e.id = o.event_id WHERE e.invoice_id = i.id) AS outbox
       FROM invoices i`
    )
    assert.ok(rows.length >= created.size && rows.length <= created.size + 3, `${rows.length} invoices for ${created.size} reported`)
    for (const row of rows) {
      assert.ok(
        (row.state === 'pending' && row.payments === 0 && row.events === 0) ||
        (row.state === 'seen' && row.payments === 1 && row.events === 1 && row.outbox === 1),
        JSON.stringify(row)
      )
    }
    const seenRows = rows.filter(row => row.state === 'seen').length
    assert.ok(seenRows >= seen.size && seenRows <= seen.size + 3)
  })
})
