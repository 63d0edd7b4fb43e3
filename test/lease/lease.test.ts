/**
 * The lease (src/lease/lease.ts) on each of its stores: a real redis-server, the embedded
 * database (PGlite) and a PostgreSQL server. Each contender is an instance with its own store
 * connection and its own timers, moved by hand; one that dies is one whose timers are no longer
 * moved. The store's time is moved with them: the database compares expiry with the clock the
 * test gives the store, and Redis, which keeps time itself, has its key's time to live shortened
 * by as much. The store is made unreachable for real where it can be (Redis killed and restarted,
 * the server refusing connections to the database) and, for the embedded database, which has no
 * connection to lose, by statements that fail.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it, type TestContext } from 'node:test'
import { Redis } from 'ioredis'
import pg from 'pg'
import { RedisLink } from 'pocketnet-client'
import type { Database, Sql } from '../../src/db/database.js'
import { openDatabase } from '../../src/db/open-database.js'
import { Lease, type LeaseState } from '../../src/lease/lease.js'
import type { LeaseStore } from '../../src/lease/lease-store.js'
import { PostgresLeaseStore } from '../../src/lease/postgres-lease-store.js'
import { RedisLeaseStore } from '../../src/lease/redis-lease-store.js'
import { manualClock, type ManualClock } from '../helpers/manual-clock.js'
import { startPostgres } from '../helpers/start-postgres.js'
import { startRedis } from '../helpers/start-redis.js'
import { waitFor } from '../helpers/wait-for.js'
import { backends, sharedDatabase, type Backend } from '../payments/databases.js'

const postgres = await startPostgres({ after })
/** Long enough that Redis's own clock, which runs on in real time, takes nothing off it that counts. */
const TTL_MS = 60_000
const THIRD = TTL_MS / 3
const EPOCH_MS = 1_800_000_000_000

/** A store as the tests see it, with a way to look at it, to move its time and to take it away. */
interface StoreUnderTest {
  /** The lease's name: one per test. */
  name: string
  /** A store as one instance has it: a connection of its own. */
  connect (): Promise<LeaseStore>
  /** Who holds the lease, as the store says. */
  holderOf (): Promise<string | undefined>
  /** Milliseconds until the lease lapses, by the store's time. */
  remainingMs (): Promise<number | undefined>
  /** Lets `ms` of the store's time pass. */
  pass (ms: number): Promise<void>
  /** The store stops answering every instance, until back(). */
  cutOff (): Promise<void>
  back (): Promise<void>
}

type Hooks = { before (fn: () => unknown): void, after (fn: () => unknown): void }

/** A kind of store: what its describe block opens once, and a store under test for each test. */
interface StoreKind {
  title: string
  prepare (hooks: Hooks): (t: TestContext) => Promise<StoreUnderTest>
}

let leases = 0
const leaseName = (): string => `test-lease-${++leases}`

/** A redis-server per test: killing it takes it from that test alone. */
const REDIS: StoreKind = {
  title: 'Redis',
  prepare: () => async (t) => {
    const redis = await startRedis(t)
    const look = new Redis(redis.url)
    t.after(() => look.disconnect())
    const name = leaseName()
    const key = `test:${name}`
    const links: RedisLink[] = []
    let down = false
    return {
      name,
      async connect () {
        // A budget no busy machine reaches: an answer that came late would count as none.
        const link = new RedisLink({ url: redis.url, keyPrefix: 'test:', timeoutMs: 5000 })
        t.after(() => link.close())
        await waitFor('the link to connect', () => link.available)
        links.push(link)
        return new RedisLeaseStore(link)
      },
      holderOf: async () => await look.get(key) ?? undefined,
      async remainingMs () {
        const ms = await look.pttl(key)
        return ms < 0 ? undefined : ms
      },
      async pass (ms) {
        // Killed and restarted, Redis comes back empty: there is nothing to age meanwhile.
        if (down) return
        const left = await look.pttl(key)
        if (left < 0) return
        if (left > ms) await look.pexpire(key, left - ms)
        else await look.del(key)
      },
      async cutOff () {
        down = true
        await redis.kill()
      },
      async back () {
        await redis.restart()
        await waitFor('the links to reconnect', () => links.every(link => link.available))
        down = false
      },
    }
  },
}

