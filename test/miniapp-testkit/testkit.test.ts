/**
 * bastyon-miniapp-testkit through its exports, as a mini-app's tests use it: the devnode over
 * real HTTP JSON-RPC (mining, paying, re-orgs), the test signer against the service's sign-in,
 * and the stand-in host under bastyon-miniapp-client signing in and paying an invoice that the
 * service confirms once the test mines.
 */
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { describe, it } from 'node:test'
import { createClient, MiniAppError, type Invoice } from 'bastyon-miniapp-client'
import { standInHost, startBastyonProxy, startDevnode, testSigner, type Devnode } from 'bastyon-miniapp-testkit'
import { startApp, type TestApp } from '../helpers/build-app.js'
import { postJson } from '../helpers/sign-in.js'
import { waitFor } from '../helpers/wait-for.js'
import { freshDataDir } from '../payments/databases.js'

type WithAfter = { after (fn: () => unknown): void }

const APP_ID = 'testkit.pocketnet.app'
const PKOIN = 100_000_000
const RECEIVER = testSigner('testkit receiver').address

async function devnodeFor (t: WithAfter): Promise<Devnode> {
  const devnode = await startDevnode()
  t.after(() => devnode.close())
  return devnode
}

/** A JSON-RPC call on the node's public path, as the service makes it. */
async function rpc (devnode: Devnode, method: string, params: unknown[] = []): Promise<{ result: any, error: any }> {
  const response = await fetch(`${devnode.url}/public/`, { method: 'POST', body: JSON.stringify({ method, params, id: 1 }) })
  return await response.json() as { result: any, error: any }
}

/** The service in front of `devnode`, with sign-in and payments on, as a mini-app runs it. */
async function serviceOn (t: WithAfter, devnode: Devnode, env: Record<string, string> = {}): Promise<TestApp> {
  const dataDir = await freshDataDir()
  t.after(() => rmSync(dataDir, { recursive: true, force: true }))
  const app = await startApp(t, {
    nodes: [devnode.url],
    env: {
      BASTYON_APP_ID: APP_ID,
      POCKETNET_NETWORK: 'main',
      PAYMENT_ADDRESS: RECEIVER,
      PAYMENT_TIPS: 'true',
      PAYMENT_CONFIRMATIONS: '2',
      PAYMENT_CONFIRM_NODES: '1',
      DATA_DIR: dataDir,
      EVENTS_INGEST: 'true',
      EVENTS_POLL_WAIT_MS: '2000',
      ...env,
    },
  })
  await waitFor('the service to ingest the chain', () => app.app.events.lastId.split('-')[1] !== '0')
  return app
}

