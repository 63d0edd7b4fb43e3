/**
 * How the node event source reads blocks when reads fail or answer oddly. The client is a stand-in
 * that answers from an emulator chain in process (the emulator's own method code), and can be told
 * to fail, to lag or to answer garbage; with no WebSocket to be had, the source polls on a clock
 * moved by hand. The real emulator, client and socket are in node-event-source.test.ts.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ChainHistory } from '../../../devnode/server.js'
import { getLastBlocks, getNotifications } from '../../../devnode/methods/events.js'
import { createNodeEventSource, type ChainEvent, type EventSourceClient, type NodeEventError, type NodeEventSourceOptions, type NodeSnapshot, type NodeTipReport } from '../../../packages/pocketnet-client/index.js'
import { manualClock } from '../../helpers/manual-clock.js'
import { waitFor } from '../../helpers/wait-for.js'

const ALICE = 'PAliceAliceAliceAliceAliceAlice111'
const HEALTHY: NodeSnapshot = {
  name: 'node 1',
  url: 'http://127.0.0.1:9',
  usable: true,
  circuit: 'closed',
  chain: 'in-step',
  version: '0.22.7',
  height: 100,
  blockHash: undefined,
  latencyMs: 1,
  errorRate: 0,
  consecutiveFailures: 0,
  lastErrorCode: undefined,
  inFlight: 0,
  concurrencyLimit: 4,
  queued: 0,
}

type Override = (method: string, params: unknown[]) => unknown

function standIn (chain: ChainHistory) {
  const calls: Array<[string, unknown[]]> = []
  const state = { override: undefined as Override | undefined, lagBlocks: 0, nodes: [HEALTHY], bestHeight: undefined as number | undefined }
  const tipListeners = new Set<(report: NodeTipReport) => void>()
  /** A node's getnodeinfo, as the pool's probe hears it. */
  const report = (node: string, height: number): void => {
    for (const listener of tipListeners) listener({ node, height, blockHash: chain.block(height)?.hash })
  }
  const api: EventSourceClient = {
    nodes: () => state.nodes,
    watchNodeTips (listener) {
      tipListeners.add(listener)
      return () => { tipListeners.delete(listener) }
    },
    get bestHeight () { return state.bestHeight },
    async callRaw (method, params = []) {
      calls.push([method, params])
      const answer = state.override?.(method, params)
      if (answer !== undefined) return answer
      if (method === 'getlastblocks') {
        // A node behind by lagBlocks: it has not got the newest blocks yet.
        const [count, upTo] = params as [number, number]
        const tip = chain.height - state.lagBlocks
        const last = upTo < 0 ? tip : upTo
        return last > tip ? [] : getLastBlocks(chain, [count, last])
      }
      if (method === 'getnotifications') return getNotifications(chain, params)
      throw new Error(`unexpected ${method}`)
    },
  }
  return { api, calls, state, report }
}

async function follow (t: { after (fn: () => unknown): void }, api: EventSourceClient, options: Partial<NodeEventSourceOptions> = {}) {
  const clock = manualClock()
  const events: ChainEvent[] = []
  const errors: NodeEventError[] = []
  const source = createNodeEventSource({
    api,
    onEvent: event => events.push(event),
    onError: err => errors.push(err),
    // No socket anywhere: the source polls.
    webSocketUrl: () => undefined,
    timers: clock.timers,
    clock: clock.now,
    random: () => 0,
    pollIntervalMs: 1000,
    retryDelayMs: 300,
    // Socket attempts out of the way of the reads under test.
    reconnectMinMs: 600_000,
    reconnectMaxMs: 600_000,
    ...options,
  })
  t.after(() => source.close())
  const idle = (what: string): Promise<void> => waitFor(what, () => !source.stats().catchingUp)
  return { clock, events, errors, source, idle }
}

const heights = (events: ChainEvent[]): Array<[string, number]> => events.map(event => [event.kind, event.height])

