/**
 * bastyon-miniapp-client through its public exports, against the real service on loopback in
 * front of the emulator: sign-in through a stand-in host that signs as Bastyon's SDK does, calls
 * and their errors in the envelope's words, live events by long-polling (Node 20 has no
 * EventSource; the stream is tested in Chromium, test/e2e/miniapp-client.test.ts), and a tip paid
 * through the host, reported, and resolved once the chain confirms it; notifications opted in
 * through the host's registration at a proxy emulator, then the service.
 */
import assert from 'node:assert/strict'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { createClient, demoHost, MiniAppError, satoshiOfPkoin, txidOf, type Host, type Invoice, type MiniAppEvent } from 'bastyon-miniapp-client'
import { addressOf, hostSignature, sdkSign, testKey } from '../../devnode/bastyon-host.js'
import { PROXY_SESSION, startBastyonProxy, type BastyonProxy } from '../../devnode/bastyon-proxy.js'
import { mountDemoNotifications } from '../../devnode/demo-notifications.js'
import { demoSignerKey, mountDemoSigner } from '../../devnode/demo-signer.js'
import { mountDemoWallet } from '../../devnode/demo-wallet.js'
import type { Emulator } from '../../devnode/server.js'
import { startApp, type TestApp } from '../helpers/build-app.js'
import { APP_ID } from '../helpers/sign-in.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { waitFor } from '../helpers/wait-for.js'
import { freshDataDir } from '../payments/databases.js'

type WithAfter = { after (fn: () => unknown): void }

const USER_KEY = testKey('miniapp-client user')
const USER = addressOf(USER_KEY)
const RECEIVER = addressOf(testKey('miniapp-client receiver'))
const PKOIN = 100_000_000

/** What the catalogue tests sell. */
const CATALOG = { items: [{ sku: 'premium', title: 'Premium, one month', priceSat: 2 * PKOIN, durationS: 2_592_000 }] }

async function service (t: WithAfter, demo = false, catalog = false): Promise<{ node: Emulator, app: TestApp }> {
  const node = await startEmulator(t, { controls: demo })
  const dataDir = await freshDataDir()
  t.after(() => rmSync(dataDir, { recursive: true, force: true }))
  const catalogFile = join(dataDir, 'catalog.json')
  if (catalog) writeFileSync(catalogFile, JSON.stringify(CATALOG))
  const app = await startApp(t, {
    nodes: [node.url],
    env: {
      BASTYON_APP_ID: APP_ID,
      PAYMENT_ADDRESS: RECEIVER,
      PAYMENT_TIPS: 'true',
      PAYMENT_CONFIRMATIONS: '2',
      PAYMENT_CONFIRM_NODES: '1',
      DATA_DIR: dataDir,
      EVENTS_INGEST: 'true',
      EVENTS_POLL_WAIT_MS: '2000',
      ...(catalog ? { CATALOG_FILE: catalogFile } : {}),
    },
    // As `npm run demo` has them: a signer and a wallet for a plain browser.
    ...(demo ? { extend: (fastify) => { mountDemoWallet(fastify, { emulatorUrl: node.url }); mountDemoSigner(fastify, { appId: APP_ID }) } } : {}),
  })
  await waitFor('the service to ingest the chain', () => app.app.events.lastId.split('-')[1] !== '0')
  return { node, app }
}

/** Bastyon's SDK as the client uses it: signs as the host does, pays as the host's wallet does (the amount to the receiver, the memo in an OP_RETURN). */
function standInHost (node: Emulator): Host & { paid: string[] } {
  const paid: string[] = []
  return {
    paid,
    async sign (text) {
      return sdkSign(text, APP_ID, { key: USER_KEY, issued: Date.now() })
    },
    async payment (request) {
      const [to] = request.recievers
      const amount = Math.round((to?.amount ?? 0) * PKOIN)
      const transaction = node.addTransaction({
        inputs: [{ address: USER, amount: amount + PKOIN }],
        outputs: [{ address: to?.address as string, amount }, { memo: Buffer.from(request.message, 'utf8').toString('hex'), amount: 0 }],
      })
      paid.push(transaction.txid)
      // The host resolves with its action object, which names the txid `transaction`.
      return { transaction: transaction.txid }
    },
  }
}

