/**
 * Streams whose client reads slowly or not at all (issue #39): a replay larger than the buffer is
 * sent as the client reads it, a client that reads nothing for EVENTS_MAX_STALL_MS is dropped
 * (on the test's clock), and a drop is counted once. Real servers, fetch reading the stream, or
 * not reading it.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { startApp, type TestAppOptions } from '../helpers/build-app.js'
import { manualClock } from '../helpers/manual-clock.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { waitFor } from '../helpers/wait-for.js'
import { openStream } from './sse-client.js'

type WithAfter = { after (fn: () => unknown): void }

async function service (t: WithAfter, env: Record<string, string> = {}, overrides: Partial<TestAppOptions> = {}) {
  const node = await startEmulator(t)
  return startApp(t, { ...overrides, nodes: [node.url], env: { EVENTS_INGEST: 'false', ...env } })
}

/** A counter's value in a scrape. */
const valueIn = (scraped: string, name: string): number => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(scraped)?.[1])

describe('slow stream clients', () => {
  it('replays more than EVENTS_MAX_BUFFER_BYTES as the client reads it: every event, in order, then live', async (t) => {
    const app = await service(t, { EVENTS_MAX_BUFFER_BYTES: '2048' })
    const first = await openStream(t, `${app.url}/api/events?topics=app:room`)
    app.app.events.publish('room', { n: 0 })
    await first.until('the first event', frames => frames.length === 1)
    first.close()
    await waitFor('the first stream to be forgotten', () => app.app.eventStreams.size === 0)
    // 100 events of 1 KB: fifty times what the stream may hold unread at once.
    const text = 'x'.repeat(1000)
    for (let n = 1; n <= 100; n++) app.app.events.publish('room', { n, text })
    const again = await openStream(t, `${app.url}/api/events?topics=app:room`, { 'last-event-id': first.frames[0]?.id as string })
    assert.equal(again.status, 200)
    await again.until('the hundred missed', frames => frames.length === 100)
    app.app.events.publish('room', { n: 101 })
    await again.until('the live one', frames => frames.length === 101)
    assert.deepEqual(again.frames.map(frame => frame.data.n), Array.from({ length: 101 }, (_, i) => i + 1))
    const { counts } = app.app.eventStreams
    assert.deepEqual([counts.droppedSlow, counts.replayed, counts.resyncs], [0, 100, 0])
  })

  it('drops a stream whose client reads nothing for EVENTS_MAX_STALL_MS, and counts it once', { timeout: 120_000 }, async (t) => {
    const clock = manualClock()
    const app = await service(t, { EVENTS_MAX_STALL_MS: '30000' }, { eventTimers: clock.timers })
    // Opened, never read: what is sent fills the socket's buffers in the kernel, then the stream's.
    const stalled = await openStream(t, `${app.url}/api/events?topics=app:big`, {}, false)
    assert.equal(stalled.status, 200)
    const big = { text: 'x'.repeat(16_384) }
    // One timer pending: the keep-alives'. The stream adds its own once the client stops taking what it is sent.
    for (let sent = 0; clock.pendingTimers < 2; sent++) {
      assert.ok(sent < 4096, 'the stream to wait for its client after 64 MB sent')
      app.app.events.publish('big', big)
      await new Promise(resolve => setImmediate(resolve))
    }
    const streams = app.app.eventStreams
    assert.deepEqual([streams.size, streams.counts.droppedSlow], [1, 0], 'within EVENTS_MAX_BUFFER_BYTES')
    clock.advance(29_999)
    assert.deepEqual([streams.size, streams.counts.droppedSlow], [1, 0], 'not yet')
    clock.advance(1)
    assert.equal(streams.counts.droppedSlow, 1)
    await waitFor('the dropped stream to be forgotten', () => streams.size === 0)
    assert.equal(valueIn(await app.app.metrics.scrape(), 'events_dropped_slow_total'), 1)
  })

  it('counts a stream dropped for leaving too much unread once, however many events come after', async (t) => {
    const app = await service(t, { EVENTS_MAX_BUFFER_BYTES: '2048' })
    const stalled = await openStream(t, `${app.url}/api/events?topics=app:big`, {}, false)
    const big = { text: 'x'.repeat(16_384) }
    const streams = app.app.eventStreams
    await waitFor('the slow client to be dropped', () => {
      app.app.events.publish('big', big)
      if (streams.counts.droppedSlow === 0) return false
      // In the same turn, before the stream's close is heard: more events, and a keep-alive's worth.
      for (let i = 0; i < 5; i++) app.app.events.publish('big', big)
      return true
    })
    await waitFor('the dropped stream to be forgotten', () => streams.size === 0)
    assert.equal(streams.counts.droppedSlow, 1)
    assert.equal(valueIn(await app.app.metrics.scrape(), 'events_dropped_slow_total'), 1)
    stalled.close()
  })
})
