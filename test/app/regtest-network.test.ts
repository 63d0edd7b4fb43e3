/**
 * POCKETNET_NETWORK=regtest: a developer's own regtest node, whose addresses have version byte
 * 111 ("m…" or "n…"), works everywhere the network matters (issue #28).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { addressOf, sdkSign, testKey } from '../../devnode/bastyon-host.js'
import { addressRule, isPocketnetAddress, verifySignature } from '../../packages/pocketnet-client/index.js'
import { startApp } from '../helpers/build-app.js'
import { APP_ID, bearer, giveAccount, postJson, signIn } from '../helpers/sign-in.js'
import { startEmulator } from '../helpers/start-emulator.js'

const REGTEST = 111
/** From the real regtest chain's dataset. */
const REGTEST_ADDRESSES = ['micwoYEUVptxfhCnvaKmbbEDdTcEUEVeo4', 'mz3ZDGjU4bwpa8tcvKYsv1nMpHEBkGmXWw']
const MAINNET_ADDRESS = 'P8bbRWJknHBXJRBTDSS88uQJSFvX67iN88'
const KEY = testKey('regtest user')

describe('regtest addresses in pocketnet-client', () => {
  it('are told from mainnet and testnet ones, checksum included', () => {
    for (const address of [...REGTEST_ADDRESSES, addressOf(KEY, REGTEST)]) {
      assert.equal(isPocketnetAddress(address, 'regtest'), true, address)
      assert.equal(isPocketnetAddress(address, 'main'), false, address)
      assert.equal(isPocketnetAddress(address, 'test'), false, address)
    }
    assert.match(addressOf(KEY, REGTEST), /^[mn]/)
    assert.equal(isPocketnetAddress(MAINNET_ADDRESS, 'regtest'), false)
    assert.equal(isPocketnetAddress(`${REGTEST_ADDRESSES[0]!.slice(0, -1)}5`, 'regtest'), false, 'checksum')
    assert.equal(addressRule('regtest'), 'a Pocketnet regtest address: 34 Base58 characters starting with "m" or "n", with a valid checksum')
  })

  it('verify signatures on regtest, and are the wrong network elsewhere', () => {
    const now = Date.now()
    const signed = sdkSign('', 'session', { key: KEY, issued: now, version: REGTEST })
    assert.equal(verifySignature(signed, { session: 'session', network: 'regtest', now }).address, addressOf(KEY, REGTEST))
    assert.throws(() => verifySignature(signed, { session: 'session', network: 'main', now }), { code: 'SIG_WRONG_NETWORK', message: /regtest address; this service accepts mainnet ones/ })
  })
})

describe('a service with POCKETNET_NETWORK=regtest', () => {
  it('takes regtest addresses, and only those, at /api/user', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { POCKETNET_NETWORK: 'regtest' } })
    const address = REGTEST_ADDRESSES[0]!
    const unknown = await service.get(`/api/user/${address}`)
    assert.equal(unknown.status, 404)
    assert.deepEqual(node.callsTo('getuserprofile').at(-1)?.params, [address, '1'])
    const mainnet = await service.get(`/api/user/${MAINNET_ADDRESS}`)
    assert.equal(mainnet.status, 400)
    assert.match(mainnet.body.error, /address must be a Pocketnet regtest address: 34 Base58 characters starting with "m" or "n"/)
  })

  it('signs a regtest key in, and refuses a mainnet one', async (t) => {
    const node = await startEmulator(t)
    const user = giveAccount(node.dataset, KEY)
    // giveAccount moved the user to the key's mainnet address: the node knows it by its regtest one.
    node.dataset.usersByAddress.delete(user.address)
    user.address = addressOf(KEY, REGTEST)
    node.dataset.usersByAddress.set(user.address, user)
    const service = await startApp(t, { nodes: [node.url], env: { POCKETNET_NETWORK: 'regtest', BASTYON_APP_ID: APP_ID } })
    const { token, address } = await signIn(service, { key: KEY, issued: Date.now(), version: REGTEST })
    assert.equal(address, addressOf(KEY, REGTEST))
    const me = await service.get('/api/me', bearer(token))
    assert.equal(me.status, 200)
    assert.equal(me.body.data.profile?.address, address)
    const challenge = (await postJson(service, '/api/auth/challenge')).body.data.challenge
    const mainnet = await postJson(service, '/api/auth/session', { signature: sdkSign(challenge, APP_ID, { key: KEY, issued: Date.now() }) })
    assert.deepEqual([mainnet.status, mainnet.body.code], [401, 'SIG_WRONG_NETWORK'])
  })

  it('documents regtest addresses in its OpenAPI document', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { POCKETNET_NETWORK: 'regtest' } })
    const text = JSON.stringify((await service.get('/openapi.json')).body)
    assert.ok(text.includes(REGTEST_ADDRESSES[0]!), 'a regtest example address')
    assert.ok(text.includes('a Pocketnet regtest address'), 'the regtest rule')
    assert.equal(text.includes(MAINNET_ADDRESS), false, 'no mainnet example left')
  })
})
