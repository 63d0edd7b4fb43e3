/**
 * The event stream across instances (issue #27): two services on one real redis-server, clients
 * reading Server-Sent Events with fetch. Published on one instance, delivered on every one;
 * replayed by whichever a client reconnects to; Redis killed, each goes on with its own events;
 * Redis back, sharing resumes and nothing missed goes unsaid. Waits wait for frames; they bound
 * nothing.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { startApp, type TestApp } from '../helpers/build-app.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { startRedis, type TestRedis } from '../helpers/start-redis.js'
import { waitFor } from '../helpers/wait-for.js'
import { openStream, type SseFrame } from './sse-client.js'

type WithAfter = { after (fn: () => unknown): void }

async function instance (t: WithAfter, redis: TestRedis, env: Record<string, string> = {}, nodes: string[] = ['http://127.0.0.1:9']): Promise<TestApp> {
  // A machine busy with other test lanes can hold a Redis answer past the default 100 ms, and an
  // event Redis did not take in time is delivered unshared: these tests are about sharing.
  const service = await startApp(t, { nodes, env: { REDIS_URL: redis.url, REDIS_TIMEOUT_MS: '5000', ...env } })
  await waitFor('the instance to reach Redis', () => service.app.redis?.available === true && service.app.redis.listening)
  return service
}

const twoInstances = (t: WithAfter, redis: TestRedis, env: Record<string, string> = {}, nodes?: string[]): Promise<[TestApp, TestApp]> =>
  Promise.all([instance(t, redis, env, nodes), instance(t, redis, env, nodes)])

const values = (frames: SseFrame[]): unknown[] => frames.map(frame => frame.event === 'resync' ? 'resync' : frame.data.n)
const STREAM_ID = /^\d+-\d+$/

describe('the event stream across instances (REDIS_URL)', () => {
  it('delivers what one instance publishes to the streams of every instance, under one id, in one order', async (t) => {
    const redis = await startRedis(t)
    const [a, b] = await twoInstances(t, redis)
    const onA = await openStream(t, `${a.url}/api/events?topics=app:room`)
    const onB = await openStream(t, `${b.url}/api/events?topics=app:room`)
    // Alternately on each instance: both streams see the same sequence.
    for (let n = 1; n <= 6; n++) await (n % 2 === 1 ? a : b).app.events.publish('room', { n })
    await onA.until('six events', frames => frames.length === 6)
    await onB.until('six events', frames => frames.length === 6)
    assert.deepEqual(values(onA.frames), [1, 2, 3, 4, 5, 6])
    assert.deepEqual(onB.frames, onA.frames, 'the same events, ids and order on both')
    assert.ok(onA.frames.every(frame => STREAM_ID.test(frame.id ?? '')))
  })

  it('replays on another instance exactly what a client missed after Last-Event-ID, and says resync past the window', async (t) => {
    const redis = await startRedis(t)
    const a = await instance(t, redis, { EVENTS_RETAIN: '5' })
    const first = await openStream(t, `${a.url}/api/events?topics=app:room`)
    await a.app.events.publish('room', { n: 1 })
    await first.until('the first event', frames => frames.length === 1)
    first.close()
    for (let n = 2; n <= 4; n++) await a.app.events.publish('room', { n })
    await a.app.events.publish('elsewhere', { n: 0 })
    // B starts now: it never saw these events, and replays them from Redis.
    const b = await instance(t, redis, { EVENTS_RETAIN: '5' })
    assert.equal(b.app.events.since(first.frames[0]?.id as string, new Set(['app:room'])), 'gap', 'nothing of it kept on B')
    const again = await openStream(t, `${b.url}/api/events?topics=app:room`, { 'last-event-id': first.frames[0]?.id as string })
    await again.until('the three missed', frames => frames.length === 3)
    await a.app.events.publish('room', { n: 5 })
    await again.until('the live one', frames => frames.length === 4)
    assert.deepEqual(values(again.frames), [2, 3, 4, 5], 'in order, each once, only its topics')

    // Five kept: the first event's successors are no longer all there.
    for (let n = 6; n <= 10; n++) await b.app.events.publish('room', { n })
    const late = await openStream(t, `${a.url}/api/events?topics=app:room&since=${encodeURIComponent(first.frames[0]?.id as string)}`)
    await late.until('the resync', frames => frames.length === 1)
    assert.equal(late.frames[0]?.event, 'resync')
    const poll = await b.get(`/api/events/poll?topics=app:room&since=${encodeURIComponent(again.frames[3]?.id as string)}`)
    assert.deepEqual(poll.body.data.events.map((event: { data: { n: number } }) => event.data.n), [6, 7, 8, 9, 10], 'a long-poll replays from Redis too')
    assert.equal(poll.body.data.lastEventId, poll.body.data.events[4].id)
  })

  it('goes on streaming each instance\'s own events without Redis, and shares again once it is back, saying resync where events were lost', async (t) => {
    const redis = await startRedis(t)
    const [a, b] = await twoInstances(t, redis)
    const onA = await openStream(t, `${a.url}/api/events?topics=app:room`)
    const onB = await openStream(t, `${b.url}/api/events?topics=app:room`)
    await a.app.events.publish('room', { n: 1 })
    await onB.until('the shared event', frames => frames.length === 1)

    await redis.kill()
    await a.app.events.publish('room', { n: 2 })
    await b.app.events.publish('room', { n: 3 })
    await onA.until('its own event', frames => frames.length === 2)
    await onB.until('its own event', frames => frames.length === 2)
    assert.deepEqual(values(onA.frames), [1, 2])
    assert.deepEqual(values(onB.frames), [1, 3])

    await redis.restart()
    await waitFor('the instances to reconnect', () => [a, b].every(({ app }) => app.redis?.available === true && app.redis.listening))
    await a.app.events.publish('room', { n: 4 })
    await onA.until('the shared event', frames => frames.some(frame => frame.data.n === 4))
    await onB.until('the shared event', frames => frames.some(frame => frame.data.n === 4))
    // Redis came back empty: neither instance can tell what the other published meanwhile.
    assert.deepEqual(values(onA.frames), [1, 2, 'resync', 4])
    assert.deepEqual(values(onB.frames), [1, 3, 'resync', 4])
    await b.app.events.publish('room', { n: 5 })
    await onA.until('the next one', frames => frames.length === 5)
    assert.deepEqual(values(onA.frames).slice(3), [4, 5], 'and then no more resyncs')
  })

  it('keeps once a block that the ingest of both instances reports (the ingest lease off)', async (t) => {
    const [redis, node] = await Promise.all([startRedis(t), startEmulator(t)])
    const [a, b] = await twoInstances(t, redis, { EVENTS_INGEST: 'true', EVENTS_INGEST_LEASE_MS: '0' }, [node.url])
    const onA = await openStream(t, `${a.url}/api/events?topics=blocks,app:mark`)
    const onB = await openStream(t, `${b.url}/api/events?topics=blocks,app:mark`)
    const sharedOutcomes = async (outcomes: RegExp): Promise<number> => {
      let total = 0
      for (const { app } of [a, b]) {
        const scraped = await app.metrics.scrape()
        for (const match of scraped.matchAll(/^events_shared_total\{outcome="(\w+)"\} (\d+)$/gm)) {
          if (outcomes.test(match[1] as string)) total += Number(match[2])
        }
      }
      return total
    }
    const reports = async (what: string, atLeast: number, outcomes = /^(?:shared|duplicate)$/): Promise<number> => {
      const deadline = performance.now() + 30_000
      for (;;) {
        const total = await sharedOutcomes(outcomes)
        if (total >= atLeast) return total
        assert.ok(performance.now() < deadline, `Still waiting for ${what}`)
        await new Promise(resolve => setTimeout(resolve, 5))
      }
    }
    // Until both instances ingest the chain: each reports the tip once, the second as a duplicate,
    // or either alone (unshared) when its Redis link was not up yet at that moment of its start.
    await reports('both ingests to report the tip', 2, /^(?:shared|duplicate|unshared)$/)
    const before = await sharedOutcomes(/^(?:shared|duplicate)$/)
    node.mineBlock()
    await reports('both ingests to report the block', before + 2)
    // Published after both reports: whatever the block brought comes before it.
    await a.app.events.publish('mark', {})
    for (const stream of [onA, onB]) await stream.until('the mark', frames => frames.some(frame => frame.event === 'app'))
    const blocks = (frames: SseFrame[]): SseFrame[] => frames.filter(frame => frame.event === 'block' && frame.data.height === node.height)
    assert.equal(blocks(onA.frames).length, 1, JSON.stringify(onA.frames))
    assert.deepEqual(blocks(onB.frames), blocks(onA.frames))
  })
})
