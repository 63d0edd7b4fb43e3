/**
 * `kill -9` of a process confirming invoices that grant, on the embedded store, at moments that
 * fall anywhere in its writes: after each crash, every invoice reported confirmed has its grant,
 * and no invoice is confirmed without its grant or has a grant without being confirmed: the
 * confirmation and its grant are one commit.
 */
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { describe, it } from 'node:test'
import { createPaymentStore } from '../../src/payments/create-payment-store.js'
import { freshDataDir } from '../payments/databases.js'
import { writeThenKill } from '../helpers/write-then-kill.js'

const WRITER = new URL('./grant-crash-writer.ts', import.meta.url).pathname

describe('a crash of the process confirming invoices that grant', () => {
  it('never leaves a confirmation without its grant, nor a grant without its confirmation', async (t) => {
    const dataDir = await freshDataDir()
    t.after(() => rmSync(dataDir, { recursive: true, force: true }))
    const confirmed = new Set<string>()
    for (const lines of [17, 31, 44]) {
      const printed = await writeThenKill(WRITER, [dataDir], lines)
      assert.equal(printed[0], 'open')
      for (const line of printed.slice(1)) confirmed.add((line.split(' ') as [string, string])[1])
    }
    assert.ok(confirmed.size >= 80, `${confirmed.size} invoices confirmed`)

    const store = await createPaymentStore({ dataDir })
    t.after(() => store.close())
    const { rows } = await store.db.query<{ id: string, state: string, grants: number, events: number }>(
      `SELECT i.id, i.state, (SELECT count(*)::integer FROM entitlement_grants g WHERE g.invoice_id = i.id) AS grants,
         (SELECT count(*)::integer FROM outbox_events e WHERE e.invoice_id = i.id AND e.type = 'confirmed' AND e.payload ? 'grant') AS events
       FROM invoices i`
    )
    const byId = new Map(rows.map(row => [row.id, row]))
    for (const id of confirmed) assert.deepEqual(byId.get(id), { id, state: 'confirmed', grants: 1, events: 1 }, id)
    for (const row of rows) {
      assert.ok((row.state === 'pending' && row.grants === 0 && row.events === 0) || (row.state === 'confirmed' && row.grants === 1 && row.events === 1), JSON.stringify(row))
    }
    // Committed but not reported when the kill came: at most one confirmation per crash.
    const confirmedRows = rows.filter(row => row.state === 'confirmed').length
    assert.ok(confirmedRows >= confirmed.size && confirmedRows <= confirmed.size + 3)
  })
})
