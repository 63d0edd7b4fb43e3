/**
 * `kill -9` of the service itself (built, as `npm start` runs it, on the embedded database) while
 * a catalogue purchase is `seen`, the confirming block mined while it is down: after a restart on
 * the same DATA_DIR the invoice is confirmed and the buyer holds the item, granted once.
 * Kills at any moment of the writes themselves are grant-crash.test.ts's.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { testKey } from '../../devnode/bastyon-host.js'
import { openDatabase } from '../../src/db/open-database.js'
import { APP_ID, bearer, postJson, signIn } from '../helpers/sign-in.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { processAsTestApp, startService } from '../helpers/start-service.js'
import { waitFor } from '../helpers/wait-for.js'
import { freshDataDir } from '../payments/databases.js'

const PKOIN = 100_000_000
const BUYER = testKey('a buyer whose server is killed')

describe('a kill -9 of the service while a catalogue purchase is seen', () => {
  it('ends the invoice confirmed and the item granted once to the buyer after a restart', async (t) => {
    const node = await startEmulator(t)
    const [payer, receiver] = node.dataset.users.map(user => user.address) as [string, string]
    const dataDir = await freshDataDir()
    const folder = mkdtempSync(join(tmpdir(), 'catalog-'))
    t.after(() => { rmSync(dataDir, { recursive: true, force: true }); rmSync(folder, { recursive: true, force: true }) })
    writeFileSync(join(folder, 'catalog.json'), JSON.stringify({ items: [{ sku: 'premium', title: 'Premium', priceSat: PKOIN, durationS: 86_400 }] }))
    const env = {
      POCKETNET_NODES: node.url,
      EVENTS_INGEST: 'true',
      PAYMENT_ADDRESS: receiver,
      PAYMENT_CONFIRMATIONS: '2',
      DATA_DIR: dataDir,
      BASTYON_APP_ID: APP_ID,
      CATALOG_FILE: join(folder, 'catalog.json'),
      MAX_EVENT_LOOP_DELAY_MS: '0',
    }
    const first = startService(t, env)
    const before = await processAsTestApp(first)
    const buyer = await signIn(before, { key: BUYER, issued: Date.now() })
    const bought = await postJson(before, '/api/catalog/premium/invoice', undefined, bearer(buyer.token).headers)
    assert.equal(bought.status, 200, JSON.stringify(bought.body))
    const invoice = bought.body.data
    const paid = node.addTransaction({ inputs: [{ address: payer, amount: 2 * PKOIN }], outputs: [{ address: receiver, amount: PKOIN }, { memo: Buffer.from(invoice.memo).toString('hex'), amount: 0 }] })
    node.mineBlock()
    const reported = await postJson(before, `/api/payments/invoices/${invoice.id}/transaction`, { txid: paid.txid })
    assert.equal(reported.body.data.invoice.state, 'seen')
    assert.deepEqual((await before.get('/api/me/entitlements', bearer(buyer.token))).body.data.entitlements, [])

    first.child.kill('SIGKILL')
    assert.deepEqual(await first.exited, { code: null, signal: 'SIGKILL' })
    node.mineBlock()

    const second = startService(t, env)
    const after = await processAsTestApp(second)
    const state = async (): Promise<string> => {
      const answer = await after.get(`/api/payments/invoices/${invoice.id}`)
      return answer.status === 200 ? answer.body.data.state : `status ${answer.status}`
    }
    await waitFor('the invoice confirmed after the restart', async () => await state() === 'confirmed')
    // Sessions were in the killed process's memory: the buyer signs in again, with the same key.
    const again = await signIn(after, { key: BUYER, issued: Date.now() })
    assert.equal(again.address, buyer.address)
    const held = (await after.get('/api/me/entitlements', bearer(again.token))).body.data.entitlements
    assert.deepEqual(held.map((each: { sku: string, invoiceId: string }) => [each.sku, each.invoiceId]), [['premium', invoice.id]])
    second.child.kill('SIGTERM')
    await second.exited

    const db = await openDatabase({ dataDir })
    t.after(() => db.close())
    const { rows } = await db.query<{ address: string, sku: string }>('SELECT address, sku FROM entitlement_grants WHERE invoice_id = $1', [invoice.id])
    assert.deepEqual(rows, [{ address: buyer.address, sku: 'premium' }])
  })
})