describe('bastyon-miniapp-client', () => {
  it('signs in through the host, calls signed-in routes, and signs out here and on the service', async (t) => {
    const { node, app } = await service(t)
    const client = createClient({ baseUrl: app.url, host: standInHost(node), EventSource: undefined })
    assert.equal(client.session, undefined)
    await assert.rejects(client.request('/api/me', { auth: true }), (error: MiniAppError) => error instanceof MiniAppError && error.status === 401)

    const session = await client.signIn()
    assert.equal(session.address, USER)
    assert.ok(Date.parse(session.expiresAt) > Date.now())
    const me = await client.request<{ address: string }>('/api/me', { auth: true })
    assert.equal(me.address, USER)

    const token = session.token
    await client.signOut()
    assert.equal(client.session, undefined)
    const after = await fetch(`${app.url}/api/me`, { headers: { authorization: `Bearer ${token}` } })
    assert.equal(after.status, 401, 'the service ended the session too')
  })

  it('forgets a session the service no longer knows, and keeps one in the store given across reloads', async (t) => {
    const { node, app } = await service(t)
    const kept = new Map<string, string>()
    const store = { getItem: (key: string) => kept.get(key) ?? null, setItem: (key: string, value: string) => { kept.set(key, value) }, removeItem: (key: string) => { kept.delete(key) } }
    const first = createClient({ baseUrl: app.url, host: standInHost(node), sessionStore: store })
    const session = await first.signIn()
    // A reload: a new client, the same store.
    const reloaded = createClient({ baseUrl: app.url, sessionStore: store })
    assert.deepEqual(reloaded.session, session)
    // Signed out elsewhere: the next signed-in call is a 401, and the session goes.
    await fetch(`${app.url}/api/auth/session`, { method: 'DELETE', headers: { authorization: `Bearer ${session.token}` } })
    await assert.rejects(reloaded.request('/api/me', { auth: true }), { name: 'MiniAppError', status: 401 })
    assert.equal(reloaded.session, undefined)
    assert.equal(kept.size, 0)
  })

  it('says why in the service\'s words: a 400, a 404, and no service at all', async (t) => {
    const { node, app } = await service(t)
    const client = createClient({ baseUrl: app.url })
    await assert.rejects(client.request('/api/payments/tips', { method: 'POST', body: { amount: 1 } }), (error: MiniAppError) => {
      assert.equal(error.status, 400)
      assert.match(error.detail ?? '', /amount must be from/)
      assert.equal(error.message, `${error.reason}: ${error.detail as string}`)
      return true
    })
    await assert.rejects(client.request('/api/payments/invoices/inv_AAAAAAAAAAAAAAAAAAAAAA'), { status: 404 })
    await assert.rejects(createClient({ baseUrl: 'http://127.0.0.1:9' }).request('/api/nodeinfo'), { status: 0, reason: 'The service cannot be reached' })
    await assert.rejects(createClient({ baseUrl: app.url }).signIn(), { status: 0, reason: 'Not signed in' })
    const refusing = createClient({ baseUrl: app.url, host: { sign: async () => { throw new Error('The user said no') } } })
    await assert.rejects(refusing.signIn(), { reason: 'Not signed in', detail: 'The user said no' })
    assert.equal(node.height > 0, true)
  })

  it('follows blocks by long-polling where there is no EventSource, resumes from the last id, and stops on close', async (t) => {
    const { node, app } = await service(t)
    const client = createClient({ baseUrl: app.url })
    const events: MiniAppEvent[] = []
    const connects: string[] = []
    const following = client.follow(['blocks'], event => { events.push(event) }, { onConnect: transport => connects.push(transport) })
    t.after(() => following.close())
    assert.equal(following.transport, 'poll')
    // A poll without `since` waits for what comes next: the block is mined once it waits.
    await waitFor('the first poll to wait', () => app.app.eventStreams.polls === 1)
    node.mineBlock()
    await waitFor('a block event', () => events.some(event => event.event === 'block'))
    const block = events.find(event => event.event === 'block') as MiniAppEvent
    assert.equal(block.data.topic, 'blocks')
    assert.equal(typeof block.data.height, 'number')
    assert.deepEqual(connects, ['poll'], 'told once the first poll answered, not again while it goes on')
    const resumeFrom = following.lastEventId as string
    assert.ok(resumeFrom !== undefined)
    following.close()
    const lastHeard = Math.max(...events.filter(event => event.event === 'block').map(event => event.data.height as number))

    // Blocks made while no one follows (and any the first poll had not brought) come first to a
    // client that resumes, each once and in order.
    node.mineBlock()
    node.mineBlock()
    const tip = node.height
    const resumed: MiniAppEvent[] = []
    const again = client.follow(['blocks'], event => { resumed.push(event) }, { since: resumeFrom })
    t.after(() => again.close())
    await waitFor('the missed blocks', () => resumed.some(event => event.data.height === tip))
    const heights = resumed.map(event => event.data.height as number)
    assert.deepEqual(heights, Array.from({ length: tip - lastHeard }, (_, i) => lastHeard + 1 + i))
    again.close()
    const count = resumed.length
    node.mineBlock()
    await new Promise(resolve => setTimeout(resolve, 50))
    assert.equal(resumed.length, count, 'nothing after close')
  })

  it('pays a tip through the host, reports the txid and resolves once the chain confirms it, telling each state', async (t) => {
    const { node, app } = await service(t)
    const host = standInHost(node)
    const client = createClient({ baseUrl: app.url, host })
    const invoice = await client.request<Invoice>('/api/payments/tips', { method: 'POST', body: { amount: 2 * PKOIN } })
    const states: string[] = []
    const paid = client.pay(invoice, { onUpdate: next => { states.push(`${next.state}:${next.confirmations}`) } })
    await waitFor('the host to pay', () => host.paid.length === 1)
    // Blocks until it resolves: one holds the payment, the next confirms it.
    let settled = false
    paid.then(() => { settled = true }, () => { settled = true })
    await waitFor('the invoice to be confirmed', () => {
      if (!settled && states.length > 0) node.mineBlock()
      return settled
    })
    const confirmed = await paid
    assert.equal(confirmed.id, invoice.id)
    assert.equal(confirmed.state, 'confirmed')
    assert.equal(confirmed.txid, host.paid[0])
    assert.equal(states.at(-1), `confirmed:${confirmed.confirmations}`)
    assert.ok(states.some(state => state.startsWith('pending') || state.startsWith('seen')), `states told: ${states.join(', ')}`)
  })

  it('lists the catalogue, buys an item through the host, and lists it among what the user holds once confirmed', async (t) => {
    const { node, app } = await service(t, false, true)
    const host = standInHost(node)
    const client = createClient({ baseUrl: app.url, host })
    assert.deepEqual(await client.catalog(), CATALOG.items)
    await assert.rejects(client.entitlements(), { name: 'MiniAppError', status: 401 })
    await assert.rejects(client.buy('premium'), { name: 'MiniAppError', status: 401 })
    await client.signIn()
    assert.deepEqual(await client.entitlements(), [])
    await assert.rejects(client.buy('gold'), { name: 'MiniAppError', status: 404, reason: 'Item not found' })
    const bought = client.buy('premium')
    await waitFor('the host to pay', () => host.paid.length === 1)
    let settled = false
    bought.then(() => { settled = true }, () => { settled = true })
    await waitFor('the purchase to be confirmed', () => {
      if (!settled) node.mineBlock()
      return settled
    })
    const invoice = await bought
    assert.deepEqual([invoice.state, invoice.amount, invoice.grant], ['confirmed', 2 * PKOIN, { sku: 'premium', to: USER, durationS: 2_592_000 }])
    const held = await client.entitlements()
    assert.deepEqual(held.map(each => [each.sku, each.invoiceId]), [['premium', invoice.id]])
    assert.equal(Date.parse(held[0]?.expiresAt as string) - Date.parse(held[0]?.grantedAt as string), 2_592_000_000)
  })

  it('refuses to pay without a host that pays, and rejects with the host\'s reason when it refuses', async (t) => {
    const { node, app } = await service(t)
    const invoice = await createClient({ baseUrl: app.url }).request<Invoice>('/api/payments/tips', { method: 'POST', body: { amount: 2 * PKOIN } })
    await assert.rejects(createClient({ baseUrl: app.url, host: { sign: async () => ({}) } }).pay(invoice), { reason: 'Not paid', detail: 'this host cannot pay from a mini-app (its SDK has no payment)' })
    // Hosts reject with plain strings too.
    // eslint-disable-next-line no-throw-literal
    const refusing: Host = { sign: async () => ({}), payment: async () => { throw 'Payment cancelled' } }
    await assert.rejects(createClient({ baseUrl: app.url, host: refusing }).pay(invoice), { reason: 'Not paid', detail: 'Payment cancelled' })
    const silent: Host = { sign: async () => ({}), payment: async () => ({ ok: true }) }
    await assert.rejects(createClient({ baseUrl: app.url, host: silent }).pay(invoice), { reason: 'Not paid', detail: 'the host sent no transaction' })
    assert.equal(node.chain.pendingTransactions.length, 0)
  })

  it('rejects with the service\'s refusal when the host\'s transaction does not pay the invoice, after telling its txid; each step alone too', async (t) => {
    const { node, app } = await service(t)
    // A host that pays the receiver with another memo: the service refuses to count it.
    const wrongMemo: Host = {
      sign: async () => ({}),
      async payment (request) {
        const [to] = request.recievers
        return node.addTransaction({
          inputs: [{ address: USER, amount: 3 * PKOIN }],
          outputs: [{ address: to?.address as string, amount: 2 * PKOIN }, { memo: Buffer.from('another memo', 'utf8').toString('hex'), amount: 0 }],
        }).txid
      },
    }
    const client = createClient({ baseUrl: app.url, host: wrongMemo })
    const invoice = await client.request<Invoice>('/api/payments/tips', { method: 'POST', body: { amount: 2 * PKOIN } })
    const sent: string[] = []
    await assert.rejects(client.pay(invoice, { onSent: txid => sent.push(txid) }), { reason: 'Not paid', detail: 'MEMO_MISMATCH' })
    assert.deepEqual(sent, [node.chain.pendingTransactions[0]?.txid])

    // The same, step by step: the txid the host sent, then the service's answer to it.
    const txid = await client.sendPayment(invoice)
    assert.equal(txid, node.chain.pendingTransactions[1]?.txid)
    const checked = await client.reportPayment(invoice, txid)
    assert.deepEqual([checked.refused, checked.invoice.id, checked.invoice.state], ['MEMO_MISMATCH', invoice.id, 'pending'])
  })

  it('signs in and pays in a plain browser\'s way against npm run demo: the demo signer and the demo wallet', async (t) => {
    const { node, app } = await service(t, true)
    const client = createClient({ baseUrl: app.url, host: demoHost({ baseUrl: app.url, signer: 'bob' }) })
    assert.equal((await client.signIn()).address, addressOf(demoSignerKey('bob')))
    const invoice = await client.request<Invoice>('/api/payments/tips', { method: 'POST', body: { amount: 123_456_789 } })
    let settled = false
    const paid = client.pay(invoice)
    paid.then(() => { settled = true }, () => { settled = true })
    await waitFor('the demo wallet to pay', () => node.chain.pendingTransactions.length === 1)
    assert.deepEqual(node.chain.pendingTransactions[0]?.outputs[0], { address: RECEIVER, amount: 123_456_789 })
    await waitFor('the invoice to be confirmed', () => {
      if (!settled) node.mineBlock()
      return settled
    })
    assert.equal((await paid).state, 'confirmed')
  })

  it('converts the host\'s PKOIN to satoshi by their decimal text', () => {
    assert.equal(satoshiOfPkoin(1.23456789), 123_456_789)
    assert.equal(satoshiOfPkoin(0.3), 30_000_000)
    assert.equal(satoshiOfPkoin(0.1 + 0.2), 30_000_000)
    for (const wrong of [0, -1, Number.NaN, Infinity, 1e9]) assert.throws(() => satoshiOfPkoin(wrong), { name: 'MiniAppError' }, String(wrong))
  })

  it('reads the txid out of what hosts resolve with', () => {
    const txid = 'AB'.repeat(32)
    assert.equal(txidOf(txid), txid.toLowerCase())
    assert.equal(txidOf({ transaction: txid }), txid.toLowerCase())
    assert.equal(txidOf({ txid }), txid.toLowerCase())
    for (const nothing of [undefined, null, '', 'abc', { transaction: 5 }, 'zz'.repeat(32)]) assert.equal(txidOf(nothing), '')
  })
})

