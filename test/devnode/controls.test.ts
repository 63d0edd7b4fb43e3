/**
 * The emulator's controls over real HTTP (devnode/controls.ts): a payment made by POST
 * /devnode/pay is the transaction a node then shows (getrawtransaction: the receiver's output, the
 * memo's OP_RETURN, the payer's input), mined by POST /devnode/mine and taken back by POST
 * /devnode/disconnect; every bad input is a 400 that says why and adds nothing; off by default,
 * and never for a browser or a client beyond loopback. And the demo's route that hands the page's
 * orders to them (devnode/demo-wallet.ts), on the real service.
 */
import assert from 'node:assert/strict'
import { request } from 'node:http'
import { describe, it } from 'node:test'
import { addressOf, testKey } from '../../devnode/bastyon-host.js'
import { isLoopback } from '../../devnode/controls.js'
import { demoSignerKey, mountDemoSigner } from '../../devnode/demo-signer.js'
import { mountDemoWallet } from '../../devnode/demo-wallet.js'
import { CONTROLS_PATH, DEVNODE_WALLET, PAYMENT_FEE_SAT, type Emulator } from '../../devnode/server.js'
import { startApp } from '../helpers/build-app.js'
import { APP_ID } from '../helpers/sign-in.js'
import { startEmulator } from '../helpers/start-emulator.js'

const RECEIVER = addressOf(testKey('controls receiver'))
const PAYER = addressOf(testKey('controls payer'))

interface Answer { status: number, body: any, headers: Headers }

/** A control call as curl or a test in another process makes it: JSON in and out. */
async function control (node: Emulator, action: string, body?: unknown, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(`${node.url}${CONTROLS_PATH}/${action}`, {
    method: 'POST',
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    ...init,
  })
  const text = await response.text()
  let parsed: unknown = text
  try { parsed = JSON.parse(text) } catch {}
  return { status: response.status, body: parsed, headers: response.headers }
}

async function rpc (node: Emulator, method: string, params: unknown[]): Promise<any> {
  const response = await fetch(`${node.url}/public/`, { method: 'POST', body: JSON.stringify({ method, params }) })
  return await response.json()
}

/** A POST (or `method`) with headers fetch would not send as given (`Origin`, `Host`), over a connection of its own. */
function rawPost (url: string, headers: Record<string, string>, body: string, method = 'POST'): Promise<{ status: number, body: any, headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method, headers }, incoming => {
      let text = ''
      incoming.setEncoding('utf8')
      incoming.on('data', chunk => { text += chunk })
      incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, body: JSON.parse(text), headers: incoming.headers }))
      incoming.on('error', reject)
    })
    outgoing.on('error', reject)
    outgoing.end(body)
  })
}

const hex = (text: string): string => Buffer.from(text, 'utf8').toString('hex')

