/** The rate limit's counts in a real redis-server, shared by two stores as by two instances. */
import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import { RedisLink } from '../../packages/pocketnet-client/index.js'
import { SharedWindowStore } from '../../src/rate-limit/shared-store.js'
import type { WindowCount } from '../../src/rate-limit/store.js'
import { startRedis, type TestRedis } from '../helpers/start-redis.js'
import { waitFor } from '../helpers/wait-for.js'

const WINDOW_MS = 60_000

async function store (t: TestContext, redis: TestRedis): Promise<{ store: SharedWindowStore, roundTrips: () => number }> {
  let roundTrips = 0
  const link = new RedisLink({ url: redis.url, keyPrefix: 'test:', onOperation: ({ outcome }) => { if (outcome !== 'skipped') roundTrips++ } })
  t.after(() => link.close())
  await waitFor('the link to connect', () => link.available)
  return { store: new SharedWindowStore(link), roundTrips: () => roundTrips }
}

describe('SharedWindowStore', () => {
  it('never lets a client past max across two instances, and asks Redis far less than once per request', async (t) => {
    const redis = await startRedis(t)
    const [a, b] = [await store(t, redis), await store(t, redis)]
    const max = 1000
    let allowed = 0
    // Bursts of 25 on one instance, then the other, well past the limit.
    for (let burst = 0; burst < 60; burst++) {
      const { store: on } = burst % 2 === 0 ? a : b
      for (let i = 0; i < 25; i++) if ((await on.take('client', WINDOW_MS, max)).current <= max) allowed++
    }
    assert.ok(allowed <= max, `${allowed} allowed`)
    // Batches are at most 1 % of max: each instance holds at most 10 it did not use.
    assert.ok(allowed >= max - 2 * 10, `${allowed} allowed`)
    assert.ok(a.roundTrips() + b.roundTrips() < 1500 / 3, `${a.roundTrips() + b.roundTrips()} round trips for 1500 requests`)
  })

  it('counts a client at a normal pace exactly: batches of one, alternating', async (t) => {
    const redis = await startRedis(t)
    const [a, b] = [await store(t, redis), await store(t, redis)]
    const counts: number[] = []
    for (let i = 0; i < 8; i++) counts.push((await (i % 2 === 0 ? a : b).store.take('client', WINDOW_MS, 6)).current)
    assert.deepEqual(counts, [1, 2, 3, 4, 5, 6, 7, 8])
    assert.deepEqual((await a.store.take('other', WINDOW_MS, 6)).current, 1, 'clients are counted apart')
  })

  it('has the requests that arrive while a reservation is in flight wait for it, not start their own', async (t) => {
    const redis = await startRedis(t)
    const { store: on, roundTrips } = await store(t, redis)
    const counts = await Promise.all(Array.from({ length: 40 }, () => on.take('client', WINDOW_MS, 10_000)))
    assert.deepEqual(counts.map(count => count.current).sort((x, y) => x - y), Array.from({ length: 40 }, (_, i) => i + 1))
    assert.ok(roundTrips() < 40, `${roundTrips()} round trips`)
    assert.ok(counts.every(count => count.ttl > 0 && count.ttl <= WINDOW_MS))
  })

  it('counts in-process while Redis is away', async (t) => {
    const redis = await startRedis(t)
    const { store: on } = await store(t, redis)
    await on.take('alone', WINDOW_MS, 10)
    await redis.kill()
    // The first may still try Redis and fail; either way each is counted here, in a window of its own.
    const counts: WindowCount[] = []
    for (let i = 0; i < 3; i++) counts.push(await on.take('alone', WINDOW_MS, 10))
    assert.deepEqual(counts.map(count => count.current), [1, 2, 3])
  })
})