/** Statements that fail while `isDown()`, as on a connection lost. */
function interruptible (sql: Sql, isDown: () => boolean): Sql {
  const unreachable = (): Promise<never> => Promise.reject(new Error('the database is unreachable (test)'))
  return {
    query: (text, params) => isDown() ? unreachable() : sql.query(text, params),
    exec: text => isDown() ? unreachable() : sql.exec(text),
  }
}

/** A lease of the test's own in the `leases` table of `db`, on a clock the test moves. */
function onDatabase (db: Database, connect: () => Promise<Sql>, outage: Pick<StoreUnderTest, 'cutOff' | 'back'>): StoreUnderTest {
  const name = leaseName()
  let now = EPOCH_MS
  const row = async () => (await db.query<{ holder: string, expires_at_ms: number }>('SELECT holder, expires_at_ms FROM leases WHERE name = $1', [name])).rows[0]
  return {
    name,
    connect: async () => new PostgresLeaseStore(await connect(), () => now),
    holderOf: async () => (await row())?.holder,
    async remainingMs () {
      const found = await row()
      return found === undefined ? undefined : found.expires_at_ms - now
    },
    async pass (ms) { now += ms },
    ...outage,
  }
}

/** One process's embedded database, shared by the instances of a test (it has no connections to lose). */
const EMBEDDED: StoreKind = {
  title: 'the embedded database',
  prepare (hooks) {
    const db = sharedDatabase(backends(postgres).find(backend => backend.name === 'embedded') as Backend, hooks)
    return async () => {
      let down = false
      return onDatabase(db(), async () => interruptible(db(), () => down), {
        async cutOff () { down = true },
        async back () { down = false },
      })
    }
  },
}