describe('the emulator\'s controls', () => {
  it('pays with a memo, mines the block and shows the payment as a node does: the receiver\'s output, the memo\'s OP_RETURN, the payer\'s input', async (t) => {
    const node = await startEmulator(t, { controls: true })
    const start = node.height
    const paid = await control(node, 'pay', { to: RECEIVER, amountSat: 30_000_000, memo: 'inv_0001', from: PAYER })
    assert.equal(paid.status, 200)
    assert.deepEqual(Object.keys(paid.body), ['txid'])
    assert.match(paid.body.txid, /^[0-9a-f]{64}$/)
    assert.equal(paid.headers.get('content-type'), 'application/json')

    const pending = (await rpc(node, 'getrawtransaction', [paid.body.txid])).result
    assert.equal(pending.height, undefined, 'in the mempool until a block')

    const mined = await control(node, 'mine')
    assert.deepEqual(mined, { status: 200, body: { height: start + 1, hash: node.chain.tip.hash }, headers: mined.headers })
    const shown = (await rpc(node, 'getrawtransaction', [paid.body.txid])).result
    assert.deepEqual([shown.height, shown.blockHash, shown.type], [start + 1, mined.body.hash, 1])
    // 0.3 PKOIN to the receiver, the memo's UTF-8 bytes pushed after OP_RETURN.
    assert.deepEqual(shown.vout.map((output: any) => [output.n, output.value, output.scriptPubKey.addresses]), [[0, 0.3, [RECEIVER]], [1, 0, ['']]])
    assert.equal(shown.vout[1].scriptPubKey.hex, `6a08${hex('inv_0001')}`)
    // feemode exclude (the default): the fee on top of the amount.
    assert.deepEqual(shown.vin.map((input: any) => [input.address, input.value]), [[PAYER, (30_000_000 + PAYMENT_FEE_SAT) / 1e8]])
    assert.equal(node.calls.length, 2, 'the controls are not node calls: only the two getrawtransaction are recorded')
  })

  it('pays from its own wallet when no payer is named, with no memo when none is given, and takes the fee out of the amount with feemode include', async (t) => {
    const node = await startEmulator(t, { controls: true })
    const plain = await control(node, 'pay', { to: RECEIVER, amountSat: 5_000_000 })
    const included = await control(node, 'pay', { to: RECEIVER, amountSat: 5_000_000, feemode: 'include', memo: 'кофе ☕' })
    const [first, second] = node.chain.pendingTransactions
    assert.equal(first?.txid, plain.body.txid)
    assert.deepEqual(first?.inputs, [{ address: DEVNODE_WALLET, amount: 5_000_000 + PAYMENT_FEE_SAT }])
    assert.deepEqual(first?.outputs, [{ address: RECEIVER, amount: 5_000_000 }])
    assert.equal(second?.txid, included.body.txid)
    assert.deepEqual(second?.inputs, [{ address: DEVNODE_WALLET, amount: 5_000_000 }])
    assert.deepEqual(second?.outputs, [{ address: RECEIVER, amount: 5_000_000 - PAYMENT_FEE_SAT }, { memo: hex('кофе ☕'), amount: 0 }])
  })

  it('disconnects the tip (a re-org): the payment is left out of the next block, which has another hash; reconnect brings a block back while it fits', async (t) => {
    const node = await startEmulator(t, { controls: true })
    const refused = await control(node, 'disconnect')
    assert.equal(refused.status, 409, 'the block the chain started at stays')
    assert.equal(refused.body.error.code, 'CANNOT_DISCONNECT')

    const { body: { txid } } = await control(node, 'pay', { to: RECEIVER, amountSat: 1_000_000, memo: 'reorg' })
    const mined = await control(node, 'mine')
    const reorg = await control(node, 'disconnect')
    assert.equal(reorg.status, 200)
    assert.deepEqual(reorg.body, {
      height: mined.body.height - 1,
      hash: node.chain.tip.hash,
      disconnected: { height: mined.body.height, hash: mined.body.hash, txids: [txid] },
    })
    assert.equal((await rpc(node, 'getrawtransaction', [txid])).result.height, undefined, 'answered without a block')
    const back = await control(node, 'reconnect')
    assert.deepEqual([back.status, back.body], [200, { height: mined.body.height, hash: mined.body.hash }])
    assert.equal((await rpc(node, 'getrawtransaction', [txid])).result.blockHash, mined.body.hash)
    await control(node, 'disconnect')
    const again = await control(node, 'mine', {})
    assert.equal(again.body.height, mined.body.height)
    assert.notEqual(again.body.hash, mined.body.hash)
    assert.equal((await rpc(node, 'getrawtransaction', [txid])).result.blockHash, undefined, 'never mined again in another block (0.22.7)')
    const late = await control(node, 'reconnect')
    assert.deepEqual([late.status, late.body.error.code], [409, 'CANNOT_RECONNECT'])
  })

  it('answers 400 saying why for an address of another network, a typo, an amount that is not a positive safe integer, a memo over 80 bytes, and adds nothing', async (t) => {
    const node = await startEmulator(t, { controls: true })
    const testnet = addressOf(testKey('controls receiver'), 0x41)
    const typo = `${RECEIVER.slice(0, -1)}${RECEIVER.endsWith('1') ? '2' : '1'}`
    const cases: Array<[unknown, string, RegExp]> = [
      [{ to: testnet, amountSat: 1000 }, 'INVALID_ADDRESS', /^to: "T\w+" is an address of another network \(version 0x41\); the emulator is a mainnet node, whose addresses start with P$/],
      [{ to: typo, amountSat: 1000 }, 'INVALID_ADDRESS', /^to: ".+" is not a Base58Check address/],
      [{ amountSat: 1000 }, 'INVALID_ADDRESS', /^to: must be an address as a string, not undefined$/],
      [{ to: RECEIVER, amountSat: 1000, from: 'P1' }, 'INVALID_ADDRESS', /^from: /],
      [{ to: RECEIVER, amountSat: 0 }, 'INVALID_AMOUNT', /^amountSat must be a positive whole number of satoshi .*, not 0$/],
      [{ to: RECEIVER, amountSat: -5 }, 'INVALID_AMOUNT', /not -5$/],
      [{ to: RECEIVER, amountSat: 0.5 }, 'INVALID_AMOUNT', /not 0\.5$/],
      [{ to: RECEIVER, amountSat: '1000' }, 'INVALID_AMOUNT', /not "1000"$/],
      [{ to: RECEIVER, amountSat: 2 ** 53 }, 'INVALID_AMOUNT', /not 9007199254740992$/],
      [{ to: RECEIVER }, 'INVALID_AMOUNT', /not undefined$/],
      [{ to: RECEIVER, amountSat: PAYMENT_FEE_SAT, feemode: 'include' }, 'INVALID_AMOUNT', /^with feemode "include" the fee/],
      [{ to: RECEIVER, amountSat: 1000, memo: 'm'.repeat(81) }, 'INVALID_MEMO', /^memo must be 1 to 80 bytes of UTF-8 \(got 81\)/],
      // 27 three-byte characters: 27 characters, 81 bytes.
      [{ to: RECEIVER, amountSat: 1000, memo: '€'.repeat(27) }, 'INVALID_MEMO', /\(got 81\)/],
      [{ to: RECEIVER, amountSat: 1000, memo: '' }, 'INVALID_MEMO', /\(got 0\); leave it out/],
      [{ to: RECEIVER, amountSat: 1000, memo: 7 }, 'INVALID_MEMO', /^memo must be text/],
      [{ to: RECEIVER, amountSat: 1000, feemode: 'split' }, 'INVALID_FEEMODE', /not "split"$/],
      [{ to: RECEIVER, amount: 1000 }, 'INVALID_BODY', /^unknown field "amount": the fields are to, amountSat, memo, from, feemode$/],
      [[RECEIVER, 1000], 'INVALID_BODY', /must be a JSON object/],
    ]
    for (const [body, code, message] of cases) {
      const answer = await control(node, 'pay', body)
      assert.equal(answer.status, 400, JSON.stringify(body))
      assert.equal(answer.body.error.code, code, JSON.stringify(body))
      assert.match(answer.body.error.message, message, JSON.stringify(body))
    }
    const notJson = await control(node, 'pay', undefined, { headers: { 'content-type': 'application/json' }, body: '{"to":' })
    assert.deepEqual([notJson.status, notJson.body.error.code], [400, 'INVALID_JSON'])
    const notDeclared = await control(node, 'pay', undefined, { headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ to: RECEIVER, amountSat: 1000 }) })
    assert.deepEqual([notDeclared.status, notDeclared.body.error.code], [415, 'UNSUPPORTED_MEDIA_TYPE'])
    const mineWithFields = await control(node, 'mine', { blocks: 3 })
    assert.deepEqual([mineWithFields.status, mineWithFields.body.error.code], [400, 'INVALID_BODY'])
    const tooLarge = await control(node, 'pay', { to: RECEIVER, amountSat: 1000, padding: 'x'.repeat(20_000) })
    assert.deepEqual([tooLarge.status, tooLarge.body.error.code], [413, 'BODY_TOO_LARGE'])

    assert.deepEqual(node.chain.pendingTransactions, [], 'nothing paid')
    assert.equal(node.chain.height, node.height)
    assert.equal(node.chain.tip.transactions.length, 0, 'nothing mined')
  })

  it('names the controls on an unknown path and takes POST only', async (t) => {
    const node = await startEmulator(t, { controls: true })
    const unknown = await control(node, 'burn', {})
    assert.equal(unknown.status, 404)
    assert.deepEqual(unknown.body.error, { code: 'NOT_FOUND', message: 'no control at /devnode/burn: POST /devnode/pay, /devnode/fund, /devnode/mine, /devnode/disconnect, /devnode/reconnect or /devnode/feerate' })
    const got = await fetch(`${node.url}${CONTROLS_PATH}/mine`)
    assert.deepEqual([got.status, (await got.json()).error.code], [405, 'METHOD_NOT_ALLOWED'])
    assert.equal(node.height, node.chain.tip.height)
    assert.equal(node.chain.tip.transactions.length, 0)
  })

  it('is off by default: the paths answer as a node\'s (404, Method not found), and nothing is paid or mined', async (t) => {
    const node = await startEmulator(t)
    const height = node.height
    for (const action of ['pay', 'mine', 'disconnect']) {
      const answer = await control(node, action, { to: RECEIVER, amountSat: 1000 })
      assert.equal(answer.status, 404, action)
      assert.deepEqual(answer.body.error, { code: -32601, message: 'Method not found' }, action)
    }
    assert.equal(node.height, height)
    assert.deepEqual(node.chain.pendingTransactions, [])
  })

  it('refuses a browser (any request with an Origin) even on loopback, so no web page can pay or mine', async (t) => {
    const node = await startEmulator(t, { controls: true })
    const height = node.height
    for (const origin of ['https://example.com', 'http://127.0.0.1:3000', 'null']) {
      const answer = await rawPost(`${node.url}${CONTROLS_PATH}/mine`, { origin, 'content-type': 'application/json' }, '{}')
      assert.equal(answer.status, 403, origin)
      assert.equal(answer.body.error.code, 'BROWSER_REFUSED', origin)
    }
    assert.equal(node.height, height)
  })

  it('tells loopback clients from the others, IPv4, IPv6 and IPv4 mapped in IPv6', () => {
    for (const address of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) assert.equal(isLoopback(address), true, address)
    for (const address of [undefined, '', '10.0.0.5', '192.168.1.20', '::ffff:192.168.1.20', 'fe80::1', '::', '128.0.0.1', '127.0.0.1.evil']) {
      assert.equal(isLoopback(address), false, String(address))
    }
  })
})

