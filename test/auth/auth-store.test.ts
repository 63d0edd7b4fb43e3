import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import { RedisLink } from '../../packages/pocketnet-client/index.js'
import { AuthStoreUnavailableError, MemoryAuthStore, type AuthKind, type AuthKindLimits, type AuthStore } from '../../src/auth/auth-store.js'
import { RedisAuthStore } from '../../src/auth/redis-auth-store.js'
import { startRedis, type TestRedis } from '../helpers/start-redis.js'
import { waitFor } from '../helpers/wait-for.js'

const LIMITS: Record<AuthKind, AuthKindLimits> = {
  challenge: { max: 3, whenFull: 'evict' },
  session: { max: 3, whenFull: 'evict' },
  signature: { max: 2, whenFull: 'refuse' },
  ticket: { max: 3, whenFull: 'evict' },
}

type Clock = { now: () => number, at: number }
const clockAt = (at: number): Clock => {
  const clock = { at, now: () => clock.at }
  return clock
}

async function redisLink (t: TestContext, redis: TestRedis): Promise<RedisLink> {
  const link = new RedisLink({ url: redis.url, keyPrefix: `test${Math.random().toString(36).slice(2)}:`, timeoutMs: 200 })
  t.after(() => link.close())
  await waitFor('the Redis link to connect', () => link.available)
  return link
}

/** The same contract, in process and in Redis. */
const STORES: Array<[string, (t: TestContext, clock: Clock) => Promise<AuthStore>]> = [
  ['in process', async (_t, clock) => new MemoryAuthStore(LIMITS, clock.now)],
  ['in Redis', async (t, clock) => new RedisAuthStore(await redisLink(t, await startRedis(t)), LIMITS, clock.now)],
]

for (const [where, makeStore] of STORES) {
  describe(`the sign-in store, ${where}`, () => {
    it('keeps an id until its expiry, exclusive', async (t) => {
      const clock = clockAt(10_000)
      const store = await makeStore(t, clock)
      assert.equal(await store.add('session', 'a', 'alice', 11_000), true)
      assert.equal(await store.get('session', 'a'), 'alice')
      assert.equal(await store.get('challenge', 'a'), undefined, 'kinds are apart')
      clock.at = 10_999
      assert.equal(await store.get('session', 'a'), 'alice')
      clock.at = 11_000
      assert.equal(await store.get('session', 'a'), undefined)
      assert.equal(await store.take('session', 'a'), undefined)
    })

    it('adds an id once while it lives, and again after its expiry', async (t) => {
      const clock = clockAt(10_000)
      const store = await makeStore(t, clock)
      assert.equal(await store.add('signature', 'sig', '', 12_000), true)
      assert.equal(await store.add('signature', 'sig', '', 20_000), false)
      clock.at = 12_000
      assert.equal(await store.add('signature', 'sig', '', 20_000), true)
    })

    it('gives an id to one taker only, even when many ask at once', async (t) => {
      const clock = clockAt(10_000)
      const store = await makeStore(t, clock)
      await store.add('challenge', 'c', 'v', 20_000)
      const taken = await Promise.all(Array.from({ length: 10 }, () => store.take('challenge', 'c')))
      assert.deepEqual(taken.filter(value => value !== undefined), ['v'])
      assert.equal(await store.get('challenge', 'c'), undefined)
    })

    it('when full, forgets the oldest of an evicting kind and refuses new ids of a refusing one', async (t) => {
      const clock = clockAt(10_000)
      const store = await makeStore(t, clock)
      for (const id of ['1', '2', '3', '4']) await store.add('challenge', id, id, 20_000 + Number(id))
      assert.deepEqual(await Promise.all(['1', '2', '3', '4'].map(id => store.get('challenge', id))), [undefined, '2', '3', '4'])
      await store.add('signature', 'x', '', 15_000)
      await store.add('signature', 'y', '', 15_000)
      await assert.rejects(store.add('signature', 'z', '', 15_000), (err: unknown) => {
        assert.ok(err instanceof AuthStoreUnavailableError)
        assert.equal(err.statusCode, 503)
        return true
      })
      // Expired ids make room again.
      clock.at = 15_000
      assert.equal(await store.add('signature', 'z', '', 16_000), true)
    })
  })
}

describe('the sign-in store in Redis, when Redis is away', () => {
  it('fails closed: every operation throws a 503, none answers "absent" or "added"', async (t) => {
    const redis = await startRedis(t)
    const store = new RedisAuthStore(await redisLink(t, redis), LIMITS, () => 10_000)
    await store.add('session', 'a', 'alice', 20_000)
    await redis.kill()
    for (const operation of [() => store.get('session', 'a'), () => store.take('challenge', 'c'), () => store.add('signature', 's', '', 20_000)]) {
      await assert.rejects(operation(), AuthStoreUnavailableError)
    }
  })
})
