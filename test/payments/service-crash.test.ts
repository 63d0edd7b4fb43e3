/**
 * `kill -9` of the service itself (the built service, as `npm start` runs it, on the embedded
 * store) between "seen" and "confirmed", with the confirming block mined while it is down, then a
 * restart on the same DATA_DIR: the invoice ends confirmed exactly once, and the webhook for it
 * comes at least once, every copy with the same idempotency key. Kills at any moment of a write
 * are crash.test.ts's (the store alone, many times over).
 */
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { rmSync } from 'node:fs'
import { createServer } from 'node:http'
import { describe, it } from 'node:test'
import { openDatabase } from '../../src/db/open-database.js'
import { freshDataDir } from '../../scripts/pglite-template.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { listeningUrl, startService } from '../helpers/start-service.js'
import { waitFor } from '../helpers/wait-for.js'
import { openStream } from '../events/sse-client.js'

const PKOIN = 100_000_000
const SECRET = 'a-webhook-secret-of-32-characters-at-least'

type WithAfter = { after (fn: () => unknown): void }

interface Delivery { type: string, key: string }

async function startReceiver (t: WithAfter): Promise<{ url: string, received: Delivery[] }> {
  const received: Delivery[] = []
  const server = createServer((request, response) => {
    let body = ''
    request.setEncoding('utf8').on('data', (chunk: string) => { body += chunk }).on('end', () => {
      received.push({ type: (JSON.parse(body) as { type: string }).type, key: String(request.headers['idempotency-key']) })
      response.end()
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.after(() => new Promise(resolve => server.close(resolve)))
  const { port } = server.address() as { port: number }
  return { url: `http://127.0.0.1:${port}/hook`, received }
}

describe('a kill -9 of the service between seen and confirmed', () => {
  it('ends the invoice confirmed once after a restart, its webhook delivered at least once under one key', async (t) => {
    const node = await startEmulator(t)
    const [payer, receiver] = node.dataset.users.map(user => user.address) as [string, string]
    const dataDir = await freshDataDir()
    t.after(() => rmSync(dataDir, { recursive: true, force: true }))
    const hook = await startReceiver(t)
    const env = {
      POCKETNET_NODES: node.url,
      EVENTS_INGEST: 'true',
      PAYMENT_ADDRESS: receiver,
      PAYMENT_TIPS: 'true',
      PAYMENT_CONFIRMATIONS: '2',
      DATA_DIR: dataDir,
      PAYMENT_WEBHOOK_URL: hook.url,
      PAYMENT_WEBHOOK_SECRET: SECRET,
      // Not a test of load shedding: a machine busy with other test lanes would delay the loop.
      MAX_EVENT_LOOP_DELAY_MS: '0',
    }
    const first = startService(t, env)
    const url = await listeningUrl(first)
    const created = await fetch(`${url}/api/payments/tips`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ amount: PKOIN }) })
    assert.equal(created.status, 200)
    const invoice = (await created.json() as { data: { id: string, memo: string } }).data
    // An answer other than 200 (the process still starting its store) is waited past, not read.
    const state = async (base: string): Promise<string> => {
      const response = await fetch(`${base}/api/payments/invoices/${invoice.id}`)
      const body = await response.json() as { data?: { state: string } }
      return response.status === 200 && body.data !== undefined ? body.data.state : `status ${response.status}`
    }

    const paid = node.addTransaction({ inputs: [{ address: payer, amount: 2 * PKOIN }], outputs: [{ address: receiver, amount: PKOIN }, { memo: Buffer.from(invoice.memo).toString('hex'), amount: 0 }] })
    node.mineBlock()
    // Reported by the front-end: the watcher's own discovery is service.test.ts's, and a block
    // mined while the process still starts its ingest would race it here.
    const reported = await fetch(`${url}/api/payments/invoices/${invoice.id}/transaction`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ txid: paid.txid }) })
    assert.equal(reported.status, 200)
    await waitFor('the invoice seen', async () => await state(url) === 'seen')

    first.child.kill('SIGKILL')
    assert.deepEqual(await first.exited, { code: null, signal: 'SIGKILL' })
    // The confirming block comes while no service ingests the chain.
    node.mineBlock()

    const second = startService(t, env)
    const again = await listeningUrl(second)
    await waitFor('the invoice confirmed after the restart', async () => await state(again) === 'confirmed')
    await waitFor('the confirmed webhook', () => hook.received.some(delivery => delivery.type === 'confirmed'))
    const confirmedKeys = new Set(hook.received.filter(delivery => delivery.type === 'confirmed').map(delivery => delivery.key))
    assert.equal(confirmedKeys.size, 1, 'every copy of the confirmed webhook carries one idempotency key')
    second.child.kill('SIGTERM')
    await second.exited

    const db = await openDatabase({ dataDir })
    t.after(() => db.close())
    const { rows } = await db.query<{ type: string, count: number }>("SELECT type, count(*)::integer AS count FROM outbox_events WHERE invoice_id = $1 AND type IN ('seen', 'confirmed') GROUP BY type ORDER BY type", [invoice.id])
    assert.deepEqual(rows, [{ type: 'confirmed', count: 1 }, { type: 'seen', count: 1 }])
  })

  it('finds a payment mined while it was down, with no report from the front-end, once restarted', async (t) => {
    const node = await startEmulator(t)
    const [payer, receiver] = node.dataset.users.map(user => user.address) as [string, string]
    const dataDir = await freshDataDir()
    t.after(() => rmSync(dataDir, { recursive: true, force: true }))
    const env = { POCKETNET_NODES: node.url, EVENTS_INGEST: 'true', PAYMENT_ADDRESS: receiver, PAYMENT_TIPS: 'true', PAYMENT_CONFIRMATIONS: '2', DATA_DIR: dataDir, MAX_EVENT_LOOP_DELAY_MS: '0' }
    const first = startService(t, env)
    const url = await listeningUrl(first)
    const invoice = ((await (await fetch(`${url}/api/payments/tips`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ amount: PKOIN }) })).json()) as { data: { id: string, memo: string } }).data
    // Two blocks while it ingests the chain: the first is handled once the second comes.
    const blocks = await openStream(t, `${url}/api/events?topics=blocks`)
    await waitFor('the ingest registered at the node', () => node.webSocket.registrations().length > 0)
    node.mineBlock()
    node.mineBlock()
    const handled = node.height - 1
    await blocks.until('the second block', frames => frames.some(frame => frame.data.height === node.height))
    first.child.kill('SIGTERM')
    await first.exited
    const before = await openDatabase({ dataDir })
    const { rows } = await before.query<{ height: number }>('SELECT height FROM chain_cursors')
    await before.close()
    assert.deepEqual(rows, [{ height: handled }], 'the cursor is at the last block whose payments were checked')

    // Paid and confirmed while no service ingests the chain; nobody reports it.
    node.addTransaction({ inputs: [{ address: payer, amount: 2 * PKOIN }], outputs: [{ address: receiver, amount: PKOIN }, { memo: Buffer.from(invoice.memo).toString('hex'), amount: 0 }] })
    node.mineBlock()
    node.mineBlock()

    const second = startService(t, env)
    const again = await listeningUrl(second)
    const state = async (): Promise<string> => {
      const response = await fetch(`${again}/api/payments/invoices/${invoice.id}`)
      const body = await response.json() as { data?: { state: string } }
      return response.status === 200 && body.data !== undefined ? body.data.state : `status ${response.status}`
    }
    await waitFor('the invoice confirmed from the blocks read back', async () => await state() === 'confirmed')
  })
})
