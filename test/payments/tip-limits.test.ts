/**
 * Anonymous invoices are capped (issue #39, finding 6): each client may ask for a few tips a
 * minute (429 past it), and past PAYMENT_TIPS_MAX_OPEN invoices open at once every tip is refused
 * with 503 and Retry-After, in the envelope.
 */
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { describe, it } from 'node:test'
import { startApp, type TestApp } from '../helpers/build-app.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { freshDataDir } from './databases.js'

type WithAfter = { after (fn: () => unknown): void }

async function service (t: WithAfter, env: Record<string, string>): Promise<TestApp> {
  const node = await startEmulator(t)
  const receiver = node.dataset.users[1]?.address as string
  const dataDir = await freshDataDir()
  t.after(() => rmSync(dataDir, { recursive: true, force: true }))
  return startApp(t, { nodes: [node.url], env: { PAYMENT_ADDRESS: receiver, PAYMENT_TIPS: 'true', DATA_DIR: dataDir, ...env } })
}

const tip = async (app: TestApp, from = '127.0.0.1') => {
  const response = await fetch(`${app.url}/api/payments/tips`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': from }, body: JSON.stringify({ amount: 1_000_000 }) })
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: await response.json() as any }
}

describe('anonymous tips', () => {
  it('refuses a client past its tips per minute with 429', async (t) => {
    const app = await service(t, { PAYMENT_TIP_RATE_LIMIT_MAX: '2' })
    assert.deepEqual([(await tip(app)).status, (await tip(app)).status], [200, 200])
    const refused = await tip(app)
    assert.equal(refused.status, 429)
    assert.ok(Number(refused.retryAfter) > 0)
    assert.equal(refused.body.message, 'Too many requests')
  })

  it('refuses every tip with 503 and Retry-After while too many invoices are open', async (t) => {
    const app = await service(t, { PAYMENT_TIPS_MAX_OPEN: '3', PAYMENT_TIP_RATE_LIMIT_MAX: '100', TRUST_PROXY: '127.0.0.1' })
    // Three clients, one invoice each: the cap is for all of them together.
    for (const from of ['192.0.2.1', '192.0.2.2', '192.0.2.3']) assert.equal((await tip(app, from)).status, 200)
    const refused = await tip(app, '192.0.2.4')
    assert.deepEqual([refused.status, refused.retryAfter, refused.body.message], [503, '60', 'Service unavailable'])
    assert.match(refused.body.error, /Too many invoices are open \(3\)/)
    // An invoice of the app's own is not an anonymous tip: the cap does not stop it.
    assert.equal((await app.app.payments?.createInvoice({ amount: 5000 }))?.state, 'pending')
  })
})
