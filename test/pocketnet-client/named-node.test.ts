/**
 * A call for one named node (`CallOptions.node`, `RunOptions.node`): a second opinion that only
 * that node's answer can give. It goes there and nowhere else, never from the cache, never failed
 * over or hedged, and fails at once when that node is not usable.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Cancel } from '../../packages/pocketnet-client/cancel.js'
import { RpcTransportError } from '../../packages/pocketnet-client/errors.js'
import { PocketNetProxyApi, type ClientOptions } from '../../packages/pocketnet-client/index.js'
import { NodePool, type Attempt } from '../../packages/pocketnet-client/node-pool.js'
import { manualClock } from '../helpers/manual-clock.js'
import { startEmulators } from '../helpers/start-emulator.js'

type WithAfter = { after (fn: () => unknown): void }

async function createClient (t: WithAfter, options: ClientOptions) {
  // No probe during a test: every getnodeinfo a node sees is the test's.
  const api = await PocketNetProxyApi.create({ probeIntervalMs: 3_600_000, ...options })
  t.after(() => api.close())
  return api
}

describe('a call for one named node, through the client', () => {
  it('asks that node alone, every time, past a cache that holds the answer', async (t) => {
    const [a, b] = await startEmulators(t, 2)
    assert.ok(a && b)
    const api = await createClient(t, { nodes: [a.url, b.url], cache: { ttlMs: { getnodeinfo: 60_000 } } })
    await api.rpc.getnodeinfo()
    a.clearCalls()
    b.clearCalls()
    for (let i = 0; i < 3; i++) await api.rpc.getnodeinfo({ node: 'node 2' })
    assert.deepEqual([a.callsTo('getnodeinfo').length, b.callsTo('getnodeinfo').length], [0, 3], 'node 2 asked each time, the cached answer not used')
    await api.rpc.getnodeinfo()
    assert.equal(a.callsTo('getnodeinfo').length + b.callsTo('getnodeinfo').length, 3, 'an unnamed call is still answered from the cache')
    const [payer, receiver] = a.dataset.users.map(user => user.address) as [string, string]
    const { txid } = a.addTransaction({ inputs: [{ address: payer, amount: 200_000 }], outputs: [{ address: receiver, amount: 100_000 }] })
    a.mineBlock()
    await api.rpc.getrawtransaction({ txid }, { node: 'node 1' })
    await api.callRaw('getrawtransaction', [txid], { node: 'node 1' })
    assert.deepEqual([a.callsTo('getrawtransaction').length, b.callsTo('getrawtransaction').length], [2, 0], 'table and raw methods alike')
  })

  it('fails with the node\'s failure, and sends nothing to the other node', async (t) => {
    const [a, b] = await startEmulators(t, 2)
    assert.ok(a && b)
    const api = await createClient(t, { nodes: [a.url, b.url] })
    a.clearCalls()
    b.clearCalls()
    b.setFault({ kind: 'html' })
    await assert.rejects(api.rpc.getnodeinfo({ node: 'node 2' }), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'RPC_ERR_UNAVAILABLE')
      assert.match(err.message, /node 2/)
      return true
    })
    assert.equal(a.callsTo('getnodeinfo').length, 0, 'no failover to node 1')
    assert.equal(api.nodes()[1]?.usable, false, 'the failure counts against node 2')
    // Its circuit is open now: refused at once, nothing sent.
    b.setFault(null)
    b.clearCalls()
    await assert.rejects(api.rpc.getnodeinfo({ node: 'node 2' }), { code: 'RPC_ERR_UNAVAILABLE', message: /node 2 cannot take getnodeinfo now: its circuit is open/ })
    assert.equal(b.callsTo('getnodeinfo').length, 0)
    // The request's own fault stays the request's: an unknown txid is the node's answer.
    await assert.rejects(api.rpc.getrawtransaction({ txid: 'ab'.repeat(32) }, { node: 'node 1' }), { code: 'RPC_ERR_NODE' })
    assert.equal(b.callsTo('getrawtransaction').length, 0)
  })

  it('refuses a name no node has', async (t) => {
    const [a] = await startEmulators(t, 1)
    assert.ok(a)
    const api = await createClient(t, { nodes: [a.url] })
    await assert.rejects(api.rpc.getnodeinfo({ node: 'node 2' }), (err: Error) => err instanceof TypeError && /option node must name one of the nodes \(node 1\)/.test(err.message))
  })
})

describe('a call for one named node, in the pool on its injected clock', () => {
  /** Two nodes that both answered once, so that both are usable; no attempt reaches a node. */
  async function usablePool (t: WithAfter) {
    const clock = manualClock()
    const pool = new NodePool({
      nodes: ['http://127.0.0.1:9/a', 'http://127.0.0.1:9/b'],
      connectionsPerNode: 4,
      maxResponseBytes: 1024,
      probeIntervalMs: 60_000,
      maxLagBlocks: 3,
      hedging: true,
      clock: clock.now,
      timers: clock.timers,
      random: () => 0,
    })
    t.after(() => pool.close())
    const held = new Map<string, { cancel: Cancel, answer (): void, fail (): void }>()
    const asked: string[] = []
    const attempt: Attempt<string> = (node, _timeoutMs, cancel) => new Promise((resolve, reject) => {
      const name = node.transport.name
      asked.push(name)
      cancel.listen(reason => reject(reason))
      held.set(name, { cancel, answer: () => resolve(name), fail: () => reject(new RpcTransportError('search', `${name} failed: connection reset`)) })
    })
    // Two calls at once: the second goes to the node with nothing in flight, so both answer once.
    const run = { deadlineMs: 60_000, attemptTimeoutMs: 30_000 }
    const warmUp = [pool.run('search', attempt, run), pool.run('search', attempt, run)]
    for (const { answer } of held.values()) answer()
    assert.deepEqual((await Promise.all(warmUp)).sort(), ['node 1', 'node 2'])
    assert.deepEqual(pool.snapshot().map(node => node.usable), [true, true])
    asked.length = 0
    return { pool, clock, attempt, asked, held }
  }

  it('is never hedged, however long the node takes', async (t) => {
    const { pool, clock, attempt, asked, held } = await usablePool(t)
    const call = pool.run('search', attempt, { deadlineMs: 60_000, attemptTimeoutMs: 30_000, node: 'node 1' })
    clock.advance(20_000)
    assert.deepEqual(asked, ['node 1'], 'no second attempt, though an unnamed call would be hedged after 1 s at most')
    held.get('node 1')?.answer()
    assert.equal(await call, 'node 1')
  })

  it('is not failed over when the node fails', async (t) => {
    const { pool, attempt, asked, held } = await usablePool(t)
    const call = pool.run('search', attempt, { deadlineMs: 60_000, attemptTimeoutMs: 30_000, node: 'node 2' })
    held.get('node 2')?.fail()
    await assert.rejects(call, { code: 'RPC_ERR_UNAVAILABLE', message: /node 2 failed: connection reset/ })
    assert.deepEqual(asked, ['node 2'])
    assert.equal(pool.snapshot()[1]?.circuit, 'open')
  })
})