describe('startDevnode', () => {
  it('serves the node\'s JSON-RPC on a free port, mines n blocks, and stops on close()', async (t) => {
    const devnode = await startDevnode()
    t.after(() => devnode.close())
    const port = Number(new URL(devnode.url).port)
    assert.ok(port > 0, devnode.url)
    const info = await rpc(devnode, 'getnodeinfo')
    assert.equal(info.error, null)
    assert.equal(info.result.lastblock.height, devnode.height)
    assert.equal(info.result.ports.wss, Number(new URL(devnode.webSocketUrl).port))
    assert.ok(devnode.dataset.users.length > 0)
    assert.equal((await rpc(devnode, 'getuserprofile', [devnode.dataset.users[0]?.address, '1'])).result[0].address, devnode.dataset.users[0]?.address)

    const before = devnode.height
    const mined = devnode.mine(2)
    assert.deepEqual(mined.map(block => block.height), [before + 1, before + 2])
    assert.equal(devnode.height, before + 2)
    assert.equal((await rpc(devnode, 'getnodeinfo')).result.lastblock.height, before + 2)
    assert.equal(devnode.mine().length, 1, 'one block by default')
    assert.throws(() => devnode.mine(-1), RangeError)

    await devnode.close()
    await devnode.close()
    await assert.rejects(rpc(devnode, 'getnodeinfo'), 'nothing listens any more')
  })

  it('pays from its wallet into the next block: the node answers the txid, in the mempool then mined', async (t) => {
    const devnode = await devnodeFor(t)
    const to = devnode.dataset.users[0]?.address as string
    const { txid } = devnode.pay({ to, amountSat: 150_000_000, memo: 'hello' })
    assert.match(txid, /^[0-9a-f]{64}$/)
    assert.deepEqual(devnode.transaction(txid), { txid, confirmations: 0 })

    const waiting = await rpc(devnode, 'getrawtransaction', [txid])
    assert.equal(waiting.error, null)
    assert.equal(waiting.result.height, undefined, 'in the mempool: no block')
    assert.deepEqual(waiting.result.vin.map((input: { address: string }) => input.address), [devnode.wallet])
    assert.deepEqual(waiting.result.vout[0], { n: 0, value: 1.5, scriptPubKey: waiting.result.vout[0].scriptPubKey })
    assert.deepEqual(waiting.result.vout[0].scriptPubKey.addresses, [to])
    assert.equal(waiting.result.vout[1].scriptPubKey.hex, `6a05${Buffer.from('hello').toString('hex')}`, 'the memo in an OP_RETURN')

    const [block] = devnode.mine(2)
    assert.deepEqual(block?.txids, [txid])
    const mined = await rpc(devnode, 'getrawtransaction', [txid])
    assert.equal(mined.result.height, block?.height)
    assert.equal(mined.result.blockHash, block?.hash)
    assert.deepEqual(devnode.transaction(txid), { txid, confirmations: 2, height: block?.height, blockHash: block?.hash })
    assert.equal(devnode.transaction('00'.repeat(32)), undefined)
  })

  it('refuses a payment the HTTP control would refuse, saying why', async (t) => {
    const devnode = await devnodeFor(t)
    const to = devnode.dataset.users[0]?.address as string
    assert.throws(() => devnode.pay({ to: 'Pnot-an-address', amountSat: 1 }), /to: .*Base58Check/)
    assert.throws(() => devnode.pay({ to, amountSat: 0.5 }), /amountSat must be a positive whole number/)
    assert.throws(() => devnode.pay({ to, amountSat: 1, memo: 'x'.repeat(81) }), /memo must be 1 to 80 bytes/)
    assert.throws(() => devnode.pay({ to: testSigner('t', { network: 'test' }).address, amountSat: 1 }), /another network/)
    assert.equal(devnode.emulator.chain.pendingTransactions.length, 0)
  })

  it('re-orgs: disconnects the tip, leaving its payment out, and connects it again', async (t) => {
    const devnode = await devnodeFor(t)
    const { txid } = devnode.pay({ to: RECEIVER, amountSat: PKOIN })
    const [block] = devnode.mine()
    const disconnected = devnode.disconnectBlock()
    assert.deepEqual(disconnected, block)
    assert.equal(devnode.height, (block?.height as number) - 1)
    assert.equal(devnode.transaction(txid)?.confirmations, 0)
    assert.equal((await rpc(devnode, 'getrawtransaction', [txid])).result.height, undefined)
    assert.deepEqual(devnode.reconnectBlock(), block)
    assert.equal(devnode.transaction(txid)?.confirmations, 1)
    assert.throws(() => devnode.reconnectBlock(), /No disconnected block/)
  })

  it('answers the HTTP controls on its port, as npx bastyon-devnode does, unless told not to', async (t) => {
    const devnode = await devnodeFor(t)
    const mined = await fetch(`${devnode.url}/devnode/mine`, { method: 'POST' })
    assert.equal(mined.status, 200)
    assert.equal((await mined.json() as { height: number }).height, devnode.height)
    const quiet = await startDevnode({ controls: false })
    t.after(() => quiet.close())
    assert.notEqual((await fetch(`${quiet.url}/devnode/mine`, { method: 'POST' })).status, 200)
  })
})

