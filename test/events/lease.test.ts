/**
 * The ingest lease and the cluster's interests alone, on a real redis-server, with one link per
 * would-be instance and timers the test moves by hand. A holder that "dies" here simply stops
 * renewing (its timers are never moved again) and does not release: its lease lapses on Redis's
 * own clock, which the test waits for without bounding it.
 */
import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import { Redis } from 'ioredis'
import { RedisLink } from '../../packages/pocketnet-client/index.js'
import { ClusterInterests, MAX_PER_INSTANCE } from '../../src/events/cluster-interests.js'
import { IngestLease, type IngestRole } from '../../src/events/ingest-lease.js'
import { manualClock, type ManualClock } from '../helpers/manual-clock.js'
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

interface Lease { lease: IngestLease, link: RedisLink, clock: ManualClock, roles: IngestRole[] }

function lease (redisLink: RedisLink, ttlMs: number, holderId: string): Lease {
  const clock = manualClock()
  const roles: IngestRole[] = []
  return { lease: new IngestLease(redisLink, { ttlMs, timers: clock.timers, tipTtlMs: 60_000, holderId, onRole: role => roles.push(role) }), link: redisLink, clock, roles }
}

/** Waits for `condition`, moving `clock` one attempt (a third of `ttlMs`) on between looks. */
const drive = (what: string, clock: ManualClock, ttlMs: number, condition: () => boolean): Promise<void> =>
  waitFor(what, () => {
    if (condition()) return true
    clock.advance(ttlMs / 3)
    return false
  })

describe('the ingest lease', () => {
  it('goes to one instance; when its holder dies without a word, another takes it once it lapses, and the old holder learns it lost it', async (t) => {
    const redis = await startRedis(t)
    const look = inspector(t, redis)
    // Short enough for Redis to expire it while the test waits; nothing here depends on how short.
    const ttlMs = 1000
    const a = lease(await link(t, redis), ttlMs, 'instance-a')
    const b = lease(await link(t, redis), ttlMs, 'instance-b')
    await a.lease.start()
    await b.lease.start()
    assert.deepEqual([a.lease.role, b.lease.role], ['holder', 'follower'])
    assert.equal(await look.get(`${PREFIX}events:ingest`), 'instance-a')
    assert.ok(a.lease.ingesting && !b.lease.ingesting)

    // A stops renewing (its clock never moves again): B takes the lease once Redis expired it.
    await drive('B to take the lapsed lease', b.clock, ttlMs, () => b.lease.role === 'holder')
    assert.equal(await look.get(`${PREFIX}events:ingest`), 'instance-b')
    assert.deepEqual(b.roles, ['follower', 'holder'])
    assert.equal(b.lease.changes, 1)

    // A comes back to life: its renewal finds the lease is B's, and it follows.
    await drive('A to learn it lost the lease', a.clock, ttlMs, () => a.lease.role === 'follower')
    assert.deepEqual(a.roles, ['holder', 'follower'])
    assert.equal(a.lease.changes, 2, 'took it, then lost it')
    // Closing A must not release B's lease.
    await a.lease.close()
    assert.equal(await look.get(`${PREFIX}events:ingest`), 'instance-b')
    await b.lease.close()
    assert.equal(await look.get(`${PREFIX}events:ingest`), null, 'B released its own on close')
  })

  it('follows the chain alone after a whole lease without Redis, not before, and contests the lease again once Redis is back', async (t) => {
    const redis = await startRedis(t)
    const ttlMs = 600_000
    const a = lease(await link(t, redis), ttlMs, 'instance-a')
    const b = lease(await link(t, redis), ttlMs, 'instance-b')
    await a.lease.start()
    await b.lease.start()
    await redis.kill()
    // Two thirds of a lease without an answer: still following.
    for (let attempt = 1; attempt <= 2; attempt++) {
      b.clock.advance(ttlMs / 3)
      await waitFor('an unanswered attempt', () => b.clock.pendingTimers === 1)
      assert.equal(b.lease.role, 'follower')
    }
    b.clock.advance(ttlMs / 3)
    await waitFor('the third unanswered attempt', () => b.clock.pendingTimers === 1)
    assert.equal(b.lease.role, 'alone', 'a whole lease without an answer')
    await drive('A to follow the chain alone', a.clock, ttlMs, () => a.lease.role === 'alone')
    assert.ok(a.lease.ingesting && b.lease.ingesting)
    assert.deepEqual(a.roles, ['holder', 'alone'])

    await redis.restart()
    await waitFor('the links to reconnect', () => a.link.available && b.link.available)
    await drive('B to contest the lease', b.clock, ttlMs, () => b.lease.role !== 'alone')
    await drive('A to contest the lease', a.clock, ttlMs, () => a.lease.role !== 'alone')
    assert.deepEqual([a.lease.role, b.lease.role].sort(), ['follower', 'holder'])
  })

  it('notes the last block for the next holder', async (t) => {
    const redis = await startRedis(t)
    const a = lease(await link(t, redis), 600_000, 'instance-a')
    assert.equal(await a.lease.readTip(), undefined)
    a.lease.noteTip({ height: 42, blockHash: 'ab'.repeat(32) })
    await until('the tip to be noted', async () => await a.lease.readTip() !== undefined)
    assert.deepEqual(await a.lease.readTip(), { height: 42, blockHash: 'ab'.repeat(32) })
  })
})

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
