import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { startApp } from '../helpers/build-app.js'
import { startEmulator } from '../helpers/start-emulator.js'

describe('GET /api/user/:address', () => {
  it('answers the profile object for the address', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    const user = node.dataset.users.find(candidate => !candidate.deleted && candidate.name)
    assert.ok(user)
    const { status, body } = await service.get(`/api/user/${user.address}`)
    assert.equal(status, 200)
    assert.equal(body.message, 'User profile retrieved successfully')
    assert.equal(body.data.address, user.address)
    assert.equal(body.data.name, user.name)
    assert.equal(Array.isArray(body.data), false)
    assert.equal(body.data.subscribers, undefined, 'the short form has no subscriber list')
  })

  it('asks the node for the short form with the string "1"', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    const user = node.dataset.users[0]
    assert.ok(user)
    await service.get(`/api/user/${user.address}`)
    assert.deepEqual(node.callsTo('getuserprofile')[0]?.params, [user.address, '1'])
  })

  it('answers 404 for a well-formed address the node does not know', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    const unknown = 'P8bbRWJknHBXJRBTDSS88uQJSFvX67iN88'
    assert.equal(node.dataset.users.some(user => user.address === unknown), false)
    const { status, body } = await service.get(`/api/user/${unknown}`)
    assert.equal(status, 404)
    assert.deepEqual(body, { message: 'User profile not found', error: `No Pocketnet account has the address ${unknown}` })
  })

  const badAddresses: Array<[string, string]> = [
    ['checksum typo', 'P8bbRWJknHBXJRBTDSS88uQJSFvX67iN89'],
    ['testnet prefix', 'T8bbRWJknHBXJRBTDSS88uQJSFvX67iN88'],
    ['too short', 'P8bbRWJknHBXJRBTDSS88uQJSFvX67iN8'],
    ['not Base58', 'P0OIl8bbRWJknHBXJRBTDSS88uQJSFvX67'],
    ['far too long', 'P'.repeat(150)],
    ['HTML', '%3Cscript%3E'],
  ]
  for (const [why, address] of badAddresses) {
    it(`answers 400 for an invalid address (${why}) without calling the node`, async (t) => {
      const node = await startEmulator(t)
      const service = await startApp(t, { nodes: [node.url] })
      const { status, body } = await service.get(`/api/user/${address}`)
      assert.equal(status, 400)
      assert.equal(body.message, 'Invalid path parameter: address')
      assert.match(body.error, /^address must be a Pocketnet address: 34 Base58 characters starting with "P", with a valid checksum/)
      assert.equal(node.callsTo('getuserprofile').length, 0)
    })
  }

  it('answers 500 with the spec message when the node fails', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    await service.get('/api/nodeinfo')
    node.setFault({ kind: 'rpc-error', code: -5, message: 'Invalid address' }, { method: 'getuserprofile' })
    const user = node.dataset.users[0]
    assert.ok(user)
    const { status, body } = await service.get(`/api/user/${user.address}`)
    assert.equal(status, 500)
    assert.equal(body.message, 'Failed to retrieve user profile')
    assert.equal(body.error, 'Pocketnet node rejected getuserprofile (node 1): invalid address or key (RPC error -5)')
  })

  it('answers 500 when the node drops the connection', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    await service.get('/api/nodeinfo')
    node.setFault({ kind: 'drop' }, { method: 'getuserprofile' })
    const user = node.dataset.users[0]
    assert.ok(user)
    const { status, body } = await service.get(`/api/user/${user.address}`)
    assert.equal(status, 500)
    assert.equal(body.message, 'Failed to retrieve user profile')
    assert.match(body.error, /node 1 failed: (connection closed|connection reset)/)
  })

  it('answers 500 when the node does not answer in time', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { RPC_TIMEOUT_MS: '250' } })
    await service.get('/api/nodeinfo')
    node.setFault({ kind: 'hang' }, { method: 'getuserprofile' })
    const user = node.dataset.users[0]
    assert.ok(user)
    const { status, body } = await service.get(`/api/user/${user.address}`)
    assert.equal(status, 500)
    assert.equal(body.message, 'Failed to retrieve user profile')
    assert.match(body.error, /did not answer getuserprofile within 250 ms/)
  })

  it('takes testnet addresses, and only those, on a service with POCKETNET_NETWORK=test', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { POCKETNET_NETWORK: 'test' } })
    const testnet = 'TGSzZGCTaYjjmMZontBcdi3M9EToS5ztEp'
    const unknown = await service.get(`/api/user/${testnet}`)
    assert.equal(unknown.status, 404)
    assert.deepEqual(node.callsTo('getuserprofile').at(-1)?.params, [testnet, '1'])
    const mainnet = await service.get('/api/user/P8bbRWJknHBXJRBTDSS88uQJSFvX67iN88')
    assert.equal(mainnet.status, 400)
    assert.match(mainnet.body.error, /address must be a Pocketnet testnet address: 34 Base58 characters starting with "T"/)
  })
})
