/**
 * One stream alone (no server): what it holds back for a client catching up, written as the
 * client reads, a resync when the client falls further behind than a reconnect could catch up
 * from, and a client that reads nothing dropped after maxStallMs, on the test's clock.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { StreamEvent } from '../../src/events/event-log.js'
import { startEventStream } from '../../src/events/event-stream.js'
import { EventHub } from '../../src/events/hub.js'
import { StreamRegistry, type StreamLimits } from '../../src/events/streams.js'
import { manualClock } from '../helpers/manual-clock.js'

const LIMITS: StreamLimits = { maxStreams: 10, maxPerClient: 10, maxBufferBytes: 4096, maxStallMs: 1000, maxBacklog: 5, heartbeatMs: 60_000, maxPolls: 10, maxPollsPerClient: 10 }

/** An event of about 600 bytes once framed: the stream's buffer (a quarter of 4096) takes two. */
const event = (n: number): StreamEvent => ({ id: `1-${n}`, topic: 'app:room', type: 'app', data: { n, text: 'x'.repeat(540) }, at: 0 })

/** The ids and types of the frames in `text`. */
const framesOf = (text: string): string[] => [...text.matchAll(/^id: (\S+)\nevent: (\S+)$/gm)].map(([, id, type]) => `${type} ${id}`)

describe('an open stream', () => {
  it('writes what it held back as the client reads, and a resync in place of what a reconnect could not have caught up', async () => {
    const clock = manualClock()
    const registry = new StreamRegistry(LIMITS, clock.timers)
    const stream = registry.open('203.0.113.1')
    assert.equal(stream.state, 'catchingUp')
    // The replay and what came meanwhile, held back until the replay is known.
    for (let n = 1; n <= 5; n++) stream.send(event(n))
    stream.goLive(5)
    assert.equal(stream.state, 'live')
    assert.equal(registry.counts.replayed, 3, 'written until the stream\'s buffer is full')
    // Nobody reads: two wait, three more come, and the next is one more than the stream holds back for its client.
    for (let n = 6; n <= 10; n++) stream.send(event(n))
    let text = ''
    stream.body.on('data', (chunk: Buffer) => { text += chunk.toString() })
    await new Promise(resolve => setImmediate(resolve))
    assert.deepEqual(framesOf(text), ['app 1-1', 'app 1-2', 'app 1-3', 'resync 1-9', 'app 1-10'])
    assert.match(text, /event: resync\ndata: \{"reason":"This stream fell further behind/)
    assert.deepEqual(registry.counts, { opened: 1, droppedSlow: 0, eventsSent: 4, replayed: 3, resyncs: 1 })
    clock.advance(LIMITS.maxStallMs)
    assert.equal(stream.closed, false, 'read: not stalled')
  })

  it('drops a client that reads nothing of what it was sent for maxStallMs, once', async () => {
    const clock = manualClock()
    const registry = new StreamRegistry(LIMITS, clock.timers)
    const stream = registry.open('2001:db8::1')
    stream.goLive(0)
    for (let n = 1; n <= 3; n++) stream.send(event(n))
    clock.advance(LIMITS.maxStallMs - 1)
    assert.equal(stream.closed, false)
    clock.advance(1)
    assert.equal(stream.closed, true)
    assert.equal(stream.state, 'closed')
    stream.send(event(4))
    await new Promise(resolve => setImmediate(resolve))
    assert.deepEqual([registry.size, registry.counts.droppedSlow, registry.counts.eventsSent], [0, 1, 3])
  })

  it('is ended by the service with a last frame, and closed once its client has it', async () => {
    const clock = manualClock()
    const registry = new StreamRegistry(LIMITS, clock.timers)
    const stream = registry.open('203.0.113.2')
    stream.goLive(0)
    let text = ''
    stream.body.on('data', (chunk: Buffer) => { text += chunk.toString() })
    registry.closeAll()
    assert.equal(stream.state, 'ended')
    stream.send(event(1))
    await new Promise(resolve => setImmediate(resolve))
    assert.equal(text, 'event: shutdown\ndata: {"reconnect":true}\n\n', 'nothing after the last frame')
    stream.body.destroy()
    await new Promise(resolve => setImmediate(resolve))
    assert.deepEqual([stream.state, registry.size], ['closed', 0])
  })

  it('is never left open, counted against the caps, when following its topics fails', async () => {
    const clock = manualClock()
    const registry = new StreamRegistry(LIMITS, clock.timers)
    const hub = new EventHub({ maxEvents: 10, maxAgeMs: 60_000, now: () => 0 })
    // A shared log that cannot answer the replay (Redis gone mid-request).
    hub.share({ since: async () => { throw new Error('Redis is gone') } } as unknown as Parameters<EventHub['share']>[0])
    await assert.rejects(startEventStream(registry, hub, { client: '203.0.113.3', topics: new Set(['blocks']), since: '1-0', retryMs: 3000 }), /Redis is gone/)
    await new Promise(resolve => setImmediate(resolve))
    assert.equal(registry.size, 0)
  })
})
