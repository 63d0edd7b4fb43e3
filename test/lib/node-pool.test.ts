import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { RpcTransportError } from '../../lib/errors.js'
import { NodePool, type Attempt, type PoolNode } from '../../lib/node-pool.js'
import { manualClock } from '../helpers/manual-clock.js'

/** A pool over two nodes that no attempt here ever contacts: the attempts are the test's own. */
function createPool (t: { after (fn: () => unknown): void }, clock: () => number): NodePool {
  const pool = new NodePool({
    nodes: ['http://127.0.0.1:9/a', 'http://127.0.0.1:9/b'],
    connectionsPerNode: 1,
    maxResponseBytes: 1024,
    probeIntervalMs: 60_000,
    maxLagBlocks: 3,
    hedging: false,
    clock,
  })
  t.after(() => pool.close())
  return pool
}

describe('NodePool, on its injected clock', () => {
  it('fails over within the deadline, giving each attempt what is left of it', async (t) => {
    const clock = manualClock()
    const pool = createPool(t, clock.now)
    const timeouts: number[] = []
    const answer = await pool.run('search', (async (node: PoolNode, timeoutMs: number) => {
      timeouts.push(timeoutMs)
      if (timeouts.length === 1) {
        clock.advance(700)
        throw new RpcTransportError('search', `${node.transport.name} failed: connection reset`)
      }
      return node.transport.name
    }) as Attempt<string>, { deadlineMs: 1000, attemptTimeoutMs: 500 })
    assert.deepEqual(timeouts, [500, 300], 'the second attempt gets the 300 ms left, not its full 500')
    assert.match(answer, /^node [12]$/)
  })

  it('stops failing over once the deadline has passed, and says what failed', async (t) => {
    const clock = manualClock()
    const pool = createPool(t, clock.now)
    let attempts = 0
    await assert.rejects(pool.run('search', async () => {
      attempts++
      clock.advance(1000)
      throw new RpcTransportError('search', 'node failed: connection reset')
    }, { deadlineMs: 1000, attemptTimeoutMs: 1000 }), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'RPC_ERR_UNAVAILABLE')
      assert.match(err.message, /connection reset/)
      return true
    })
    assert.equal(attempts, 1, 'the other node is not tried past the deadline')
  })

  it('sends the next calls to the healthy node while a failed one cools down', async (t) => {
    const clock = manualClock()
    const pool = createPool(t, clock.now)
    const asked: string[] = []
    let failing: string | undefined
    const attempt: Attempt<string> = async (node) => {
      asked.push(node.transport.name)
      // The first node asked fails, now and until the test ends.
      failing ??= node.transport.name
      if (node.transport.name === failing) throw new RpcTransportError('search', `${failing} failed: connection refused`)
      return 'ok'
    }
    assert.equal(await pool.run('search', attempt, { deadlineMs: 1000, attemptTimeoutMs: 500 }), 'ok', 'the call failed over')
    assert.equal(asked.length, 2)
    asked.length = 0
    for (let i = 0; i < 20; i++) assert.equal(await pool.run('search', attempt, { deadlineMs: 1000, attemptTimeoutMs: 500 }), 'ok')
    assert.equal(asked.includes(failing as string), false, 'the failed node is left alone while its circuit is open')
    assert.equal(asked.length, 20)
    assert.equal(pool.snapshot().find(node => node.name === failing)?.circuit, 'open')
  })

  it('sends the calls waiting for a node whose circuit opens to the other node at once', async (t) => {
    const clock = manualClock()
    // One slot per node: two calls fill the pool, a third waits.
    const pool = createPool(t, clock.now)
    const pending = new Map<string, { fail (): void, answer (): void }>()
    const asked: string[] = []
    const attempt: Attempt<string> = (node) => new Promise((resolve, reject) => {
      const name = node.transport.name
      asked.push(name)
      pending.set(name, {
        fail: () => reject(new RpcTransportError('search', `${name} failed: connection reset`)),
        answer: () => resolve(name),
      })
    })
    const options = { deadlineMs: 60_000, attemptTimeoutMs: 30_000 }
    const first = pool.run('search', attempt, options)
    const second = pool.run('search', attempt, options)
    const third = pool.run('search', attempt, options)
    const waitingOn = pool.snapshot().find(node => node.queued === 1)?.name as string
    const other = waitingOn === 'node 1' ? 'node 2' : 'node 1'
    assert.deepEqual([...asked].sort(), ['node 1', 'node 2'])
    // The node the third call waits for fails: its circuit opens, and both the failed call and
    // the waiting one go to the other node's queue, the earlier deadline first.
    const failedOver = waitingOn === asked[0] ? first : second
    pending.get(waitingOn)?.fail()
    await new Promise(resolve => setImmediate(resolve))
    assert.equal(pool.snapshot().find(node => node.name === waitingOn)?.circuit, 'open')
    assert.equal(pool.snapshot().find(node => node.name === waitingOn)?.queued, 0)
    assert.equal(pool.snapshot().find(node => node.name === other)?.queued, 2)
    for (let i = 0; i < 3; i++) {
      pending.get(other)?.answer()
      await new Promise(resolve => setImmediate(resolve))
    }
    assert.deepEqual(await Promise.all([failedOver, third]), [other, other])
    assert.deepEqual(asked.slice(2), [other, other], 'nothing more was sent to the failed node')
  })
})
