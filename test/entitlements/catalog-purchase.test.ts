/**
 * A catalogue item bought through the service on the emulator's chain: two users signed in, one
 * buys; the item is granted on confirmation only (not at `seen`), to the buyer only, once; the
 * buyer's live events tell it; the other user's `GET /api/me/entitlements` never shows it.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { testKey } from '../../devnode/bastyon-host.js'
import { openStream } from '../events/sse-client.js'
import { startApp } from '../helpers/build-app.js'
import { APP_ID, bearer, postJson, signIn } from '../helpers/sign-in.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { waitFor } from '../helpers/wait-for.js'
import { freshDataDir } from '../payments/databases.js'

type WithAfter = { after (fn: () => unknown): void }

const PKOIN = 100_000_000
const MONTH_S = 2_592_000
const INVOICE_TTL_S = 900
const ITEMS = [
  { sku: 'premium.monthly', title: 'Premium, one month', priceSat: 3 * PKOIN / 2, durationS: MONTH_S },
  { sku: 'lifetime', title: 'Everything, for good', priceSat: 20 * PKOIN },
]

const memoHex = (memo: string): string => Buffer.from(memo, 'utf8').toString('hex')

async function shop (t: WithAfter, now: () => number = Date.now) {
  const node = await startEmulator(t)
  const [payer, receiver] = node.dataset.users.map(user => user.address) as [string, string]
  const dataDir = await freshDataDir()
  const folder = mkdtempSync(join(tmpdir(), 'catalog-'))
  t.after(() => { rmSync(dataDir, { recursive: true, force: true }); rmSync(folder, { recursive: true, force: true }) })
  const catalogFile = join(folder, 'catalog.json')
  writeFileSync(catalogFile, JSON.stringify({ items: ITEMS }))
  const app = await startApp(t, {
    nodes: [node.url],
    env: { EVENTS_INGEST: 'true', PAYMENT_ADDRESS: receiver, PAYMENT_CONFIRMATIONS: '2', PAYMENT_INVOICE_TTL_S: String(INVOICE_TTL_S), DATA_DIR: dataDir, BASTYON_APP_ID: APP_ID, CATALOG_FILE: catalogFile },
    now,
  })
  await waitFor('the watcher to ingest the chain', () => {
    const reported = app.app.events.since(`${app.app.events.lastId.split('-')[0] as string}-0`, new Set(['blocks']))
    return reported !== 'gap' && reported.length > 0
  })
  const alice = await signIn(app, { key: testKey('alice buys'), issued: now() })
  const bob = await signIn(app, { key: testKey('bob looks'), issued: now() })
  return { node, app, payer, receiver, alice, bob }
}

describe('a catalogue item bought through the service', () => {
  it('is granted on confirmation only, to the buyer only, once, and told on the buyer\'s own events', async (t) => {
    const { node, app, payer, receiver, alice, bob } = await shop(t)
    const catalog = await app.get('/api/catalog')
    assert.deepEqual([catalog.status, catalog.body.data.items], [200, ITEMS])

    const bought = await postJson(app, '/api/catalog/premium.monthly/invoice', undefined, bearer(alice.token).headers)
    assert.equal(bought.status, 200, JSON.stringify(bought.body))
    const invoice = bought.body.data
    assert.deepEqual([invoice.amount, invoice.receiver, invoice.state, invoice.metadata], [150_000_000, receiver, 'pending', { sku: 'premium.monthly' }])
    assert.deepEqual(invoice.grant, { sku: 'premium.monthly', to: alice.address, durationS: MONTH_S })
    assert.equal(bought.headers.get('cache-control'), 'no-store')

    const ticket = (await postJson(app, '/api/events/ticket', undefined, bearer(alice.token).headers)).body.data.ticket
    const own = await openStream(t, `${app.url}/api/events?topics=blocks&ticket=${ticket}`)
    const payment = await openStream(t, `${app.url}/api/events?topics=payment:${invoice.id}`)
    const mine = async (token: string) => {
      const answer = await app.get('/api/me/entitlements', bearer(token))
      assert.equal(answer.status, 200, JSON.stringify(answer.body))
      assert.equal(answer.headers.get('cache-control'), 'no-store')
      return answer.body.data.entitlements
    }

    node.addTransaction({ inputs: [{ address: payer, amount: 10 * PKOIN }], outputs: [{ address: receiver, amount: 150_000_000 }, { memo: memoHex(invoice.memo), amount: 0 }] })
    node.mineBlock()
    await payment.until('seen', frames => frames.some(frame => frame.data.type === 'seen'))
    assert.deepEqual(await mine(alice.token), [], 'nothing granted at seen')
    assert.equal(await app.app.entitlements.has(alice.address, 'premium.monthly'), false)

    node.mineBlock()
    await payment.until('confirmed', frames => frames.some(frame => frame.data.type === 'confirmed'))
    const confirmedFrame = payment.frames.find(frame => frame.data.type === 'confirmed')
    assert.equal(confirmedFrame?.data.grant.sku, 'premium.monthly', 'the payment topic tells the grant with the confirmation')
    // The check made at seen was cached: the confirmation's grant dropped it.
    assert.equal(await app.app.entitlements.has(alice.address, 'premium.monthly'), true)
    assert.equal(await app.app.entitlements.has(bob.address, 'premium.monthly'), false)
    const held = await mine(alice.token)
    assert.equal(held.length, 1)
    const [entitlement] = held
    assert.deepEqual([entitlement.sku, entitlement.invoiceId], ['premium.monthly', invoice.id])
    assert.equal(Date.parse(entitlement.expiresAt) - Date.parse(entitlement.grantedAt), MONTH_S * 1000)
    assert.deepEqual(await mine(bob.token), [], 'another user never sees it')
    await own.until('the grant on alice\'s own topic', frames => frames.some(frame => frame.event === 'entitlement'))
    const told = own.frames.find(frame => frame.event === 'entitlement')
    assert.deepEqual(told?.data, { topic: `user:${alice.address}`, change: 'granted', ...entitlement })

    // More blocks, the watcher's re-checks, the invoice read again: still one grant.
    node.mineBlock()
    await waitFor('the next block reported', () => {
      const blocks = app.app.events.since(`${app.app.events.lastId.split('-')[0] as string}-0`, new Set(['blocks']))
      return blocks !== 'gap' && blocks.some(event => event.data.height === node.height)
    })
    assert.equal((await app.get(`/api/payments/invoices/${invoice.id}`)).body.data.state, 'confirmed')
    assert.equal((await app.app.entitlements.history(alice.address)).length, 1)
    assert.deepEqual(await app.app.entitlements.history(bob.address), [])
  })

  it('refuses to sell without a signed-in buyer (401), an item it does not sell (404), a malformed SKU (400)', async (t) => {
    const { app, alice } = await shop(t)
    const anonymous = await postJson(app, '/api/catalog/lifetime/invoice')
    assert.deepEqual([anonymous.status, anonymous.body.code], [401, 'AUTH_MISSING'])
    const unknown = await postJson(app, '/api/catalog/gold/invoice', undefined, bearer(alice.token).headers)
    assert.deepEqual([unknown.status, unknown.body.message], [404, 'Item not found'])
    const malformed = await postJson(app, '/api/catalog/Gold!/invoice', undefined, bearer(alice.token).headers)
    assert.equal(malformed.status, 400)
    assert.equal((await app.get('/api/me/entitlements')).status, 401)
    const forGood = await postJson(app, '/api/catalog/lifetime/invoice', undefined, bearer(alice.token).headers)
    assert.deepEqual(forGood.body.data.grant, { sku: 'lifetime', to: alice.address })
  })

  it('answers the buyer\'s open purchase of an item again, until less than half its time is left', async (t) => {
    let at = Date.now()
    const { app, alice, bob } = await shop(t, () => at)
    const buy = async (sku: string, token: string): Promise<string> => {
      const answer = await postJson(app, `/api/catalog/${sku}/invoice`, undefined, bearer(token).headers)
      assert.equal(answer.status, 200, JSON.stringify(answer.body))
      return answer.body.data.id
    }
    const first = await buy('premium.monthly', alice.token)
    assert.equal(await buy('premium.monthly', alice.token), first, 'asked again: the same invoice')
    assert.notEqual(await buy('lifetime', alice.token), first, 'another item: an invoice of its own')
    assert.notEqual(await buy('premium.monthly', bob.token), first, 'another buyer: an invoice of his own')
    at += (INVOICE_TTL_S / 2) * 1000 - 1000
    assert.equal(await buy('premium.monthly', alice.token), first, 'more than half its time left')
    at += 2000
    const second = await buy('premium.monthly', alice.token)
    assert.notEqual(second, first, 'less than half its time left: a new one')
    assert.equal(await buy('premium.monthly', alice.token), second)
  })
})
