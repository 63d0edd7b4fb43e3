import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { NO_CACHE, startApp } from '../helpers/build-app.js'
import { startEmulator } from '../helpers/start-emulator.js'

describe('the shared client', () => {
  it('is created once for 50 concurrent first requests', async (t) => {
    const node = await startEmulator(t)
    // The creation's probe is slow, so that all 50 arrive while it runs; the profiles are not: 50
    // slow calls queued at one node could be shed (503) on a machine busy with other tests, and
    // this is no test of load shedding.
    node.setFault({ kind: 'latency', ms: 50 }, { method: 'getnodeinfo' })
    const service = await startApp(t, { nodes: [node.url], env: { RPC_TIMEOUT_MS: '60000' } })
    const users = node.dataset.users.slice(0, 50)
    assert.equal(users.length, 50)
    const answers = await Promise.all(users.map(user => service.get(`/api/user/${user.address}`)))
    assert.deepEqual(new Set(answers.map(answer => answer.status)), new Set([200]))
    // Each client creation probes the node once with getnodeinfo.
    assert.equal(node.callsTo('getnodeinfo').length, 1)
    assert.equal(node.callsTo('getuserprofile').length, 50)
    assert.ok(service.app.pocketnet.peek())
  })

  it('is created again after a failed creation', async (t) => {
    const node = await startEmulator(t)
    await node.stop()
    const service = await startApp(t, { nodes: [node.url], env: NO_CACHE })
    const failed = await service.get('/api/nodeinfo')
    assert.equal(failed.status, 500)
    assert.match(failed.body.error, /No Pocketnet node answered at start-up/)
    assert.equal(service.app.pocketnet.peek(), undefined)
    await node.start()
    const ok = await service.get('/api/nodeinfo')
    assert.equal(ok.status, 200)
    assert.equal(ok.body.data.lastblock.height, node.height)
    const again = await service.get('/api/nodeinfo')
    assert.equal(again.status, 200)
    // the second creation's probe, then two calls on the same client
    assert.equal(node.callsTo('getnodeinfo').length, 3)
  })

  it('is closed with the app', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    await service.get('/api/nodeinfo')
    const client = service.app.pocketnet.peek()
    assert.ok(client)
    await service.app.close()
    assert.equal(client.closed, true)
  })
})
