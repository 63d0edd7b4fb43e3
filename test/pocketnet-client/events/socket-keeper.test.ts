/**
 * Keeping the socket alone (socket-keeper.ts), by its states: `down`, `connecting`, `open`,
 * `closed`, with polling exactly while no socket is open. The socket is a real one, to an
 * emulator on loopback; the pool is a stand-in that lists the nodes the test says. The keeper's
 * timers (polls, attempts, keep-alives) run on a clock moved by hand; waits only wait for I/O.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Emulator } from '../../../devnode/server.js'
import { SocketKeeper, type SocketState } from '../../../packages/pocketnet-client/events/socket-keeper.js'
import { resolveSourceOptions } from '../../../packages/pocketnet-client/events/source-options.js'
import type { EventSourceClient, NodeEventError, NodeSnapshot } from '../../../packages/pocketnet-client/index.js'
import { manualClock } from '../../helpers/manual-clock.js'
import { startEmulator } from '../../helpers/start-emulator.js'
import { waitFor } from '../../helpers/wait-for.js'

const snapshot = (node: Emulator): NodeSnapshot => ({
  name: 'node 1',
  url: node.url,
  usable: true,
  circuit: 'closed',
  chain: 'in-step',
  version: '0.22.7',
  height: node.chain.height,
  blockHash: undefined,
  latencyMs: 1,
  errorRate: 0,
  consecutiveFailures: 0,
  lastErrorCode: undefined,
  inFlight: 0,
  concurrencyLimit: 4,
  queued: 0,
})

function keep (t: { after (fn: () => unknown): void }, nodes: NodeSnapshot[], webSocketUrl: (node: { url: string }) => string | undefined) {
  const clock = manualClock()
  const api: EventSourceClient = {
    nodes: () => nodes,
    bestHeight: undefined,
    callRaw: () => Promise.reject(new Error('the keeper reads no blocks')),
  }
  // Polls every second; the first attempt after a failure waits 5 s (half of 10 s: random is 0).
  const options = resolveSourceOptions({ api, onEvent: () => {}, webSocketUrl, timers: clock.timers, clock: clock.now, random: () => 0, pollIntervalMs: 1000, reconnectMinMs: 10_000, reconnectMaxMs: 80_000 })
  const told: string[] = []
  const errors: NodeEventError[] = []
  const keeper = new SocketKeeper(options, {
    onOpen: () => told.push('open'),
    onBlockAnnounced: height => told.push(`block ${height}`),
    onPoll: () => told.push('poll'),
    onKeepAlive: () => told.push('keep-alive'),
    onNodeTip: report => told.push(`tip ${report.height}`),
    report: err => errors.push(err),
  })
  t.after(() => keeper.close())
  /** Each state it was seen in, whenever the test looked. */
  const seen: SocketState[] = []
  const look = (): SocketState => {
    if (seen.at(-1) !== keeper.state) seen.push(keeper.state)
    return keeper.state
  }
  const until = (state: SocketState): Promise<void> => waitFor(`the keeper ${state}`, () => look() === state)
  /** What was told since the last call. */
  const news = (): string[] => told.splice(0)
  return { clock, keeper, errors, seen, look, until, news }
}

describe('keeping the socket', () => {
  it('goes down → connecting → open, and down again when the socket is lost, polling exactly while no socket is open', async (t) => {
    const node = await startEmulator(t, { height: 2000 })
    const { clock, keeper, errors, seen, look, until, news } = keep(t, [snapshot(node)], () => node.webSocket.url)
    assert.equal(look(), 'down')
    keeper.start()
    assert.deepEqual([look(), keeper.node, keeper.polling], ['connecting', 'node 1', true])
    clock.advance(1000)
    assert.deepEqual(news(), ['poll'], 'polled while connecting')

    await until('open')
    assert.deepEqual([keeper.polling, news(), keeper.counts.socketsOpened], [false, ['open'], 1])
    clock.advance(5000)
    assert.deepEqual(news(), [], 'no poll while open')
    node.mineBlock()
    await waitFor('the block announced', () => news().includes('block 2001'))
    clock.advance(15_000)
    assert.deepEqual(news(), ['keep-alive'])

    node.webSocket.dropAll()
    await until('down')
    assert.deepEqual([keeper.polling, keeper.node, errors.at(-1)?.code, keeper.counts.socketFailures], [true, undefined, 'EVENTS_ERR_SOCKET', 1])
    clock.advance(4999)
    assert.equal(look(), 'down', 'the next attempt waits out the backoff')
    assert.deepEqual(news(), ['poll', 'poll', 'poll', 'poll'])
    clock.advance(1)
    assert.equal(look(), 'connecting')
    await until('open')
    assert.deepEqual([keeper.polling, keeper.counts.reconnects], [false, 1])
    assert.deepEqual(seen, ['down', 'connecting', 'open', 'down', 'connecting', 'open'])
  })

  it('stays down while no node can hold the socket, polling, and tries again after a backoff that doubles', async (t) => {
    const { clock, keeper, errors, look, news } = keep(t, [], () => undefined)
    keeper.start()
    assert.deepEqual([look(), keeper.polling], ['down', true])
    assert.deepEqual(errors.map(err => err.message), ['No node is healthy enough to hold the WebSocket'])
    clock.advance(5000)
    assert.equal(errors.length, 2, 'tried again after 5 s')
    clock.advance(9999)
    assert.equal(errors.length, 2)
    clock.advance(1)
    assert.equal(errors.length, 3, 'then after 10 s')
    assert.deepEqual(news(), Array(15).fill('poll'), 'polled every second meanwhile')
    assert.equal(look(), 'down')
  })

  it('goes back down when the node\'s socket cannot be had, and passes that node over for the next attempt while another can be tried', async (t) => {
    const refusing = await startEmulator(t, { height: 2000 })
    const accepting = await startEmulator(t, { height: 2000 })
    refusing.webSocket.setMode('refuse')
    const nodes = [snapshot(refusing), { ...snapshot(accepting), name: 'node 2' }]
    const urls = new Map([[refusing.url, refusing.webSocket.url], [accepting.url, accepting.webSocket.url]])
    const { clock, keeper, errors, until } = keep(t, nodes, node => urls.get(node.url))
    // random is 0: the first node not passed over is picked.
    keeper.start()
    assert.equal(keeper.node, 'node 1')
    await until('down')
    assert.match(errors.at(-1)?.message ?? '', /node 1's WebSocket failed/)
    clock.advance(5000)
    assert.equal(keeper.node, 'node 2')
    await until('open')
  })

  it('stops everything once closed: the socket, the polls, the attempts, and tells nothing after', async (t) => {
    const node = await startEmulator(t, { height: 2000 })
    const { clock, keeper, until, look, news } = keep(t, [snapshot(node)], () => node.webSocket.url)
    keeper.start()
    await until('open')
    news()
    keeper.close()
    assert.deepEqual([look(), keeper.polling, clock.pendingTimers], ['closed', false, 0])
    await waitFor('the socket closed at the node', () => node.webSocket.connections === 0)
    node.mineBlock()
    clock.advance(3_600_000)
    assert.deepEqual(news(), [])
    keeper.close()
    assert.equal(look(), 'closed')

    // Closed while down: the attempt and the polls go too.
    const down = keep(t, [], () => undefined)
    down.keeper.start()
    down.keeper.close()
    assert.equal(down.clock.pendingTimers, 0)
    down.clock.advance(3_600_000)
    assert.deepEqual([down.news(), down.errors.length], [[], 1])
  })
})