describe('the node event source\'s reads', () => {
  it('polls when no WebSocket is known for any node, saying why', async (t) => {
    const chain = new ChainHistory({ height: 100 })
    const { api } = standIn(chain)
    const { clock, events, errors, source, idle } = await follow(t, api)
    await idle('the start')
    assert.equal(errors[0]?.message, 'No WebSocket is known for node 1')
    chain.mine()
    clock.advance(1000)
    await waitFor('the polled block', () => events.length === 2)
    assert.deepEqual(heights(events), [['block', 100], ['block', 101]])
    assert.equal(source.stats().polling, true)
  })

  it('reports a block only once its notifications are read: a failed read is retried, and nothing is lost or repeated', async (t) => {
    const chain = new ChainHistory({ height: 100 })
    const { api, state, calls } = standIn(chain)
    const { clock, events, errors, idle } = await follow(t, api, { addressesOfInterest: () => [ALICE] })
    await idle('the start')
    chain.addTransaction({ outputs: [{ address: ALICE, amount: 5 }] })
    chain.mine()
    let failures = 1
    state.override = method => {
      if (method === 'getnotifications' && failures-- > 0) throw new Error('node 1 failed: connection reset')
      return undefined
    }
    clock.advance(1000)
    await idle('the failed read')
    assert.deepEqual(heights(events), [['block', 100]])
    assert.match(errors.at(-1)?.message ?? '', /^getnotifications failed: node 1 failed: connection reset$/)
    assert.equal(errors.at(-1)?.code, 'EVENTS_ERR_CATCH_UP')
    clock.advance(300)
    await waitFor('the block and its payment', () => events.length === 3)
    await idle('the retry')
    assert.deepEqual(heights(events), [['block', 100], ['block', 101], ['transaction', 101]])
    assert.deepEqual(calls.filter(([method]) => method === 'getnotifications').map(([, params]) => params), [[101], [101]])
  })

  it('waits for a block the answering node has not got yet, without reporting anything for it', async (t) => {
    const chain = new ChainHistory({ height: 100 })
    const { api, state } = standIn(chain)
    const { clock, events, errors, idle } = await follow(t, api)
    await idle('the start')
    chain.mine()
    state.lagBlocks = 1
    state.bestHeight = 101
    clock.advance(1000)
    await idle('the read of a block not there yet')
    assert.equal(errors.at(-1)?.message, 'The node answering has no block 101 yet')
    assert.deepEqual(heights(events), [['block', 100]])
    state.lagBlocks = 0
    clock.advance(300)
    await waitFor('block 101', () => events.length === 2)
  })

  it('does not take a node a block behind for a chain that got shorter: only every node\'s word given since the block was followed', async (t) => {
    const chain = new ChainHistory({ height: 100 })
    const { api, state, report } = standIn(chain)
    state.nodes = [HEALTHY, { ...HEALTHY, name: 'node 2', url: 'http://127.0.0.1:10' }]
    const { clock, events, errors, idle } = await follow(t, api)
    await idle('the start')
    chain.mine()
    clock.advance(1000)
    await waitFor('block 101', () => events.length === 2)
    await idle('the read done')

    // The node answering is a block behind, and so says node 2; node 1 has said nothing since.
    state.lagBlocks = 1
    report('node 2', 100)
    clock.advance(1000)
    await idle('the poll')
    assert.deepEqual(heights(events), [['block', 100], ['block', 101]])
    assert.equal(errors.some(err => err.code === 'EVENTS_ERR_OFF_CHAIN'), false)

    // Node 1 says so too: block 101 is on no node's chain.
    report('node 1', 100)
    await waitFor('the re-org', () => events.length === 3)
    assert.deepEqual(events[2], { kind: 'reorg', height: 101, oldBlockHash: chain.block(101)?.hash })
  })

  it('does not chase a height announced beyond where the chain ends, nor skip anything for it', async (t) => {
    const chain = new ChainHistory({ height: 100 })
    const { api, state, calls } = standIn(chain)
    const { clock, events, errors, source, idle } = await follow(t, api)
    await idle('the start')
    state.bestHeight = 1_000_000
    calls.length = 0
    clock.advance(1000)
    await idle('the poll')
    assert.deepEqual(calls, [['getlastblocks', [3, -1]]])
    assert.deepEqual(errors.filter(err => err.code !== 'EVENTS_ERR_SOCKET'), [])
    assert.deepEqual([events.length, source.stats().skippedBlocks], [1, 0])
  })

  it('skips answers without the protocol\'s fields: a block list is read again, a block\'s bad notifications leave it without events', async (t) => {
    const chain = new ChainHistory({ height: 100 })
    const { api, state } = standIn(chain)
    const { clock, events, errors, source, idle } = await follow(t, api, { addressesOfInterest: () => [ALICE] })
    await idle('the start')
    chain.addTransaction({ outputs: [{ address: ALICE, amount: 5 }] })
    chain.mine()
    state.override = method => method === 'getlastblocks' ? [{ height: '101.5', hash: 'x' }] : undefined
    clock.advance(1000)
    await idle('the bad list')
    assert.equal(errors.at(-1)?.code, 'EVENTS_ERR_BAD_MESSAGE')
    assert.equal(events.length, 1)
    state.override = method => method === 'getnotifications' ? { data: 'nope' } : undefined
    clock.advance(300)
    await waitFor('block 101', () => events.length === 2)
    assert.deepEqual(heights(events), [['block', 100], ['block', 101]])
    assert.equal(errors.at(-1)?.message, 'getnotifications did not answer {data, notifiers}')
    assert.equal(source.stats().badMessages, 2)
  })

  it('goes on when a listener throws, reporting it', async (t) => {
    const chain = new ChainHistory({ height: 100 })
    const { api } = standIn(chain)
    let seen = 0
    const { clock, errors, source, idle } = await follow(t, api, {
      onEvent: () => {
        seen++
        throw new Error('listener bug')
      },
      addressesOfInterest: () => { throw new Error('interest bug') },
    })
    await idle('the start')
    chain.mine()
    clock.advance(1000)
    await waitFor('block 101 handed over', () => seen === 2)
    assert.deepEqual(errors.filter(err => err.code === 'EVENTS_ERR_LISTENER').map(err => err.message), [
      'onEvent threw', 'An interest callback threw; nothing is of interest for this block', 'onEvent threw',
    ])
    assert.equal(source.stats().emitted.block, 2)
  })

  it('waits for a healthy node to hold the socket, polling meanwhile', async (t) => {
    const chain = new ChainHistory({ height: 100 })
    const { api, state } = standIn(chain)
    state.nodes = [{ ...HEALTHY, usable: false, circuit: 'open' }]
    const { errors, source, idle } = await follow(t, api, { webSocketUrl: () => 'ws://127.0.0.1:9/ws' })
    await idle('the start')
    assert.equal(errors[0]?.message, 'No node is healthy enough to hold the WebSocket')
    assert.deepEqual([source.stats().socket, source.stats().polling], ['down', true])
  })

  it('reports a WebSocket URL the client cannot use as a socket failure', async (t) => {
    const chain = new ChainHistory({ height: 100 })
    const { api } = standIn(chain)
    const { errors, idle } = await follow(t, api, { webSocketUrl: () => 'not a url' })
    await idle('the start')
    await waitFor('the failure', () => errors.length > 0)
    assert.equal(errors[0]?.message, 'node 1\'s WebSocket URL is not usable')
  })
})