describe('testSigner', () => {
  it('is the same user for the same seed, another for another seed or a key of its own, and refuses a key that is none', () => {
    const alice = testSigner('alice')
    assert.equal(testSigner('alice').address, alice.address)
    assert.notEqual(testSigner('bob').address, alice.address)
    assert.match(alice.address, /^P/)
    assert.match(testSigner('alice', { network: 'test' }).address, /^T/)
    assert.match(testSigner('alice', { network: 'regtest' }).address, /^[mn]/)
    assert.throws(() => testSigner('alice', { network: 'constructor' as 'main' }), TypeError)
    assert.match(alice.publicKey, /^0[23][0-9a-f]{64}$/)
    assert.match(testSigner().address, /^P/)
    const key = new Uint8Array(32).fill(7)
    assert.equal(testSigner(key).address, testSigner(key).address)
    assert.throws(() => testSigner(new Uint8Array(31)), TypeError)
    assert.throws(() => testSigner(new Uint8Array(32)), TypeError, 'zero is no key')
  })

  it('signs what the host\'s sdk.sign gives: <text>/<appId>, dated by its clock', () => {
    const signer = testSigner('alice', { now: () => Date.UTC(2025, 0, 2, 3, 4, 5, 6) })
    const signed = signer.sign('abc', APP_ID)
    assert.deepEqual(Object.keys(signed).sort(), ['address', 'nonce', 'pubkey', 'signature', 'v'])
    assert.equal(signed.nonce, `date=2025-01-02T03:04:05.006Z,exp=360,s=${Buffer.from(`abc/${APP_ID}`).toString('hex')}`)
    assert.equal(signed.address, signer.address)
    assert.equal(signed.pubkey, signer.publicKey)
    assert.match(signed.signature, /^[0-9a-f]{128}$/)
    assert.equal(signed.v, 1)
  })

  it('signs in to the service: a challenge signed is a session for the signer\'s address, for its app id only', async (t) => {
    const devnode = await devnodeFor(t)
    const service = await startApp(t, { nodes: [devnode.url], env: { BASTYON_APP_ID: APP_ID, POCKETNET_NETWORK: 'main' } })
    const signer = testSigner('sign-in user')
    const challenge = async (): Promise<string> => (await postJson(service, '/api/auth/challenge')).body.data.challenge

    const session = await postJson(service, '/api/auth/session', { signature: signer.sign(await challenge(), APP_ID) })
    assert.equal(session.status, 200, JSON.stringify(session.body))
    assert.equal(session.body.data.address, signer.address)
    const me = await service.get('/api/me', { headers: { authorization: `Bearer ${session.body.data.token as string}` } })
    assert.equal(me.body.data.address, signer.address)

    const otherApp = await postJson(service, '/api/auth/session', { signature: signer.sign(await challenge(), 'another.app') })
    assert.equal(otherApp.status, 401, JSON.stringify(otherApp.body))
  })
})

