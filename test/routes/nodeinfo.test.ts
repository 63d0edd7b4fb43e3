import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { NO_CACHE, startApp } from '../helpers/build-app.js'
import { startEmulator } from '../helpers/start-emulator.js'

describe('GET /api/nodeinfo', () => {
  it('answers the node information in the spec envelope', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    const { status, body, headers } = await service.get('/api/nodeinfo')
    assert.equal(status, 200)
    assert.match(headers.get('content-type') ?? '', /application\/json/)
    assert.equal(body.message, 'Node information retrieved successfully')
    assert.equal(body.data.lastblock.height, node.height)
    assert.equal(body.data.version, '0.22.7')
    assert.equal(body.data.chain, 'main')
  })

  it('calls getnodeinfo with no params', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    await service.get('/api/nodeinfo')
    const calls = node.callsTo('getnodeinfo')
    assert.equal(calls.length, 2, 'one start-up probe, one call')
    assert.deepEqual(calls[1]?.params, [])
  })

  it('answers 500 with the spec message when the node answers an RPC error', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: NO_CACHE })
    await service.get('/api/nodeinfo')
    node.setFault({ kind: 'rpc-error', code: -32603, message: 'Internal failure' })
    const { status, body, headers } = await service.get('/api/nodeinfo')
    assert.equal(status, 500)
    assert.deepEqual(body, {
      message: 'Failed to retrieve node information',
      error: 'No Pocketnet node could answer getnodeinfo: Pocketnet node rejected getnodeinfo (node 1): internal error (RPC error -32603)',
      code: 'RPC_ERR_UNAVAILABLE',
    })
    assert.equal(headers.get('retry-after'), '2', 'a node that is unwell: worth trying again')
  })

  it('answers 500 when no node is reachable at all', async (t) => {
    const node = await startEmulator(t)
    await node.stop()
    const service = await startApp(t, { nodes: [node.url] })
    const { status, body } = await service.get('/api/nodeinfo')
    assert.equal(status, 500)
    assert.equal(body.message, 'Failed to retrieve node information')
    assert.match(body.error, /^No Pocketnet node answered at start-up \(1 tried\): node 1 failed: connection refused$/)
  })

  it('answers 500 when the node times out', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { ...NO_CACHE, RPC_TIMEOUT_MS: '250' } })
    await service.get('/api/nodeinfo')
    node.setFault({ kind: 'hang' })
    const { status, body } = await service.get('/api/nodeinfo')
    assert.equal(status, 500)
    assert.equal(body.message, 'Failed to retrieve node information')
    assert.match(body.error, /within 250 ms/)
  })

  it('treats a non-JSON answer as a failure of the node', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: NO_CACHE })
    await service.get('/api/nodeinfo')
    node.setFault({ kind: 'work-queue' })
    const { status, body } = await service.get('/api/nodeinfo')
    assert.equal(status, 500)
    assert.match(body.error, /node 1 is overloaded \(Work queue depth exceeded\)/)
  })
})
