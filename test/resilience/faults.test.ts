import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Emulator, Fault } from '../../devnode/server.js'
import { NO_CACHE, startApp, type TestApp } from '../helpers/build-app.js'
import { startEmulators } from '../helpers/start-emulator.js'
import { waitFor } from '../helpers/wait-for.js'

// Short intervals so that detection and recovery happen within a test; the logic is the same
// as with the defaults.
// The answer cache is off: every request must reach a node.
const FAST_HEALTH = { ...NO_CACHE, POCKETNET_PROBE_INTERVAL_MS: '100', RPC_TIMEOUT_MS: '800', RPC_DEADLINE_MS: '3000' }

async function threeNodes (t: { after (fn: () => unknown): void }): Promise<[Emulator, Emulator, Emulator]> {
  const nodes = await startEmulators(t, 3)
  return nodes as [Emulator, Emulator, Emulator]
}

/** One request to each route; asserts each answers 200 with the right data. */
async function everyRouteSucceeds (service: TestApp, healthy: Emulator): Promise<void> {
  const user = healthy.dataset.users.find(candidate => !candidate.deleted) as { address: string, name: string }
  const [info, profile, found] = await Promise.all([
    service.get('/api/nodeinfo'),
    service.get(`/api/user/${user.address}`),
    service.get('/api/search?keyword=bitcoin&pageSize=5'),
  ])
  assert.equal(info.status, 200, JSON.stringify(info.body))
  assert.equal(info.body.data.lastblock.height, healthy.height)
  assert.equal(profile.status, 200, JSON.stringify(profile.body))
  assert.equal(profile.body.data.name, user.name)
  assert.equal(found.status, 200, JSON.stringify(found.body))
  assert.equal(found.body.data.results.length, 5)
}

function trafficTo (node: Emulator): number {
  return node.callsTo('getuserprofile').length + node.callsTo('search').length
}

const FAULTS: Array<[string, Fault | 'down']> = [
  ['connection refused', 'down'],
  ['a dropped connection', { kind: 'drop' }],
  ['a hang', { kind: 'hang' }],
  ['an HTTP 500 RPC error', { kind: 'rpc-error', code: -32603, message: 'Internal error' }],
  ['Work queue depth exceeded', { kind: 'work-queue' }],
  ['an HTML 502 page', { kind: 'html', status: 502 }],
  ['a non-JSON 200 answer', { kind: 'garbage' }],
  ['2 s of latency', { kind: 'latency', ms: 2000 }],
  ['a lagging chain height', { kind: 'lag', blocks: 10 }],
]

describe('one faulty node of three', () => {
  for (const [name, fault] of FAULTS) {
    it(`serves every route with correct data when one node has ${name}, and stops using it`, async (t) => {
      const [healthy, faulty, other] = await threeNodes(t)
      if (fault === 'down') await faulty.stop()
      else faulty.setFault(fault)
      const service = await startApp(t, { nodes: [healthy.url, faulty.url, other.url], env: FAST_HEALTH })
      for (let round = 0; round < 5; round++) await everyRouteSucceeds(service, healthy)
      faulty.clearCalls()
      for (let round = 0; round < 20; round++) await everyRouteSucceeds(service, healthy)
      assert.equal(trafficTo(faulty), 0, 'no request reaches the faulty node once it is detected')
      assert.ok(trafficTo(healthy) + trafficTo(other) >= 40)
    })
  }

  it('hedges a slow attempt on a second node', async (t) => {
    const [a, b, c] = await threeNodes(t)
    const service = await startApp(t, { nodes: [a.url, b.url, c.url], env: { ...FAST_HEALTH, POCKETNET_PROBE_INTERVAL_MS: '60000' } })
    await service.get('/api/nodeinfo')
    // Slow from now on; the pool still rates it as fast as the others.
    a.setFault({ kind: 'latency', ms: 1500 }, { method: 'search' })
    const started = performance.now()
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => service.get(`/api/search?keyword=bitcoin&page=${i}&pageSize=3`)))
    const elapsed = performance.now() - started
    for (const answer of answers) assert.equal(answer.status, 200)
    assert.ok(elapsed < 1200, `answers came after ${Math.round(elapsed)} ms; the slow node alone takes 1500 ms`)
  })

  it('does not retry an RPC error that blames the request', async (t) => {
    const nodes = await threeNodes(t)
    const service = await startApp(t, { nodes: nodes.map(node => node.url), env: FAST_HEALTH })
    await service.get('/api/nodeinfo')
    for (const node of nodes) node.setFault({ kind: 'rpc-error', code: -5, message: 'Invalid address' }, { method: 'getuserprofile' })
    const user = nodes[0].dataset.users[0] as { address: string }
    const { status, body } = await service.get(`/api/user/${user.address}`)
    assert.equal(status, 500)
    assert.equal(body.error, `Pocketnet node rejected getuserprofile (${body.error.match(/node \d/)[0]}): invalid address or key (RPC error -5)`)
    assert.equal(nodes.reduce((sum, node) => sum + node.callsTo('getuserprofile').length, 0), 1)
  })
})