describe('bastyon-miniapp-client storage', () => {
  const ADMIN_KEY = testKey('miniapp-client admin')
  /** Sign-in and storage on, in a fresh data directory; the admin may write collections. */
  async function storageService (t: WithAfter): Promise<{ node: Emulator, app: TestApp }> {
    const node = await startEmulator(t)
    const dataDir = await freshDataDir()
    t.after(() => rmSync(dataDir, { recursive: true, force: true }))
    // Twenty updates of one key at once take about 20²/2 read-and-write rounds, past the default
    // 300 requests a minute from one client.
    const env = { BASTYON_APP_ID: APP_ID, DATA_DIR: dataDir, APP_ADMINS: addressOf(ADMIN_KEY), RATE_LIMIT_MAX: '1000000' }
    const app = await startApp(t, { nodes: [node.url], env })
    return { node, app }
  }
  const signer = (key: Uint8Array): Host => ({ sign: async (text) => sdkSign(text, APP_ID, { key, issued: Date.now() }) })

  it('gets, puts, lists and deletes the user\'s values with their ETags; a stale ifMatch is a 412 that changes nothing', async (t) => {
    const { app } = await storageService(t)
    const client = createClient({ baseUrl: app.url, host: signer(USER_KEY) })
    await assert.rejects(client.storage.get('theme'), { name: 'MiniAppError', status: 401 })
    await client.signIn()
    assert.equal(await client.storage.get('theme'), undefined)
    const stored = await client.storage.put('theme', { mode: 'dark' })
    assert.deepEqual(stored.value, { mode: 'dark' })
    assert.match(stored.etag, /^"[A-Za-z0-9_-]{16}"$/)
    assert.deepEqual(await client.storage.get<{ mode: string }>('theme'), stored)

    const next = await client.storage.put('theme', { mode: 'light' }, { ifMatch: stored.etag })
    await assert.rejects(client.storage.put('theme', { mode: 'sepia' }, { ifMatch: stored.etag }), (error: MiniAppError) => {
      assert.deepEqual([error.status, error.code, error.reason], [412, 'STORAGE_ERR_PRECONDITION_FAILED', 'Precondition failed'])
      return true
    })
    assert.deepEqual((await client.storage.get('theme'))?.value, { mode: 'light' })
    await assert.rejects(client.storage.put('theme', 1, { ifNoneMatch: '*' }), { status: 412 })
    await assert.rejects(client.storage.put('bad key', 1), { status: 400 })

    await client.storage.put('a.b', [1, 2])
    const listing = await client.storage.list({ limit: 1 })
    assert.deepEqual(listing.keys.map(entry => [entry.key, entry.etag]), [['a.b', (await client.storage.get('a.b'))?.etag]])
    assert.equal(listing.next, 'a.b')
    assert.deepEqual((await client.storage.list({ after: listing.next as string })).keys.map(entry => entry.key), ['theme'])
    assert.equal(listing.usage.keys, 2)

    await assert.rejects(client.storage.delete('theme', { ifMatch: stored.etag }), { status: 412 })
    assert.equal(await client.storage.delete('theme', { ifMatch: next.etag }), true)
    assert.equal(await client.storage.delete('theme'), false)
    assert.equal(await client.storage.get('theme'), undefined)
  })

  it('updates a value from two clients at once without losing either write', async (t) => {
    const { app } = await storageService(t)
    const tabs = [createClient({ baseUrl: app.url, host: signer(USER_KEY) }), createClient({ baseUrl: app.url, host: signer(USER_KEY) })]
    await Promise.all(tabs.map(tab => tab.signIn()))
    // Twenty increments, ten from each tab, interleaved: each read-change-write retries on a 412.
    await Promise.all(Array.from({ length: 20 }, (_, i) => (tabs[i % 2] as typeof tabs[0]).storage.update<number>('counter', current => (current ?? 0) + 1, { attempts: 50 })))
    assert.equal((await tabs[0]?.storage.get<number>('counter'))?.value, 20)
  })

  it('reads a collection without signing in, and writes it as an admin only', async (t) => {
    const { app } = await storageService(t)
    const admin = createClient({ baseUrl: app.url, host: signer(ADMIN_KEY) })
    const user = createClient({ baseUrl: app.url, host: signer(USER_KEY) })
    const anonymous = createClient({ baseUrl: app.url })
    await Promise.all([admin.signIn(), user.signIn()])
    await admin.storage.collection('news').put('today', { title: 'Hello' })
    assert.deepEqual((await anonymous.storage.collection('news').get('today'))?.value, { title: 'Hello' })
    assert.deepEqual((await anonymous.storage.collection('news').list()).keys.map(entry => entry.key), ['today'])
    await assert.rejects(user.storage.collection('news').put('today', 'mine'), { status: 403, code: 'STORAGE_ERR_NOT_ADMIN' })
    await assert.rejects(anonymous.storage.collection('news').put('today', 'mine'), { status: 401 })
    assert.equal(await user.storage.get('today'), undefined, 'a collection is not the user\'s storage')
  })
})