describe('the demo wallet\'s routes', () => {
  const order = { to: RECEIVER, amountSat: 2_500_000, feemode: 'exclude', memo: 'pay_123' }
  const post = (body: unknown): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })

  it('give the wallet\'s address, pass an order to the emulator\'s controls, and its refusal back in words', async (t) => {
    const node = await startEmulator(t, { controls: true })
    const service = await startApp(t, { nodes: [node.url], extend: app => mountDemoWallet(app, { emulatorUrl: node.url }) })
    const wallet = await service.get('/demo/wallet')
    assert.deepEqual([wallet.status, wallet.body], [200, { message: 'The demo wallet', data: { address: DEVNODE_WALLET, feeSat: PAYMENT_FEE_SAT } }])

    const paid = await service.get('/demo/wallet/pay', post(order))
    assert.equal(paid.status, 200)
    assert.equal(paid.body.message, 'Paid')
    const [pending] = node.chain.pendingTransactions
    assert.equal(pending?.txid, paid.body.data.txid)
    assert.deepEqual(pending?.outputs, [{ address: RECEIVER, amount: 2_500_000 }, { memo: hex('pay_123'), amount: 0 }])

    const refused = await service.get('/demo/wallet/pay', post({ ...order, amountSat: 0.1 }))
    assert.deepEqual([refused.status, refused.body.message], [400, 'Not paid'])
    assert.match(refused.body.error, /^amountSat must be a positive whole number of satoshi .*, not 0\.1 \(INVALID_AMOUNT\)$/)
    assert.equal(node.chain.pendingTransactions.length, 1, 'nothing more paid')
  })

  it('pay for the demo\'s own page only: another origin, its preflight and a rebound Host are refused, and nothing is paid', async (t) => {
    const node = await startEmulator(t, { controls: true })
    // The demo's CORS: any origin may call the API.
    const service = await startApp(t, { nodes: [node.url], env: { CORS_ORIGINS: '*' }, extend: app => mountDemoWallet(app, { emulatorUrl: node.url }) })
    const pay = `${service.url}/demo/wallet/pay`
    const ownHost = new URL(service.url).host
    const json = { 'content-type': 'application/json' }
    const body = JSON.stringify(order)

    const preflight = await rawPost(pay, { origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' }, '', 'OPTIONS')
    assert.equal(preflight.status, 403)
    assert.equal(preflight.headers['access-control-allow-origin'], undefined, 'no CORS for the pay route')
    const foreign = await rawPost(pay, { ...json, origin: 'https://evil.example' }, body)
    assert.deepEqual([foreign.status, foreign.body.error], [403, 'the demo wallet pays for the demo\'s own page only, not for "https://evil.example"'])
    // DNS rebinding: evil.example resolved to this machine, so the page and the Host agree.
    const rebound = await rawPost(pay, { ...json, host: `evil.example:${new URL(service.url).port}`, origin: `http://evil.example:${new URL(service.url).port}` }, body)
    assert.equal(rebound.status, 403)
    assert.match(rebound.body.error, /^the demo wallet pays for pages opened at localhost or an IP address, not at "evil\.example:\d+"$/)
    assert.equal(node.chain.pendingTransactions.length, 0, 'nothing paid')

    for (const host of [ownHost, `localhost:${new URL(service.url).port}`]) {
      const own = await rawPost(pay, { ...json, host, origin: `http://${host}` }, body)
      assert.equal(own.status, 200, host)
    }
    assert.equal(node.chain.pendingTransactions.length, 2, 'the demo page pays, at 127.0.0.1 or localhost')
  })

  it('say so when the emulator\'s controls are off, and when the emulator does not answer', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], extend: app => mountDemoWallet(app, { emulatorUrl: node.url }) })
    const off = await service.get('/demo/wallet/pay', post(order))
    assert.deepEqual([off.status, off.body.error], [502, 'the emulator\'s controls are off (HTTP 404): start it with controls on'])
    assert.equal(node.chain.pendingTransactions.length, 0)
    await node.stop()
    const gone = await service.get('/demo/wallet/pay', post(order))
    assert.equal(gone.status, 502)
    assert.match(gone.body.error, /^the emulator did not answer \(/)
  })
})