describe('all nodes down', () => {
  it('answers the spec 500 within the deadline, says 503 on /readyz, and recovers without a restart', async (t) => {
    const nodes = await threeNodes(t)
    const service = await startApp(t, { nodes: nodes.map(node => node.url), env: { ...FAST_HEALTH, RPC_DEADLINE_MS: '1000', RPC_TIMEOUT_MS: '400' } })
    assert.equal((await service.get('/readyz')).status, 200)
    for (const node of nodes) node.setFault({ kind: 'hang' })
    const user = nodes[0].dataset.users[0] as { address: string }
    const started = performance.now()
    const answers = await Promise.all([
      service.get('/api/nodeinfo'),
      service.get(`/api/user/${user.address}`),
      service.get('/api/search?keyword=bitcoin'),
    ])
    const elapsed = performance.now() - started
    assert.deepEqual(answers.map(answer => answer.status), [500, 500, 500])
    assert.deepEqual(answers.map(answer => answer.body.message), ['Failed to retrieve node information', 'Failed to retrieve user profile', 'Search operation failed'])
    assert.ok(elapsed < 1000 + 300, `answered after ${Math.round(elapsed)} ms`)

    for (const node of nodes) await node.stop()
    const notReady = await service.get('/readyz')
    assert.equal(notReady.status, 503)
    assert.equal(notReady.body.data.nodes.length, 3)
    assert.doesNotMatch(JSON.stringify(notReady.body), /127\.0\.0\.1/)

    await nodes[2].start()
    nodes[2].setFault(null)
    const back = await service.get('/api/nodeinfo')
    assert.equal(back.status, 200)
    assert.equal(back.body.data.lastblock.height, nodes[2].height)
  })
})

describe('health endpoints', () => {
  it('answers /healthz while the process lives, whatever the nodes do', async (t) => {
    const nodes = await threeNodes(t)
    for (const node of nodes) await node.stop()
    const service = await startApp(t, { nodes: nodes.map(node => node.url), env: FAST_HEALTH })
    const { status, body } = await service.get('/healthz')
    assert.equal(status, 200)
    assert.equal(body.message, 'Alive')
  })

  it('answers /readyz 200 with each node\'s state when one is usable', async (t) => {
    const nodes = await threeNodes(t)
    await nodes[0].stop()
    const service = await startApp(t, { nodes: nodes.map(node => node.url), env: FAST_HEALTH })
    await service.get('/api/nodeinfo')
    const client = service.app.pocketnet.peek()
    assert.ok(client)
    await waitFor('every start-up probe to end', () => client.nodes().every(node => node.height !== undefined || node.lastErrorCode !== undefined))
    const { status, body } = await service.get('/readyz')
    assert.equal(status, 200)
    assert.equal(body.message, 'Ready')
    const states = body.data.nodes.map((node: { name: string, usable: boolean }) => [node.name, node.usable])
    assert.deepEqual(states, [['node 1', false], ['node 2', true], ['node 3', true]])
  })
})
