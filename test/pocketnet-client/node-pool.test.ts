import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Cancel } from '../../packages/pocketnet-client/cancel.js'
import { RpcTransportError } from '../../packages/pocketnet-client/errors.js'
import type { NodeInfo } from '../../packages/pocketnet-client/methods/getnodeinfo.js'
import { NodePool, type Attempt, type AttemptEvent, type PoolNode } from '../../packages/pocketnet-client/node-pool.js'
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

/** A pool over `count` nodes on the test's clock, timers and random source; no attempt here reaches a node. */
function poolOn (t: { after (fn: () => unknown): void }, count: number, options: { hedging?: boolean, random?: () => number } = {}) {
  const clock = manualClock()
  const events: AttemptEvent[] = []
  const pool = new NodePool({
    nodes: Array.from({ length: count }, (_, i) => `http://127.0.0.1:9/${i}`),
    connectionsPerNode: 4,
    maxResponseBytes: 1024,
    probeIntervalMs: 60_000,
    maxLagBlocks: 3,
    hedging: options.hedging ?? false,
    clock: clock.now,
    timers: clock.timers,
    // 0 draws the first two candidates, and the better rated of them is taken.
    random: options.random ?? (() => 0),
    onAttempt: event => events.push(event),
  })
  t.after(() => pool.close())
  return { pool, clock, events }
}

/** Attempts that wait for the test to answer or fail them, by node name. */
function heldAttempts () {
  const held = new Map<string, { cancel: Cancel, answer (): void, fail (): void }>()
  const asked: string[] = []
  const attempt: Attempt<string> = (node, _timeoutMs, cancel) => new Promise((resolve, reject) => {
    const name = node.transport.name
    asked.push(name)
    cancel.listen(reason => reject(reason))
    held.set(name, { cancel, answer: () => resolve(name), fail: () => reject(new RpcTransportError('search', `${name} failed: connection reset`)) })
  })
  return { attempt, asked, held }
}

const info = (height: number) => ({ version: '0.22.7', lastblock: { height } }) as unknown as NodeInfo
const settle = () => new Promise(resolve => setImmediate(resolve))
const RUN = { deadlineMs: 5000, attemptTimeoutMs: 2000 }

describe('NodePool, on its injected clock, timers and random source', () => {
  it('hedges a call still unanswered after the hedge delay on a second node; the first answer wins', async (t) => {
    const { pool, clock, events } = poolOn(t, 2, { hedging: true })
    const { attempt, asked, held } = heldAttempts()
    const call = pool.run('search', attempt, RUN)
    assert.deepEqual(asked, ['node 1'])
    // No latency seen yet: the delay is its maximum, 1 s.
    clock.advance(999)
    assert.deepEqual(asked, ['node 1'], 'not before the delay')
    clock.advance(1)
    assert.deepEqual(asked, ['node 1', 'node 2'], 'the hedge is sent at the delay')
    held.get('node 2')?.answer()
    assert.equal(await call, 'node 2')
    await settle()
    assert.equal(held.get('node 1')?.cancel.cancelled, true, 'the overtaken attempt is cancelled')
    assert.deepEqual(events.map(event => [event.node, event.outcome, event.hedge]), [['node 2', 'ok', true], ['node 1', 'cancelled', false]])
    assert.equal(pool.snapshot()[0]?.latencyMs, 1000, 'the overtaken node is rated by the time it had used')
  })

  it('never hedges on a node whose circuit is open', async (t) => {
    const { pool, clock } = poolOn(t, 2, { hedging: true })
    const { attempt, asked, held } = heldAttempts()
    const first = pool.run('search', attempt, RUN)
    held.get('node 1')?.fail()
    await settle()
    held.get('node 2')?.answer()
    assert.equal(await first, 'node 2', 'failed over')
    assert.equal(pool.snapshot()[0]?.circuit, 'open')
    asked.length = 0
    const second = pool.run('search', attempt, RUN)
    clock.advance(900)
    assert.deepEqual(asked, ['node 2'])
    clock.advance(3000)
    assert.deepEqual(asked, ['node 2'], 'no hedge went to node 1, whose circuit is open')
    held.get('node 2')?.answer()
    assert.equal(await second, 'node 2')
  })

  it('sends nothing to a node lagging the agreed tip while a node in step can answer', async (t) => {
    // A changing draw: every pair of nodes is drawn in turn.
    let draw = 0
    const { pool } = poolOn(t, 3, { random: () => (draw++ % 7) / 7 })
    pool.noteNodeInfo(pool.nodes[0]!, info(1000))
    pool.noteNodeInfo(pool.nodes[1]!, info(1001))
    pool.noteNodeInfo(pool.nodes[2]!, info(996))
    assert.deepEqual(pool.snapshot().map(node => node.chain), ['in-step', 'in-step', 'lagging'])
    const asked: string[] = []
    for (let i = 0; i < 30; i++) await pool.run('search', async node => { asked.push(node.transport.name); return 'ok' }, RUN)
    assert.equal(asked.length, 30)
    assert.equal(asked.includes('node 3'), false)
  })

  it('takes the better rated of the two nodes drawn', async (t) => {
    const { pool, clock } = poolOn(t, 2)
    // Node 1 answers in 1.5 s, slower than a node never heard from counts (1 s); node 2 then in
    // 10 ms: node 2 is taken from then on, though node 1 comes first in every draw.
    await pool.run('search', async () => { clock.advance(1500); return 'slow' }, { deadlineMs: 5000, attemptTimeoutMs: 5000 })
    const asked: string[] = []
    await pool.run('search', async node => { asked.push(node.transport.name); clock.advance(10); return 'ok' }, RUN)
    for (let i = 0; i < 5; i++) await pool.run('search', async node => { asked.push(node.transport.name); return 'ok' }, RUN)
    assert.deepEqual(asked, ['node 2', 'node 2', 'node 2', 'node 2', 'node 2', 'node 2'])
  })

  it('probes a failed node once its cooldown ends (half-open), not before', async (t) => {
    const { pool, clock } = poolOn(t, 2)
    const { attempt, held } = heldAttempts()
    const call = pool.run('search', attempt, RUN)
    held.get('node 1')?.fail()
    await settle()
    held.get('node 2')?.answer()
    await call
    assert.equal(pool.snapshot()[0]?.circuit, 'open')
    clock.advance(999)
    assert.equal(pool.snapshot()[0]?.circuit, 'open', 'cooling down for 1 s')
    clock.advance(1)
    assert.equal(pool.snapshot()[0]?.circuit, 'half-open', 'its probe is under way')
  })
})
