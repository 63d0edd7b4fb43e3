/**
 * One node socket for N instances (issue #27): two services on one real redis-server and one
 * emulator with its WebSocket, clients reading Server-Sent Events with fetch. The ingest lease
 * and the interests' refresh run on clocks the test moves by hand (one per instance); the
 * lease's expiry in Redis is set far beyond any test, so that only the test decides who tries
 * when. Waits wait for conditions; they bound nothing.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ChainEvent } from 'pocketnet-client'
import { startApp, type TestApp } from '../helpers/build-app.js'
import { manualClock, type ManualClock } from '../helpers/manual-clock.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { startRedis, type TestRedis } from '../helpers/start-redis.js'
import { waitFor } from '../helpers/wait-for.js'
import type { Emulator } from '../../devnode/server.js'
import { openStream, type SseFrame } from './sse-client.js'

type WithAfter = { after (fn: () => unknown): void }

/** Far longer than any test: the lease never lapses by itself here. */
const LEASE_MS = 600_000
/** One attempt of the lease (a third of it), and one refresh of the interests. */
const TICK_MS = LEASE_MS / 3
const POST = 'c'.repeat(64)

interface Instance extends TestApp {
  clock: ManualClock
  /** The chain events this instance's listeners heard, in order. */
  heard: ChainEvent[]
}

async function instance (t: WithAfter, redis: TestRedis, node: Emulator, leaseMs = LEASE_MS): Promise<Instance> {
  const clock = manualClock()
  const heard: ChainEvent[] = []
  const service = await startApp(t, {
    nodes: [node.url],
    env: { REDIS_URL: redis.url, EVENTS_INGEST: 'true', EVENTS_INGEST_LEASE_MS: String(leaseMs) },
    eventTimers: clock.timers,
    extend: app => app.events.onChainEvent(event => heard.push(event)),
  })
  await waitFor('the instance to reach Redis', () => service.app.redis?.available === true && service.app.redis.listening)
  return { ...service, clock, heard }
}

/**
 * Waits for `condition`, moving the instances' clocks one lease attempt on between looks, each
 * once its lease has its answer from Redis: moved on while a question waits, three looks would be
 * a whole lease without an answer, and a busy machine's slow Redis an unreachable one.
 */
function drive (what: string, instances: Instance[], condition: () => boolean): Promise<void> {
  return waitFor(what, async () => {
    if (condition()) return true
    await Promise.all(instances.map(({ app }) => app.eventIngest.whenLeaseIdle()))
    for (const { clock } of instances) clock.advance(TICK_MS)
    return false
  })
}

/** A holder (started first, so it takes the lease) and another instance, once the holder ingests the chain. */
async function holderAndOther (t: WithAfter) {
  const [redis, node] = await Promise.all([startRedis(t), startEmulator(t)])
  const holder = await instance(t, redis, node)
  await drive('the first instance to take the lease', [holder], () => holder.app.eventIngest.lease === 'held')
  await waitFor('the holder to report the tip', () => holder.app.events.lastBlock?.height === node.height)
  const other = await instance(t, redis, node)
  await drive('the second instance to see the lease held elsewhere', [other], () => other.app.eventIngest.lease === 'heldElsewhere')
  return { redis, node, holder, other }
}

const blocks = (frames: SseFrame[]): number[] => frames.filter(frame => frame.event === 'block').map(frame => frame.data.height)
const heardBlocks = (heard: ChainEvent[]): number[] => heard.filter(event => event.kind === 'block').map(event => event.height)
/** The node's calls other than the pools' health probes (getnodeinfo, each instance's own, on a timer). */
const chainCalls = (node: Emulator): string[] => node.calls.filter(call => call.method !== 'getnodeinfo').map(call => call.method)

async function scraped (service: TestApp, metric: string): Promise<number> {
  const text = await service.app.metrics.scrape()
  return Number(new RegExp(`^${metric} (\\d+)$`, 'm').exec(text)?.[1])
}

