/**
 * The node event source against real emulators on loopback: their WebSocket, their chain, their
 * RPC through a real client. The source's timers run on a clock moved by hand (keep-alives,
 * reconnection, polling); waits only wait for I/O to happen, never bound how fast.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ChainHistory, type Emulator } from '../../../devnode/server.js'
import { PocketNetProxyApi, createNodeEventSource, type ChainEvent, type ClientOptions, type NodeEventError, type NodeEventSourceOptions } from '../../../packages/pocketnet-client/index.js'
import { manualClock } from '../../helpers/manual-clock.js'
import { startEmulator } from '../../helpers/start-emulator.js'
import { waitFor } from '../../helpers/wait-for.js'

type WithAfter = { after (fn: () => unknown): void }

async function follow (t: WithAfter, nodes: Emulator[], options: Partial<NodeEventSourceOptions> = {}, client: ClientOptions = {}) {
  // No hedging: each call goes to one node, so the nodes' counts are the source's calls.
  const api = await PocketNetProxyApi.create({ nodes: nodes.map(node => node.url), hedging: false, ...client })
  t.after(() => api.close())
  const clock = manualClock()
  const events: ChainEvent[] = []
  const errors: NodeEventError[] = []
  const source = createNodeEventSource({
    api,
    onEvent: event => events.push(event),
    onError: err => errors.push(err),
    timers: clock.timers,
    clock: clock.now,
    random: () => 0,
    ...options,
  })
  t.after(() => source.close())
  /** Until the socket is open and nothing is being read. */
  const settled = (what: string): Promise<void> => waitFor(what, () => source.stats().socket === 'open' && !source.stats().catchingUp)
  return { api, clock, events, errors, source, settled }
}

function blockEvent (node: Emulator, height: number): ChainEvent {
  const block = node.chain.block(height)
  assert.ok(block, `block ${height}`)
  return { kind: 'block', height, blockHash: block.hash, time: block.time }
}

function addresses (node: Emulator): [string, string] {
  const [a, b] = node.dataset.users.map(user => user.address)
  assert.ok(a && b)
  return [a, b]
}

const POST = 'd'.repeat(64)

