/**
 * The shared log on a real redis-server, without HTTP: two hubs as two instances would have
 * them, and a raw connection that adds entries to the Redis Stream without their channel
 * message, as a message lost while an instance was disconnected would leave them.
 */
import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import { Redis } from 'ioredis'
import { RedisLink } from '../../packages/pocketnet-client/index.js'
import type { StreamEvent } from '../../src/events/event-log.js'
import { EventHub } from '../../src/events/hub.js'
import { SharedEventLog } from '../../src/events/shared-log.js'
import { startRedis } from '../helpers/start-redis.js'
import { waitFor } from '../helpers/wait-for.js'

const RETAIN = { maxEvents: 100, maxAgeMs: 60_000 }

async function setUp (t: TestContext) {
  const redis = await startRedis(t)
  const prefix = 'test:'
  const instance = async () => {
    const link = new RedisLink({ url: redis.url, keyPrefix: prefix, timeoutMs: 500 })
    t.after(() => link.close())
    const hub = new EventHub({ ...RETAIN, now: Date.now })
    const log = new SharedEventLog(link, RETAIN, hub.deliverShared, hub.lostShared)
    hub.share(log)
    t.after(() => log.close())
    await waitFor('the link to Redis', () => link.available && link.listening)
    const heard: StreamEvent[] = []
    hub.subscribe(new Set(['app:a']), event => heard.push(event))
    return { hub, log, heard }
  }
  const raw = new Redis(redis.url)
  t.after(() => raw.quit())
  const stream = `${prefix}events:log`
  /** Appends an entry as the script does, without publishing it; `prev` defaults to the stream's last. */
  const addQuietly = async (n: number, prev?: string): Promise<string> => {
    const [last] = await raw.xrevrange(stream, '+', '-', 'COUNT', 1)
    return await raw.xadd(stream, '*', 'prev', prev ?? last?.[0] ?? '0-0', 'topic', 'app:a', 'type', 'app', 'data', JSON.stringify({ n })) as string
  }
  return { instance, addQuietly }
}

const numbers = (events: StreamEvent[]): unknown[] => events.map(event => event.type === 'resync' ? 'resync' : event.data.n)

describe('the shared event log', () => {
  it('reads from the stream an entry whose message it missed, before the next one, and finds the newest now and then', async (t) => {
    const { instance, addQuietly } = await setUp(t)
    const a = await instance()
    const b = await instance()
    await a.hub.publish('a', { n: 1 })
    await waitFor('the first event on B', () => b.heard.length === 1)
    await addQuietly(2)
    await a.hub.publish('a', { n: 3 })
    await waitFor('the third event on B', () => b.heard.length === 3)
    assert.deepEqual(numbers(b.heard), [1, 2, 3], 'the missed one first, and no resync')
    assert.deepEqual(numbers(a.heard), [1, 2, 3])
    await addQuietly(4)
    await b.log.catchUp()
    assert.deepEqual(numbers(b.heard), [1, 2, 3, 4])
    assert.equal(b.log.counts.holes, 0)
  })

  it('tells every stream to resync when entries between two it delivered are gone', async (t) => {
    const { instance, addQuietly } = await setUp(t)
    const a = await instance()
    const b = await instance()
    await a.hub.publish('a', { n: 1 })
    await waitFor('the first event on B', () => b.heard.length === 1)
    // Names an entry the stream no longer has as the one before it.
    await addQuietly(2, '1-1')
    await a.hub.publish('a', { n: 3 })
    await waitFor('the third event on B', () => b.heard.length === 4)
    assert.deepEqual(numbers(b.heard), [1, 'resync', 2, 3])
    assert.equal(b.log.counts.holes, 1)
    assert.equal(b.hub.since(b.heard[0]?.id as string, new Set(['app:a'])), 'gap', 'what came before the hole is replayed no more')
  })

  it('keeps once an event two instances append under the same key', async (t) => {
    const { instance } = await setUp(t)
    const a = await instance()
    const b = await instance()
    assert.deepEqual(await a.log.append('app:a', 'app', { n: 1 }, 'block:x'), { outcome: 'shared', id: a.heard[0]?.id })
    assert.deepEqual(await b.log.append('app:a', 'app', { n: 1 }, 'block:x'), { outcome: 'duplicate' })
    await a.hub.publish('a', { n: 2 })
    await waitFor('the next event on B', () => b.heard.length === 2)
    assert.deepEqual(numbers(b.heard), [1, 2])
  })

  it('replays from the stream what this instance has not delivered yet, and skips it when it comes', async (t) => {
    const { instance, addQuietly } = await setUp(t)
    const a = await instance()
    const b = await instance()
    await a.hub.publish('a', { n: 1 })
    await waitFor('the first event on B', () => b.heard.length === 1)
    const five = await addQuietly(5)
    await addQuietly(6)
    // B has not delivered 5 or 6: a client that saw 5 (on another instance) reconnects to B.
    const follower: StreamEvent[] = []
    const following = await b.hub.follow(new Set(['app:a']), five, event => follower.push(event))
    assert.equal(following.replayed, 1)
    await b.log.catchUp()
    assert.deepEqual(numbers(b.heard), [1, 5, 6], 'B delivered them since')
    await a.hub.publish('a', { n: 7 })
    await waitFor('the live event', () => follower.length === 2)
    assert.deepEqual(numbers(follower), [6, 7], 'each once, in order')
  })
})
