/**
 * The cluster's interests alone (src/events/cluster-interests.ts), on a real redis-server, with
 * one link per would-be instance and timers the test moves by hand.
 */
import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import { Redis } from 'ioredis'
import { RedisLink } from 'pocketnet-client'
import { ClusterInterests, MAX_PER_INSTANCE } from '../../src/events/cluster-interests.js'
import { manualClock } from '../helpers/manual-clock.js'
import { startRedis, type TestRedis } from '../helpers/start-redis.js'
import { waitFor } from '../helpers/wait-for.js'

const PREFIX = 'test:'

async function link (t: TestContext, redis: TestRedis): Promise<RedisLink> {
  const created = new RedisLink({ url: redis.url, keyPrefix: PREFIX })
  t.after(() => created.close())
  await waitFor('the link to connect', () => created.available && created.listening)
  return created
}

/** A plain connection, to look at Redis as an operator would. */
function inspector (t: TestContext, redis: TestRedis): Redis {
  const connection = new Redis(redis.url)
  t.after(() => connection.quit())
  return connection
}

/** As waitFor, for a condition that asks Redis. */
async function until (what: string, condition: () => Promise<boolean>): Promise<void> {
  const deadline = performance.now() + 30_000
  while (!await condition()) {
    assert.ok(performance.now() < deadline, `Still waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 5))
  }
}

describe('the interests of every instance', () => {
  function interests (redisLink: RedisLink, instanceId: string, local: { addresses: string[], contents: string[] }) {
    const clock = manualClock()
    const truncated: string[] = []
    const created = new ClusterInterests(redisLink, { instanceId, ttlMs: 600_000, timers: clock.timers, local: () => local, onTruncated: what => truncated.push(what) })
    return { interests: created, clock, local, truncated }
  }
  const sorted = (values: Iterable<string>): string[] => [...values].sort()

  it('gives the reader the union of the others\' interests, changes as they come, and forgets an instance that leaves', async (t) => {
    const redis = await startRedis(t)
    const reader = interests(await link(t, redis), 'reader', { addresses: ['PReader'], contents: [] })
    const first = interests(await link(t, redis), 'first', { addresses: ['PA', 'PB'], contents: ['c1'] })
    const second = interests(await link(t, redis), 'second', { addresses: ['PB', 'PC'], contents: [] })
    for (const each of [reader, first, second]) each.interests.start()
    reader.interests.setReading(true)
    await waitFor('the union', () => sorted(reader.interests.others().addresses).join() === 'PA,PB,PC')
    assert.deepEqual(sorted(reader.interests.others().contents), ['c1'])
    assert.ok(!sorted(reader.interests.others().addresses).includes('PReader'), 'its own are not among the others\'')
    assert.equal(reader.interests.size, 4)

    // So soon after the start's write, the change is written once the gap between two writes has
    // passed, and read when announced, once the gap between two reads of that instance's set has
    // (whether the announcement comes before the reader's gap ends or after).
    second.local.addresses = ['PC', 'PD']
    second.interests.changed()
    assert.equal(sorted(reader.interests.others().addresses).join(), 'PA,PB,PC')
    second.clock.advance(1000)
    reader.clock.advance(1000)
    await waitFor('the change', () => sorted(reader.interests.others().addresses).join() === 'PA,PB,PC,PD')

    await first.interests.close()
    reader.clock.advance(200_000)
    await waitFor('the instance that left to be forgotten', () => sorted(reader.interests.others().addresses).join() === 'PC,PD')
    assert.deepEqual(sorted(reader.interests.others().contents), [])

    reader.interests.setReading(false)
    assert.equal(reader.interests.size, 0, 'nothing kept while not reading')
  })

  it('writes a set found out of step again whole, and caps what one instance writes', async (t) => {
    const redis = await startRedis(t)
    const look = inspector(t, redis)
    const writer = interests(await link(t, redis), 'writer', { addresses: ['PA'], contents: [] })
    writer.interests.start()
    const key = `${PREFIX}events:interests:set:writer`
    await until('the first write', async () => (await look.smembers(key)).join() === 'a:PA')
    // As if Redis had restarted empty: the next refresh finds the count wrong and writes it whole.
    await look.del(key)
    writer.clock.advance(200_000)
    await until('the set written again', async () => (await look.smembers(key)).join() === 'a:PA')

    writer.local.addresses = Array.from({ length: MAX_PER_INSTANCE + 5 }, (_, i) => `P${i}`)
    writer.interests.changed()
    await until('the capped write', async () => {
      writer.clock.advance(1000)
      return await look.scard(key) === MAX_PER_INSTANCE
    })
    assert.equal(writer.truncated.length, 1, 'told once')
    assert.match(writer.truncated[0] as string, /more than 20000/)
  })
})