describe('the node event source', () => {
  it('reports the tip at the start, then each block the node\'s socket announces, with one call per block when nothing else is of interest', async (t) => {
    const node = await startEmulator(t, { height: 2000 })
    const { events, source, settled } = await follow(t, [node])
    await settled('the socket open and the start read')
    assert.deepEqual(events, [blockEvent(node, 2000)])
    assert.deepEqual(node.webSocket.registrations().map(each => each.address), ['P8bB9yPr3vVByqfmM5KXftyGckAtAdu6f8'])
    node.clearCalls()

    node.mineBlock()
    await waitFor('block 2001', () => events.length === 2)
    assert.deepEqual(events[1], blockEvent(node, 2001))
    await settled('the read done')
    assert.deepEqual(node.callsTo('getlastblocks').map(call => call.params), [[3, 2001]])
    assert.equal(node.callsTo('getnotifications').length, 0)
    assert.equal(source.stats().height, 2001)
    assert.equal(source.stats().blockHash, node.chain.tip.hash)
  })

  it('reports payments and social events for the addresses of interest only, at two calls per block whatever their number', async (t) => {
    const node = await startEmulator(t, { height: 2000 })
    const [alice, bob] = addresses(node)
    const watched = new Set([alice, ...node.dataset.users.slice(5, 40).map(user => user.address)])
    const { events, settled } = await follow(t, [node], { addressesOfInterest: () => watched })
    await settled('the socket open')
    node.clearCalls()

    const paid = node.addTransaction({ outputs: [{ address: bob, amount: 40 }, { address: alice, amount: 150_000_000 }], inputs: [{ address: bob, amount: 150_000_100 }] })
    const comment = node.addNotification({ address: alice, mesType: 'comment', addrFrom: bob, nameFrom: 'bob', posttxid: POST, donation: 2_000 })
    node.addNotification({ address: bob, mesType: 'upvoteShare', addrFrom: alice, posttxid: POST, upvoteVal: 5 })
    node.mineBlock()
    await waitFor('the block and its events', () => events.length === 4)
    await settled('the read done')
    const stamp = { height: 2001, blockHash: node.chain.tip.hash }
    assert.deepEqual(events.slice(1), [
      blockEvent(node, 2001),
      { kind: 'transaction', address: alice, txid: paid.txid, nout: 1, amount: 150_000_000, ...stamp, time: paid.time },
      {
        kind: 'notification',
        address: alice,
        type: 'comment',
        txid: comment.txid,
        ...stamp,
        time: comment.time,
        data: { category: 'comment', addrFrom: bob, nameFrom: 'bob', reason: 'post', posttxid: POST, parentid: '', answerid: '', donation: true, amount: 2_000 },
      },
    ])
    assert.equal(events.some(event => 'address' in event && event.address === bob), false)
    assert.deepEqual(node.callsTo('getnotifications').map(call => call.params), [[2001]])
    assert.equal(node.callsTo('getlastblocks').length, 1)
  })

  it('reports the comments and scores on a post of interest, whoever they notify', async (t) => {
    const node = await startEmulator(t, { height: 2000 })
    const [alice, bob] = addresses(node)
    const { events, settled } = await follow(t, [node], { contentOfInterest: () => [POST] })
    await settled('the socket open')
    const score = node.addNotification({ address: alice, mesType: 'upvoteShare', addrFrom: bob, posttxid: POST, upvoteVal: 4 })
    node.addNotification({ address: alice, mesType: 'upvoteShare', addrFrom: bob, posttxid: 'e'.repeat(64), upvoteVal: 1 })
    node.mineBlock()
    await waitFor('the block and its event', () => events.length === 3)
    await settled('the read done')
    assert.deepEqual(events.slice(2).map(event => event.kind === 'notification' && [event.type, event.txid, event.address, event.data.posttxid, event.data.upvoteVal]), [['upvoteShare', score.txid, alice, POST, 4]])
  })

  it('loses nothing and repeats nothing when the socket drops between two blocks, and reads back with a bounded number of calls', async (t) => {
    const node = await startEmulator(t, { height: 2000 })
    const [alice, bob] = addresses(node)
    const { clock, events, errors, source, settled } = await follow(t, [node], { addressesOfInterest: () => [alice] })
    await settled('the socket open')
    node.addTransaction({ outputs: [{ address: alice, amount: 1 }] })
    node.mineBlock()
    await waitFor('block 2001 and its payment', () => events.length === 3)

    node.webSocket.dropAll()
    await waitFor('the socket seen lost', () => source.stats().socket === 'down')
    assert.equal(errors.at(-1)?.code, 'EVENTS_ERR_SOCKET')
    const missedPayment = node.addTransaction({ outputs: [{ address: alice, amount: 2 }, { address: bob, amount: 3 }] })
    node.mineBlock()
    const missedComment = node.addNotification({ address: alice, mesType: 'comment', addrFrom: bob, posttxid: POST })
    node.mineBlock()
    node.clearCalls()

    // The first reconnection waits half the minimum backoff (the jitter's random is 0).
    clock.advance(500)
    await settled('the socket open again and the gap read')
    assert.deepEqual(events.map(event => [event.kind, event.height]), [
      ['block', 2000], ['block', 2001], ['transaction', 2001], ['block', 2002], ['transaction', 2002], ['block', 2003], ['notification', 2003],
    ])
    assert.deepEqual(events[3], blockEvent(node, 2002))
    assert.equal(events[4]?.kind === 'transaction' && events[4].txid, missedPayment.txid)
    assert.equal(events[6]?.kind === 'notification' && events[6].txid, missedComment.txid)
    assert.deepEqual(events[5], blockEvent(node, 2003))
    // One read of the tip, one notifications call per missed block, one port look-up.
    assert.deepEqual(node.callsTo('getlastblocks').map(call => call.params), [[3, -1]])
    assert.deepEqual(node.callsTo('getnotifications').map(call => call.params), [[2002], [2003]])
    assert.equal(source.stats().reconnects, 1)
    assert.equal(source.stats().polling, false)
  })

  it('moves to another node when its node goes away, and reads back what connected meanwhile', async (t) => {
    const chain = new ChainHistory({ height: 2000 })
    const first = await startEmulator(t, { chain })
    const second = await startEmulator(t, { chain })
    const { clock, events, source, settled } = await follow(t, [first, second])
    await settled('the socket open')
    assert.equal(source.stats().node, 'node 1')
    assert.equal(first.webSocket.connections, 1)

    await first.stop()
    await waitFor('the socket seen lost', () => source.stats().socket === 'down')
    second.mineBlock()
    second.mineBlock()
    clock.advance(500)
    await settled('the socket open on the other node')
    assert.equal(source.stats().node, 'node 2')
    assert.equal(second.webSocket.connections, 1)
    assert.deepEqual(events, [blockEvent(first, 2000), blockEvent(second, 2001), blockEvent(second, 2002)])

    second.mineBlock()
    await waitFor('block 2003 through the new socket', () => events.length === 4)
    assert.deepEqual(events[3], blockEvent(second, 2003))
  })

  it('moves away from a stalled socket once it is silent for too long', async (t) => {
    const chain = new ChainHistory({ height: 2000 })
    const first = await startEmulator(t, { chain })
    const second = await startEmulator(t, { chain })
    const { clock, events, source, settled } = await follow(t, [first, second], { pingIntervalMs: 20_000, silenceTimeoutMs: 50_000 })
    await settled('the socket open')
    first.webSocket.setMode('stall')
    first.mineBlock()
    // Two keep-alives go unanswered; the third finds the socket silent for 60 s.
    clock.advance(20_000)
    clock.advance(20_000)
    assert.equal(source.stats().socket, 'open')
    clock.advance(20_000)
    assert.equal(source.stats().socket, 'down')
    clock.advance(500)
    await settled('the socket open on the other node')
    assert.equal(source.stats().node, 'node 2')
    assert.deepEqual(events, [blockEvent(first, 2000), blockEvent(first, 2001)])
  })

  it('moves the socket off a node that falls behind the others', async (t) => {
    const chain = new ChainHistory({ height: 2000 })
    const nodes = await Promise.all([0, 1, 2].map(() => startEmulator(t, { chain })))
    const [first] = nodes as [Emulator]
    const { api, clock, errors, source, settled } = await follow(t, nodes, {}, { probeIntervalMs: 50 })
    await settled('the socket open')
    assert.equal(source.stats().node, 'node 1')
    first.setFault({ kind: 'lag', blocks: 10 }, { method: 'getnodeinfo' })
    await waitFor('node 1 seen lagging by the pool', () => api.nodes()[0]?.chain === 'lagging')
    clock.advance(20_000)
    assert.equal(errors.at(-1)?.message, 'node 1 is no longer in step with the chain: moving the WebSocket')
    clock.advance(500)
    await settled('the socket open on another node')
    assert.equal(source.stats().node, 'node 2')
  })

  it('reports a re-org: the lowest height whose hash changed, then the blocks that replace it', async (t) => {
    const node = await startEmulator(t, { height: 2000 })
    const { events, settled } = await follow(t, [node])
    await settled('the socket open')
    node.mineBlock()
    node.mineBlock()
    await waitFor('blocks 2001 and 2002', () => events.length === 3)
    await settled('the read done')
    const [old2001, old2002] = [blockEvent(node, 2001), blockEvent(node, 2002)]

    // A one-block re-org: the replacement at 2002 is not announced (as on a node); 2003 is.
    node.disconnectBlock()
    node.mineBlock()
    node.mineBlock()
    await waitFor('the re-org and the new blocks', () => events.length === 6)
    await settled('the read done')
    assert.deepEqual(events.slice(3), [
      { kind: 'reorg', height: 2002, oldBlockHash: (old2002 as { blockHash: string }).blockHash, newBlockHash: node.chain.block(2002)?.hash },
      blockEvent(node, 2002),
      blockEvent(node, 2003),
    ])

    // Two blocks deep: the source reads further down to find where the chains part.
    node.disconnectBlock()
    node.disconnectBlock()
    node.mineBlock()
    node.mineBlock()
    node.mineBlock()
    await waitFor('the second re-org', () => events.length === 10)
    assert.deepEqual(events.slice(6).map(event => [event.kind, event.height]), [['reorg', 2002], ['block', 2002], ['block', 2003], ['block', 2004]])
    assert.deepEqual(events.slice(7), [blockEvent(node, 2002), blockEvent(node, 2003), blockEvent(node, 2004)])
    assert.equal(events.some(event => event.kind === 'block' && event.blockHash === (old2001 as { blockHash: string }).blockHash && event.height !== 2001), false)
  })

  it('polls when no node accepts the WebSocket, and goes back to the socket once one does', async (t) => {
    const node = await startEmulator(t, { height: 2000 })
    node.webSocket.setMode('refuse')
    const { clock, events, errors, source } = await follow(t, [node], { pollIntervalMs: 15_000, reconnectMinMs: 60_000, reconnectMaxMs: 60_000 })
    await waitFor('the upgrade refused and the tip read', () => source.stats().socketFailures === 1 && events.length === 1 && !source.stats().catchingUp)
    assert.match(errors[0]?.message ?? '', /node 1's WebSocket failed: the upgrade was answered HTTP 503/)
    assert.equal(source.stats().polling, true)

    node.mineBlock()
    node.mineBlock()
    node.clearCalls()
    clock.advance(15_000)
    await waitFor('the polled blocks', () => events.length === 3)
    assert.deepEqual(events.slice(1), [blockEvent(node, 2001), blockEvent(node, 2002)])
    await waitFor('the poll done', () => !source.stats().catchingUp)
    assert.deepEqual(node.callsTo('getlastblocks').map(call => call.params), [[3, -1]])

    node.webSocket.setMode('open')
    clock.advance(15_000)
    await waitFor('the socket open', () => source.stats().socket === 'open')
    assert.equal(source.stats().polling, false)
    node.mineBlock()
    await waitFor('block 2003 through the socket', () => events.length === 4)
  })

  it('reads back from where a previous run stopped, up to maxCatchUpBlocks, and says which blocks it skipped', async (t) => {
    const node = await startEmulator(t, { height: 2000 })
    for (let i = 0; i < 3; i++) node.mineBlock()
    const resumed = await follow(t, [node], { resumeFrom: { height: 2000, blockHash: node.chain.block(2000)?.hash as string } })
    await resumed.settled('caught up')
    assert.deepEqual(resumed.events, [blockEvent(node, 2001), blockEvent(node, 2002), blockEvent(node, 2003)])

    const bounded = await follow(t, [node], { resumeFrom: { height: 1995, blockHash: node.chain.block(1995)?.hash as string }, maxCatchUpBlocks: 2 })
    await bounded.settled('caught up')
    assert.deepEqual(bounded.events, [blockEvent(node, 2002), blockEvent(node, 2003)])
    const gap = bounded.errors.find(err => err.code === 'EVENTS_ERR_GAP')
    assert.deepEqual(gap?.skipped, { fromHeight: 1996, toHeight: 2001 })
    assert.equal(bounded.source.stats().skippedBlocks, 6)
  })

  it('reports a re-org first when the block it resumes from was replaced', async (t) => {
    const node = await startEmulator(t, { height: 2000 })
    node.mineBlock()
    // A bound of two blocks: the chains cannot be told apart below the block resumed from, so the
    // re-org goes down to the bound (below, the default's).
    const { events, errors, settled } = await follow(t, [node], { resumeFrom: { height: 2000, blockHash: 'f'.repeat(64) }, maxCatchUpBlocks: 2 })
    await settled('caught up')
    assert.deepEqual(events, [
      { kind: 'reorg', height: 2000, oldBlockHash: 'f'.repeat(64), newBlockHash: node.chain.block(2000)?.hash },
      blockEvent(node, 2000),
      blockEvent(node, 2001),
    ])
    assert.deepEqual(errors.filter(err => err.code === 'EVENTS_ERR_OFF_CHAIN').map(err => err.message), [
      `The block resumed from is not on the node's chain: block 2000 is ${node.chain.block(2000)?.hash as string} on the node's chain, not ${'f'.repeat(64)}. Reported as a re-org from 2000 (no block reported is on the node's chain within maxCatchUpBlocks (2) of its tip); the blocks from there are read again`,
    ])
  })

  it('reads the chain again when the block it resumes from is above the node\'s tip (a node restarted on another chain), down to maxCatchUpBlocks', async (t) => {
    // As `npm run demo` restarted on a kept DATA_DIR: the database remembers block 2012 of the
    // last run's chain; this node's chain starts again lower, and a payment is in its block 2001.
    const node = await startEmulator(t, { height: 2000 })
    const [alice, bob] = addresses(node)
    const paid = node.addTransaction({ inputs: [{ address: bob, amount: 6 }], outputs: [{ address: alice, amount: 5 }] })
    node.mineBlock()
    const elsewhere = 'e'.repeat(64)
    const { events, errors, source, settled } = await follow(t, [node], { resumeFrom: { height: 2012, blockHash: elsewhere }, maxCatchUpBlocks: 5, addressesOfInterest: () => [alice] })
    await settled('the chain read again')
    const stamp = { height: 2001, blockHash: node.chain.block(2001)?.hash as string }
    assert.deepEqual(events, [
      { kind: 'reorg', height: 1997, oldBlockHash: elsewhere, newBlockHash: node.chain.block(1997)?.hash },
      ...[1997, 1998, 1999, 2000, 2001].map(height => blockEvent(node, height)),
      { kind: 'transaction', address: alice, txid: paid.txid, nout: 0, amount: 5, ...stamp, time: paid.time },
    ])
    assert.deepEqual(errors.filter(err => err.code === 'EVENTS_ERR_OFF_CHAIN').map(err => err.message), [
      `The block resumed from is not on the node's chain: the node's chain ends at 2001, below block 2012 (${elsewhere}). Reported as a re-org from 1997 (no block reported is on the node's chain within maxCatchUpBlocks (5) of its tip); the blocks from there are read again`,
    ])
    assert.deepEqual(source.stats().reorgsFound, { resume: 1, 'node-report': 0, 'new-blocks': 0 })

    node.mineBlock()
    await waitFor('block 2002, announced', () => events.length === 8)
    assert.deepEqual(events.at(-1), blockEvent(node, 2002))
  })

  it('sees a re-org that leaves the height unchanged at the pool\'s next probe, though no node announces it', async (t) => {
    const node = await startEmulator(t, { height: 2000 })
    const { events, errors, source, settled } = await follow(t, [node], {}, { probeIntervalMs: 50 })
    await settled('the socket open')
    node.mineBlock()
    node.mineBlock()
    await waitFor('blocks 2001 and 2002', () => events.length === 3)
    await settled('the read done')
    const old2002 = blockEvent(node, 2002) as { blockHash: string }

    // Another block at 2002: the node's socket says nothing (it told of 2002 already); its getnodeinfo does.
    node.disconnectBlock()
    node.mineBlock()
    await waitFor('the re-org and the new block 2002', () => events.length === 5)
    assert.deepEqual(events.slice(3), [
      { kind: 'reorg', height: 2002, oldBlockHash: old2002.blockHash, newBlockHash: node.chain.block(2002)?.hash },
      blockEvent(node, 2002),
    ])
    assert.deepEqual(node.webSocket.registrations().map(each => each.block), [2002], 'nothing was announced')
    assert.match(errors.find(err => err.code === 'EVENTS_ERR_OFF_CHAIN')?.message ?? '', /^A node reports another tip than the chain reported: block 2002 is [0-9a-f]{64} on the node's chain, not [0-9a-f]{64}\. Reported as a re-org from 2002 \(the chains agree below 2002\)/)
    assert.deepEqual(source.stats().reorgsFound, { resume: 0, 'node-report': 1, 'new-blocks': 0 })

    node.mineBlock()
    await waitFor('block 2003, announced', () => events.length === 6)
    assert.deepEqual(events.at(-1), blockEvent(node, 2003))
  })

  it('sees a chain that got shorter than the block followed once the node says so, and the blocks that replace it', async (t) => {
    const node = await startEmulator(t, { height: 2000 })
    const { events, source, settled } = await follow(t, [node], {}, { probeIntervalMs: 50 })
    await settled('the socket open')
    node.mineBlock()
    node.mineBlock()
    await waitFor('blocks 2001 and 2002', () => events.length === 3)
    await settled('the read done')
    const old2001 = blockEvent(node, 2001) as { blockHash: string }

    // The node's chain now ends at 2000 (a node restarted lower, a re-org to a shorter chain).
    node.disconnectBlock()
    node.disconnectBlock()
    await waitFor('the re-org', () => events.length === 4)
    assert.deepEqual(events[3], { kind: 'reorg', height: 2001, oldBlockHash: old2001.blockHash })
    await waitFor('the source back at 2000', () => source.stats().height === 2000)

    // A new 2001, below what the socket was told of: announced by nobody, read from the probes.
    node.mineBlock()
    await waitFor('the new block 2001', () => events.length === 5)
    assert.deepEqual(events[4], blockEvent(node, 2001))
    assert.equal(source.stats().reorgsFound['node-report'], 1)
  })

  it('leaves no timer and no socket behind once closed', async (t) => {
    const node = await startEmulator(t, { height: 2000 })
    const { clock, events, source, settled } = await follow(t, [node])
    await settled('the socket open')
    await source.close()
    assert.equal(clock.pendingTimers, 0)
    assert.equal(source.stats().socket, 'closed')
    await waitFor('the socket closed at the node', () => node.webSocket.connections === 0)
    node.mineBlock()
    clock.advance(3_600_000)
    assert.equal(events.length, 1)
  })

  it('refuses options out of range, naming them', async (t) => {
    const node = await startEmulator(t)
    const api = await PocketNetProxyApi.create({ nodes: [node.url] })
    t.after(() => api.close())
    assert.throws(() => createNodeEventSource({ api, onEvent: () => {}, maxCatchUpBlocks: 0 }), { name: 'TypeError', message: /option maxCatchUpBlocks must be an integer from 1 to 10000/ })
    assert.throws(() => createNodeEventSource({ api, onEvent: () => {}, resumeFrom: { height: 1, blockHash: 'x' } }), /option resumeFrom/)
    assert.throws(() => createNodeEventSource({ api } as unknown as NodeEventSourceOptions), /option onEvent must be a function/)
  })
})