describe('standInHost with bastyon-miniapp-client', () => {
  it('signs in, pays an invoice from the signer\'s address, and the invoice is confirmed once the test mines', async (t) => {
    const devnode = await devnodeFor(t)
    const service = await serviceOn(t, devnode)
    const signer = testSigner('paying user')
    const host = standInHost({ signer, devnode, appId: APP_ID })
    const client = createClient({ baseUrl: service.url, host })

    const session = await client.signIn()
    assert.equal(session.address, signer.address)
    const invoice = await client.request<Invoice>('/api/payments/tips', { method: 'POST', body: { amount: 2 * PKOIN } })
    const states: string[] = []
    const paying = client.pay(invoice, { onUpdate: next => { states.push(next.state) } })
    const payment = await host.nextPayment()
    assert.deepEqual(payment, { txid: payment.txid, to: RECEIVER, amountSat: 2 * PKOIN, memo: invoice.memo })
    assert.deepEqual(host.payments, [payment])
    const paid = await rpc(devnode, 'getrawtransaction', [payment.txid])
    assert.deepEqual(paid.result.vin.map((input: { address: string }) => input.address), [signer.address], 'the user\'s wallet pays')

    devnode.mine(2)
    const confirmed = await paying
    assert.equal(confirmed.state, 'confirmed')
    assert.equal(confirmed.txid, payment.txid)
    assert.equal(confirmed.confirmations, 2)
    assert.equal(states.at(-1), 'confirmed')
    assert.equal(devnode.transaction(payment.txid)?.confirmations, 2)
  })

  it('refuses as a user who says no, and pays nothing then', async (t) => {
    const devnode = await devnodeFor(t)
    const service = await serviceOn(t, devnode)
    const asked: string[] = []
    const host = standInHost({
      signer: testSigner('refusing user'),
      devnode,
      appId: APP_ID,
      approve: action => { asked.push(action.kind); return action.kind === 'sign' },
    })
    const client = createClient({ baseUrl: service.url, host })
    await client.signIn()
    const invoice = await client.request<Invoice>('/api/payments/tips', { method: 'POST', body: { amount: PKOIN } })
    await assert.rejects(client.pay(invoice), (error: MiniAppError) => error instanceof MiniAppError && error.reason === 'Not paid' && error.detail === 'The user refused')
    assert.deepEqual(asked, ['sign', 'payment'])
    assert.equal(host.payments.length, 0)
    assert.equal(devnode.emulator.chain.pendingTransactions.length, 0)
    await assert.rejects(host.payment({ recievers: [{ address: RECEIVER, amount: 1 }, { address: RECEIVER, amount: 1 }], feemode: 'exclude', message: '' }), /The user refused/)
  })

  it('pays exactly one receiver, in PKOIN by their decimal text', async (t) => {
    const devnode = await devnodeFor(t)
    const host = standInHost({ signer: testSigner('decimal user'), devnode, appId: APP_ID })
    const { transaction } = await host.payment({ recievers: [{ address: RECEIVER, amount: 0.1 + 0.2 }], feemode: 'exclude', message: '' })
    assert.deepEqual(devnode.emulator.chain.pendingTransactions.find(each => each.txid === transaction)?.outputs, [{ address: RECEIVER, amount: 30_000_000 }])
    await assert.rejects(host.payment({ recievers: [], feemode: 'exclude', message: '' }), /exactly one receiver/)
    assert.equal((await host.nextPayment()).txid, transaction)
  })

  it('registers for notifications at the proxy as the host does, so that the client opts in and the service\'s push reaches the user', async (t) => {
    const devnode = await devnodeFor(t)
    const proxy = await startBastyonProxy({ apps: { [APP_ID]: { name: 'Testkit', scope: APP_ID } } })
    t.after(() => proxy.close())
    const service = await serviceOn(t, devnode, { NOTIFY_BASTYON_PROXIES: proxy.url })
    const signer = testSigner('notified user')
    const asked: string[] = []
    const host = standInHost({ signer, devnode, appId: APP_ID, proxy: proxy.url, approve: action => { asked.push(action.kind); return true } })
    const client = createClient({ baseUrl: service.url, host })
    await client.signIn()
    const channel = await client.notifications.optIn()
    assert.deepEqual([channel.channel, channel.proxy], ['bastyon', proxy.url])
    assert.deepEqual(asked, ['sign', 'notifications'])
    assert.deepEqual(proxy.tokens().map(token => [token.appId, token.address]), [[APP_ID, signer.address]], 'the token the host left at the proxy')
    const { results } = await service.app.notifications?.send({ to: signer.address, header: 'Hello', path: '/', id: 'hello' }) ?? { results: [] }
    assert.deepEqual(results, [{ address: signer.address, status: 'sent' }])
    assert.deepEqual(proxy.pushes(signer.address).map(push => push.body), ['Testkit: Hello'])

    const refusing = standInHost({ signer, devnode, appId: APP_ID, proxy: proxy.url, approve: action => action.kind !== 'notifications' })
    await assert.rejects(refusing.registerForNotifications(), /The user refused/)
    await assert.rejects(standInHost({ signer, devnode, appId: APP_ID }).registerForNotifications(), /no proxy/)
    const otherSession = await startBastyonProxy({ session: 'another proxy' })
    t.after(() => otherSession.close())
    await assert.rejects(standInHost({ signer, devnode, appId: APP_ID, proxy: otherSession.url }).registerForNotifications(), /HTTP 401/, 'a proxy whose session the signature does not name')
  })
})