describe('the demo signer\'s routes', () => {
  it('sign as the host does with a made-up key per name, which the service\'s sign-in takes', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { BASTYON_APP_ID: APP_ID }, extend: app => mountDemoSigner(app, { appId: APP_ID }) })
    const alice = addressOf(demoSignerKey('alice'))
    assert.deepEqual((await service.get('/demo/signer?signer=alice')).body, { message: 'The demo signer', data: { signer: 'alice', address: alice } })
    assert.notEqual((await service.get('/demo/signer')).body.data.address, alice, 'another name, another user')

    const challenge = (await service.get('/api/auth/challenge', { method: 'POST' })).body.data.challenge
    const json = { 'content-type': 'application/json' }
    const signed = await service.get('/demo/signer/sign', { method: 'POST', headers: json, body: JSON.stringify({ text: challenge, signer: 'alice' }) })
    assert.equal(signed.status, 200)
    assert.equal(signed.body.data.address, alice)
    const session = await service.get('/api/auth/session', { method: 'POST', headers: json, body: JSON.stringify({ signature: signed.body.data.signature }) })
    assert.equal(session.status, 200, JSON.stringify(session.body))
    assert.equal(session.body.data.address, alice)
  })

  it('refuse another page, a rebound Host, a bad signer name and a text that is not one', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { BASTYON_APP_ID: APP_ID, CORS_ORIGINS: '*' }, extend: app => mountDemoSigner(app, { appId: APP_ID }) })
    const sign = `${service.url}/demo/signer/sign`
    const json = { 'content-type': 'application/json' }
    const port = new URL(service.url).port
    const preflight = await rawPost(sign, { origin: 'https://evil.example', 'access-control-request-method': 'POST' }, '', 'OPTIONS')
    assert.equal(preflight.status, 403)
    assert.equal(preflight.headers['access-control-allow-origin'], undefined)
    const foreign = await rawPost(sign, { ...json, origin: 'https://evil.example' }, JSON.stringify({ text: 'x' }))
    assert.deepEqual([foreign.status, foreign.body.error], [403, 'the demo signer signs for the demo\'s own page only, not for "https://evil.example"'])
    const rebound = await rawPost(sign, { ...json, host: `evil.example:${port}`, origin: `http://evil.example:${port}` }, JSON.stringify({ text: 'x' }))
    assert.equal(rebound.status, 403)
    for (const body of [{ text: 'x', signer: 'Alice!' }, { text: 5 }, { text: 'x'.repeat(1025) }]) {
      const refused = await rawPost(sign, json, JSON.stringify(body))
      assert.equal(refused.status, 400, JSON.stringify(body).slice(0, 40))
      assert.equal(refused.body.message, 'Not signed')
    }
    assert.equal((await service.get('/demo/signer?signer=Alice!')).status, 400)
  })
})
