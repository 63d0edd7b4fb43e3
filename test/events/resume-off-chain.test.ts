/**
 * The service restarted on a kept DATA_DIR against a node whose chain is not the one the database
 * remembers (issue #39, finding 3): `npm run demo` restarted, its emulator back at its start
 * height while the payments cursor says twelve blocks more; or a node resynced, replaced, or of
 * another network. The block resumed from is a re-org: logged once, counted, and the chain read
 * again, so a tip paid and mined on the node's chain settles without the front-end reporting it.
 */
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { describe, it } from 'node:test'
import { openDatabase } from '../../src/db/open-database.js'
import { freshDataDir } from '../payments/databases.js'
import { startApp } from '../helpers/build-app.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { waitFor } from '../helpers/wait-for.js'

const PKOIN = 100_000_000

describe('a restart against a node on another chain', () => {
  it('takes the block the payments cursor remembers for a re-org, says so once, and settles a tip paid on the node\'s chain', async (t) => {
    const first = await startEmulator(t)
    const start = first.height
    const [payer, receiver] = first.dataset.users.map(user => user.address) as [string, string]
    const dataDir = await freshDataDir()
    t.after(() => rmSync(dataDir, { recursive: true, force: true }))
    const env = { EVENTS_INGEST: 'true', PAYMENT_ADDRESS: receiver, PAYMENT_TIPS: 'true', PAYMENT_CONFIRMATIONS: '2', DATA_DIR: dataDir }

    // The last run: its chain goes thirteen blocks up, and the cursor keeps the last block handled.
    const before = await startApp(t, { nodes: [first.url], env })
    await waitFor('the ingest registered at the node', () => first.webSocket.registrations().length > 0)
    for (let i = 0; i < 13; i++) first.mineBlock()
    await waitFor('the last block heard', () => before.app.events.lastBlock?.height === start + 13)
    await before.app.close()
    const db = await openDatabase({ dataDir })
    const { rows } = await db.query<{ height: number, block_hash: string }>('SELECT height, block_hash FROM chain_cursors')
    await db.close()
    const cursor = first.chain.block(start + 12)
    assert.deepEqual(rows, [{ height: start + 12, block_hash: cursor?.hash }])

    // This run: a node whose chain starts again at the same height, with other blocks.
    const node = await startEmulator(t)
    assert.equal(node.height, start)
    const lines: Array<{ level: number, code?: string, msg: string }> = []
    const app = await startApp(t, { nodes: [node.url], env: { ...env, LOG_LEVEL: 'warn' }, logStream: { write: line => { lines.push(JSON.parse(line)) } } })
    const created = await fetch(`${app.url}/api/payments/tips`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ amount: PKOIN }) })
    assert.equal(created.status, 200)
    const invoice = (await created.json() as { data: { id: string, memo: string } }).data
    node.addTransaction({ inputs: [{ address: payer, amount: 2 * PKOIN }], outputs: [{ address: receiver, amount: PKOIN }, { memo: Buffer.from(invoice.memo).toString('hex'), amount: 0 }] })
    node.mineBlock()
    node.mineBlock()
    // Nobody reports the payment: the watcher finds it in the blocks the ingest reads.
    await waitFor('the tip confirmed', async () => (await app.get(`/api/payments/invoices/${invoice.id}`)).body.data?.state === 'confirmed')

    const offChain = lines.filter(line => line.code === 'EVENTS_ERR_OFF_CHAIN')
    assert.equal(offChain.length, 1, 'one warn line')
    assert.equal(offChain[0]?.level, 40)
    assert.match(offChain[0]?.msg ?? '', new RegExp(`^Chain events: The block resumed from is not on the node's chain: the node's chain ends at \\d+, below block ${start + 12} \\(${cursor?.hash as string}\\)\\. Reported as a re-org from \\d+ `))
    const metrics = (await app.get('/metrics')).body as string
    assert.match(metrics, /^events_chain_reorgs_total\{found="resume"\} 1$/m)
  })
})