describe('one node socket for every instance (the ingest lease)', () => {
  it('costs the node one WebSocket and at most two calls per block, and the block reaches the streams and listeners of both', async (t) => {
    const { node, holder, other } = await holderAndOther(t)
    assert.equal(holder.app.eventIngest.running, true)
    assert.equal(other.app.eventIngest.running, false)
    const onHolder = await openStream(t, `${holder.url}/api/events?topics=blocks`)
    const onOther = await openStream(t, `${other.url}/api/events?topics=blocks`)
    node.clearCalls()
    node.mineBlock()
    await onHolder.until('the block', frames => blocks(frames).length === 1)
    await onOther.until('the block', frames => blocks(frames).length === 1)
    await waitFor('the other\'s listeners to hear it', () => heardBlocks(other.heard).includes(node.height))

    assert.equal(node.webSocket.accepted, 1, 'one socket was ever opened')
    assert.equal(node.webSocket.connections, 1)
    assert.ok(chainCalls(node).length <= 2, `the node saw ${chainCalls(node).join(', ')} for the block`)
    assert.deepEqual(onOther.frames, onHolder.frames, 'the same event, under the same id')
    assert.deepEqual(blocks(onHolder.frames), [node.height])
    assert.deepEqual(heardBlocks(holder.heard).filter(height => height === node.height), [node.height], 'once on the holder')
    assert.deepEqual(heardBlocks(other.heard), [node.height], 'once on the other, which heard no block before it started')
    assert.deepEqual(other.heard.at(-1), holder.heard.at(-1))

    assert.equal(await scraped(holder, 'events_ingest_lease_held'), 1)
    assert.equal(await scraped(other, 'events_ingest_lease_held'), 0)
    assert.equal(await scraped(holder, 'events_ingest_lease_changes_total'), 1)
    assert.equal(await scraped(other, 'events_ingest_lease_changes_total'), 0)
    assert.equal(await scraped(other, 'events_node_socket_open'), 0)
  })

  it('follows for the holder what subscribers on the other want: a payment to their address, a comment on their post', async (t) => {
    const { node, holder, other } = await holderAndOther(t)
    const [payer, receiver] = node.dataset.users.map(user => user.address) as [string, string]
    const stream = await openStream(t, `${other.url}/api/events?topics=address:${receiver},content:${POST}`)
    await drive('the holder to follow the other\'s address and post', [holder, other],
      () => holder.app.events.interests.addresses().includes(receiver) && holder.app.events.interests.contents().includes(POST))
    assert.ok(!holder.app.events.interests.local().addresses.includes(receiver), 'followed for the other, not for a stream of its own')

    const paid = node.addTransaction({ inputs: [{ address: payer, amount: 200_000_000 }], outputs: [{ address: receiver, amount: 150_000_000 }] })
    node.addNotification({ address: payer, mesType: 'comment', addrFrom: receiver, posttxid: POST, commentid: 'd'.repeat(64), reason: 'post' } as never)
    node.clearCalls()
    node.mineBlock()
    await stream.until('the payment and the comment', frames => frames.length === 2)
    const payment = stream.frames.find(frame => frame.event === 'transaction')
    assert.deepEqual(payment?.data, { topic: `address:${receiver}`, address: receiver, txid: paid.txid, nout: 0, amount: 150_000_000, height: node.height, blockHash: node.chain.tip.hash, time: paid.time })
    assert.equal(stream.frames.find(frame => frame.event === 'notification')?.data.posttxid, POST)
    assert.ok(chainCalls(node).length <= 2, `the node saw ${chainCalls(node).join(', ')} for the block`)

    // The other's listeners hear the chain events the holder ingested, as the holder's did.
    const ofBlock = (heard: ChainEvent[]): ChainEvent[] => heard.filter(event => event.kind !== 'reorg' && event.height === node.height)
    await waitFor('the other\'s listeners to hear the block', () => ofBlock(other.heard).length === ofBlock(holder.heard).length)
    assert.deepEqual(ofBlock(other.heard), ofBlock(holder.heard))
    assert.deepEqual(ofBlock(holder.heard).map(event => event.kind), ['block', 'transaction', 'notification'])

    // Once nothing on the other follows an address, neither does the holder.
    const [, , third] = node.dataset.users.map(user => user.address) as [string, string, string]
    const inProcess = other.app.events.subscribe(new Set([`address:${third}`]), () => {})
    await drive('the holder to follow the new address', [holder, other], () => holder.app.events.interests.addresses().includes(third))
    inProcess.close()
    await drive('the holder to stop following it', [holder, other], () => !holder.app.events.interests.addresses().includes(third))
    assert.ok(holder.app.events.interests.addresses().includes(receiver), 'the stream still open is still followed')
  })

  it('hands the chain over when the holder shuts down: the other takes the lease and reads back the blocks mined meanwhile', async (t) => {
    const { node, holder, other } = await holderAndOther(t)
    const stream = await openStream(t, `${other.url}/api/events?topics=blocks`)
    const tip = node.height
    assert.equal(other.app.events.lastBlock, undefined, 'the other heard no block: it resumes from the one the holder noted in Redis')

    await holder.app.close()
    await waitFor('the holder\'s socket to close', () => node.webSocket.connections === 0)
    // Nobody ingests the chain now: without a resume point these would be skipped (the new holder would start at the tip).
    node.mineBlock()
    node.mineBlock()
    await drive('the other to take the lease', [other], () => other.app.eventIngest.lease === 'held')
    await stream.until('both blocks', frames => blocks(frames).length === 2)

    assert.deepEqual(blocks(stream.frames), [tip + 1, tip + 2], 'each once, in order')
    assert.deepEqual(heardBlocks(other.heard), [tip + 1, tip + 2])
    await waitFor('the new holder\'s socket', () => node.webSocket.connections === 1)
    assert.equal(node.webSocket.accepted, 2)
    node.mineBlock()
    await stream.until('the next block', frames => blocks(frames).length === 3)
    assert.deepEqual(blocks(stream.frames), [tip + 1, tip + 2, tip + 3])
  })

  it('ingests the chain on every instance while Redis is away, and on one again once it is back', async (t) => {
    const { redis, node, holder, other } = await holderAndOther(t)
    const onHolder = await openStream(t, `${holder.url}/api/events?topics=blocks`)
    const onOther = await openStream(t, `${other.url}/api/events?topics=blocks`)
    node.mineBlock()
    const first = node.height
    await onOther.until('a shared block', frames => blocks(frames).includes(first))

    await redis.kill()
    await drive('the lease to be unreachable, and both instances to ingest the chain', [holder, other],
      () => holder.app.eventIngest.lease === 'unreachable' && other.app.eventIngest.lease === 'unreachable' && node.webSocket.connections === 2)
    // The other's source starts from the last block it heard.
    await waitFor('the other\'s socket to register', () => node.webSocket.registrations().length === 2)
    node.mineBlock()
    const whileUnreachable = node.height
    await onHolder.until('its own block', frames => blocks(frames).includes(whileUnreachable))
    await onOther.until('its own block', frames => blocks(frames).includes(whileUnreachable))

    await redis.restart()
    await waitFor('the instances to reconnect', () => [holder, other].every(({ app }) => app.redis?.available === true && app.redis.listening))
    await drive('one holder again, and one socket', [holder, other],
      () => [holder, other].filter(({ app }) => app.eventIngest.lease === 'held').length === 1 &&
        [holder, other].filter(({ app }) => app.eventIngest.lease === 'heldElsewhere').length === 1 &&
        node.webSocket.connections === 1)
    node.mineBlock()
    const back = node.height
    await onHolder.until('the shared block', frames => blocks(frames).includes(back))
    await onOther.until('the shared block', frames => blocks(frames).includes(back))

    for (const stream of [onHolder, onOther]) assert.deepEqual(blocks(stream.frames).filter(height => height >= first), [first, whileUnreachable, back], 'each block once')
    for (const { heard } of [holder, other]) assert.deepEqual(heardBlocks(heard).filter(height => height >= first), [first, whileUnreachable, back], 'each block heard once')
    assert.equal(node.webSocket.accepted, 2, 'the holder\'s, the other\'s while the lease was unreachable, and no more')
    const held = await Promise.all([holder, other].map(service => scraped(service, 'events_ingest_lease_held')))
    assert.deepEqual(held.sort(), [0, 1])
  })

  it('with the lease off, lets every instance ingest the chain, and still keeps each block once on every stream and listener', async (t) => {
    const [redis, node] = await Promise.all([startRedis(t), startEmulator(t)])
    const [a, b] = await Promise.all([instance(t, redis, node, 0), instance(t, redis, node, 0)])
    assert.deepEqual([a.app.eventIngest.lease, b.app.eventIngest.lease], ['none', 'none'])
    await waitFor('both to ingest the chain', () => [a, b].every(({ app }) => app.events.lastBlock?.height === node.height) && node.webSocket.registrations().length === 2)
    const streams = await Promise.all([a, b].map(({ url }) => openStream(t, `${url}/api/events?topics=blocks,app:mark`)))
    node.mineBlock()
    await waitFor('both ingests to report the block', () => [a, b].every(({ heard }) => heardBlocks(heard).includes(node.height)))
    for (const stream of streams) await stream.until('the block', frames => blocks(frames).includes(node.height))
    // Published after both reports: a copy of the block would come before it.
    await a.app.events.publish('mark', {})
    for (const stream of streams) await stream.until('the mark', frames => frames.some(frame => frame.event === 'app'))
    for (const stream of streams) assert.deepEqual(blocks(stream.frames), [node.height])
    assert.deepEqual(streams[1]?.frames, streams[0]?.frames)
    for (const { heard } of [a, b]) assert.equal(heardBlocks(heard).filter(height => height === node.height).length, 1)
  })
})