/** A database on the PostgreSQL server, each instance with its own pool of connections to it. */
const SERVER: StoreKind = {
  title: 'a PostgreSQL server',
  prepare (hooks) {
    let url = ''
    let inspector: Database | undefined
    hooks.before(async () => {
      url = await postgres.freshDatabase()
      inspector = await openDatabase({ databaseUrl: url })
    })
    hooks.after(() => inspector?.close())
    const asAdmin = async (...statements: Array<[string, unknown[]?]>): Promise<void> => {
      const client = new pg.Client({ connectionString: postgres.url })
      await client.connect()
      try {
        for (const [text, params] of statements) await client.query(text, params)
      } finally {
        await client.end()
      }
    }
    return async (t) => {
      const database = new URL(url).pathname.slice(1)
      const reachable = (): Promise<void> => asAdmin([`ALTER DATABASE ${database} ALLOW_CONNECTIONS true`])
      t.after(reachable)
      return onDatabase(inspector as Database, async () => {
        const db = await openDatabase({ databaseUrl: url })
        t.after(() => db.close())
        return db
      }, {
        // The server is there and refuses the database: new connections refused, those open ended.
        cutOff: () => asAdmin(
          [`ALTER DATABASE ${database} ALLOW_CONNECTIONS false`],
          ['SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database]]
        ),
        back: reachable,
      })
    }
  },
}

interface Contender {
  lease: Lease
  clock: ManualClock
  /** Its states as onChange told them, in order. */
  changes: LeaseState[]
  errors: unknown[]
  /** Its timers are no longer moved, and it is not closed at the end: it died without a word. */
  dead: boolean
}

/** Instances contending for the lease on `store`, and the time they share. */
function contest (t: TestContext, store: StoreUnderTest) {
  const contenders: Contender[] = []
  return {
    async join (holder: string, onChange?: (state: LeaseState) => void): Promise<Contender> {
      const clock = manualClock()
      const changes: LeaseState[] = []
      const errors: unknown[] = []
      const lease = new Lease({
        store: await store.connect(),
        name: store.name,
        holder,
        ttlMs: TTL_MS,
        timers: clock.timers,
        onChange (state) {
          changes.push(state)
          onChange?.(state)
        },
        onError: error => errors.push(error),
      })
      const contender = { lease, clock, changes, errors, dead: false }
      contenders.push(contender)
      t.after(() => contender.dead ? undefined : lease.close())
      return contender
    },
    /**
     * Lets `ms` pass, at most a third of the time to live at once: for the store, then on the
     * timers of every contender alive, each finishing what that woke before the next step.
     */
    async elapse (ms: number): Promise<void> {
      for (let left = ms; left > 0; left -= THIRD) {
        const step = Math.min(left, THIRD)
        await store.pass(step)
        const alive = contenders.filter(one => !one.dead)
        for (const one of alive) one.clock.advance(step)
        await Promise.all(alive.map(one => one.lease.whenIdle()))
      }
    },
  }
}

for (const kind of [REDIS, EMBEDDED, SERVER]) {
  describe(`the lease on ${kind.title}`, () => {
    const storeUnderTest = kind.prepare({ before, after })
    it('goes to one of two instances asking at once, for a whole time to live; the other sees it held elsewhere', async (t) => {
      const store = await storeUnderTest(t)
      const race = contest(t, store)
      const a = await race.join('a')
      const b = await race.join('b')
      await Promise.all([a.lease.start(), b.lease.start()])
      const states = [a.lease.state, b.lease.state]
      assert.deepEqual([...states].sort(), ['held', 'heldElsewhere'])
      assert.equal(await store.holderOf(), a.lease.held ? 'a' : 'b')
      const remaining = await store.remainingMs() ?? 0
      assert.ok(remaining > TTL_MS - 5000 && remaining <= TTL_MS, `the lease runs ${remaining} ms`)
      assert.deepEqual([a.changes, b.changes], [[states[0]], [states[1]]])
      assert.deepEqual([...a.errors, ...b.errors], [])
    })

    it('is renewed by its holder every third of its time to live, so that the other never gets it', async (t) => {
      const store = await storeUnderTest(t)
      const race = contest(t, store)
      const a = await race.join('a')
      const b = await race.join('b')
      await a.lease.start()
      await b.lease.start()
      for (let step = 1; step <= 9; step++) {
        await race.elapse(THIRD)
        assert.deepEqual([a.lease.state, b.lease.state], ['held', 'heldElsewhere'], `after ${step} thirds`)
        const remaining = await store.remainingMs() ?? 0
        assert.ok(remaining > TTL_MS - 5000, `renewed after ${step} thirds: the lease runs ${remaining} ms more`)
      }
      assert.equal(await store.holderOf(), 'a')
      assert.deepEqual([a.changes, b.changes], [['held'], ['heldElsewhere']])
      assert.deepEqual([...a.errors, ...b.errors], [])
    })

    it('passes to the other instance once its holder died: a whole time to live after the last renewal, not before', async (t) => {
      const store = await storeUnderTest(t)
      const race = contest(t, store)
      const a = await race.join('a')
      const b = await race.join('b')
      await a.lease.start()
      await b.lease.start()
      await race.elapse(TTL_MS)
      a.dead = true
      await race.elapse(TTL_MS - THIRD)
      assert.equal(b.lease.state, 'heldElsewhere', 'A\'s last renewal still runs')
      assert.equal(await store.holderOf(), 'a')
      await race.elapse(THIRD)
      assert.equal(b.lease.state, 'held')
      assert.equal(await store.holderOf(), 'b')
      assert.deepEqual(b.changes, ['heldElsewhere', 'held'])
    })

    it('hands the lease over at once when its holder closes: the other takes it at its next question', async (t) => {
      const store = await storeUnderTest(t)
      const race = contest(t, store)
      const a = await race.join('a')
      const b = await race.join('b')
      await a.lease.start()
      await b.lease.start()
      await a.lease.close()
      assert.equal(await store.holderOf(), undefined, 'released')
      assert.deepEqual(a.changes, ['held', 'closed'])
      await race.elapse(THIRD)
      assert.equal(b.lease.state, 'held', 'a third of its time to live, where a lease left to lapse takes a whole one')
      assert.equal(await store.holderOf(), 'b')
      assert.deepEqual(b.changes, ['heldElsewhere', 'held'])
    })

    it('is unreachable once the store has not answered for a whole time to live, not before, and contested again once it answers', async (t) => {
      const store = await storeUnderTest(t)
      const race = contest(t, store)
      const a = await race.join('a')
      const b = await race.join('b')
      await a.lease.start()
      await b.lease.start()
      await store.cutOff()
      await race.elapse(TTL_MS - THIRD)
      assert.deepEqual([a.lease.state, b.lease.state], ['held', 'heldElsewhere'], 'two thirds without an answer: nothing can have changed')
      await race.elapse(THIRD)
      assert.deepEqual([a.lease.state, b.lease.state], ['unreachable', 'unreachable'])
      assert.deepEqual([a.changes, b.changes], [['held', 'unreachable'], ['heldElsewhere', 'unreachable']])

      await store.back()
      await race.elapse(THIRD)
      const states = [a.lease.state, b.lease.state]
      assert.deepEqual([...states].sort(), ['held', 'heldElsewhere'])
      assert.equal(await store.holderOf(), a.lease.held ? 'a' : 'b')
      assert.deepEqual([a.changes.at(-1), b.changes.at(-1)], states)
    })

    it('releases at close only a lease it holds, and asks nothing after', async (t) => {
      const store = await storeUnderTest(t)
      const race = contest(t, store)
      const a = await race.join('a')
      const b = await race.join('b')
      await a.lease.start()
      await b.lease.start()
      await b.lease.close()
      assert.equal(await store.holderOf(), 'a', 'B\'s close leaves A\'s lease')
      await a.lease.close()
      assert.equal(await store.holderOf(), undefined)
      assert.deepEqual([a.changes, b.changes], [['held', 'closed'], ['heldElsewhere', 'closed']])
      assert.deepEqual([a.clock.pendingTimers, b.clock.pendingTimers], [0, 0], 'no question or deadline left')
      await a.lease.start()
      assert.equal(await store.holderOf(), undefined, 'closed for good')
    })

    it('goes on when onChange throws, and tells onError', async (t) => {
      const store = await storeUnderTest(t)
      const race = contest(t, store)
      const thrown = new Error('a listener that throws')
      const a = await race.join('a', () => { throw thrown })
      await a.lease.start()
      await race.elapse(TTL_MS)
      assert.equal(a.lease.state, 'held')
      assert.deepEqual(a.errors, [thrown], 'told once: the state changed once')
      assert.ok((await store.remainingMs() ?? 0) > TTL_MS - 5000, 'still renewed')
    })
  })
}

describe('the lease on a store that hangs', () => {
  /** A store whose questions are answered by hand. */
  function handAnswered () {
    const questions: Array<(holds: boolean | undefined) => void> = []
    const store: LeaseStore = {
      claim: () => new Promise(resolve => questions.push(resolve)),
      release: async () => {},
    }
    return { store, questions }
  }

  it('is unreachable a whole time to live after the last answered question was asked, and ignores an answer later than that', async () => {
    const { store, questions } = handAnswered()
    const clock = manualClock()
    const changes: LeaseState[] = []
    const lease = new Lease({ store, name: 'hanging', holder: 'a', ttlMs: TTL_MS, timers: clock.timers, onChange: state => changes.push(state) })
    const started = lease.start()
    questions.shift()?.(true)
    await started
    clock.advance(THIRD)
    assert.equal(questions.length, 1, 'asked again after a third')
    // That question hangs: no other is asked while it does, and the deadline of the first answer runs out.
    clock.advance(TTL_MS - THIRD - 1)
    assert.equal(lease.state, 'held')
    clock.advance(1)
    assert.equal(lease.state, 'unreachable')
    // Its answer comes a whole time to live after it was asked: the lease it gave has lapsed since.
    clock.advance(THIRD)
    questions.shift()?.(true)
    await lease.whenIdle()
    assert.equal(lease.state, 'unreachable')
    clock.advance(THIRD)
    questions.shift()?.(true)
    await lease.whenIdle()
    assert.deepEqual(changes, ['held', 'unreachable', 'held'])
    await lease.close()
  })
})