describe('bastyon-miniapp-client notifications', () => {
  /** Sign-in and notifications on, sending to a proxy emulator. */
  async function notifyingService (t: WithAfter): Promise<{ app: TestApp, proxy: BastyonProxy }> {
    const node = await startEmulator(t)
    const proxy = await startBastyonProxy({ apps: { [APP_ID]: { name: 'Demo', scope: APP_ID } } })
    t.after(() => proxy.close())
    const dataDir = await freshDataDir()
    t.after(() => rmSync(dataDir, { recursive: true, force: true }))
    const app = await startApp(t, {
      nodes: [node.url],
      env: { BASTYON_APP_ID: APP_ID, DATA_DIR: dataDir, NOTIFY_BASTYON_PROXIES: proxy.url },
      // As `npm run demo` has them: a signer, and the host's registration at the demo's proxy.
      extend: (fastify) => { mountDemoSigner(fastify, { appId: APP_ID }); mountDemoNotifications(fastify, { appId: APP_ID, proxyUrl: proxy.url }) },
    })
    return { app, proxy }
  }
  /** A host that signs, and registers as Bastyon's does: a token at the proxy, signed with the proxy's session. */
  const registeringHost = (proxy: BastyonProxy, calls: string[] = []): Host => ({
    sign: async (text) => sdkSign(text, APP_ID, { key: USER_KEY, issued: Date.now() }),
    async registerForNotifications () {
      calls.push('registerForNotifications')
      const response = await fetch(`${proxy.url}/miniapp/addToken`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ appId: APP_ID, address: USER, signature: hostSignature(PROXY_SESSION, { key: USER_KEY, issued: Date.now() }) }) })
      return (await response.json() as { data: unknown }).data
    },
  })

  it('opts in through the host then the service, lists the channel, receives a push, and opts out', async (t) => {
    const { app, proxy } = await notifyingService(t)
    const calls: string[] = []
    const client = createClient({ baseUrl: app.url, host: registeringHost(proxy, calls) })
    await assert.rejects(client.notifications.optIn(), { name: 'MiniAppError', status: 401 })
    assert.deepEqual(calls, [], 'not signed in: the host is not asked')
    await client.signIn()
    assert.deepEqual(await client.notifications.channels(), [])
    const channel = await client.notifications.optIn()
    assert.deepEqual(calls, ['registerForNotifications'])
    assert.deepEqual([channel.channel, channel.proxy, Number.isNaN(Date.parse(channel.since))], ['bastyon', proxy.url, false])
    assert.deepEqual(await client.notifications.channels(), [channel])
    assert.deepEqual((await app.app.notifications?.send({ to: USER, header: 'Hi', path: '/', id: 'client-1' }))?.results, [{ address: USER, status: 'sent' }])
    assert.deepEqual(proxy.pushes(USER).map(push => push.body), ['Demo: Hi'])
    assert.equal(await client.notifications.optOut(), true)
    assert.equal(await client.notifications.optOut(), false)
    assert.deepEqual(await client.notifications.channels(), [])
    assert.deepEqual((await app.app.notifications?.send({ to: USER, header: 'Hi', path: '/', id: 'client-2' }))?.results, [{ address: USER, status: 'not_registered' }])
  })

  it('refuses without a host that registers, says the host\'s reason when it refuses, and the service\'s when it does', async (t) => {
    const { app, proxy } = await notifyingService(t)
    const signing = createClient({ baseUrl: app.url, host: { sign: async (text) => sdkSign(text, APP_ID, { key: USER_KEY, issued: Date.now() }) } })
    await signing.signIn()
    await assert.rejects(signing.notifications.optIn(), (error: MiniAppError) => error.reason === 'Not opted in' && /registerForNotifications/.test(error.detail ?? ''))
    const refusing = createClient({ baseUrl: app.url, host: { ...registeringHost(proxy), registerForNotifications: async () => { throw new Error('The user refused') } } })
    await refusing.signIn()
    await assert.rejects(refusing.notifications.optIn(), (error: MiniAppError) => error.reason === 'Not opted in' && error.detail === 'The user refused')
    const client = createClient({ baseUrl: app.url, host: registeringHost(proxy) })
    await client.signIn()
    await assert.rejects(client.notifications.optIn({ proxy: 'https://evil.example' }), { status: 400, code: 'NOTIFY_ERR_PROXY_NOT_ALLOWED' })
    assert.deepEqual(await client.notifications.channels(), [])
  })

  it('opts in in a plain browser\'s way against npm run demo: the demo host registers the demo signer at the demo\'s proxy', async (t) => {
    const { app, proxy } = await notifyingService(t)
    const client = createClient({ baseUrl: app.url, host: demoHost({ baseUrl: app.url, signer: 'notified' }) })
    const session = await client.signIn()
    assert.equal(session.address, addressOf(demoSignerKey('notified')))
    assert.equal((await client.notifications.optIn()).proxy, proxy.url)
    assert.deepEqual(proxy.tokens().map(token => token.address), [session.address])
    assert.deepEqual((await app.app.notifications?.send({ to: session.address, header: 'Hi', path: '/', id: 'demo-1' }))?.results, [{ address: session.address, status: 'sent' }])
    const foreign = await fetch(`${app.url}/demo/notifications/register`, { method: 'POST', headers: { origin: 'https://evil.example', 'content-type': 'application/json' }, body: '{}' })
    assert.equal(foreign.status, 403, 'another page may not register the demo\'s users')
  })
})
