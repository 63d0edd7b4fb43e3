/**
 * The notifications' tables on both databases (the embedded one and a PostgreSQL server), through
 * the store's own class: channels, the send decision (not registered, duplicate, the user's
 * interval and day, the app's budget, in the order given), the deliveries' outbox, and, on the
 * server, two instances sending the same id to the same user at once: one delivery.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Database } from '../../src/db/database.js'
import { openDatabase } from '../../src/db/open-database.js'
import { DAY_MS, NotificationStore, PRUNE_SETTLED_SQL, type Decision, type NotificationLimits } from '../../src/notifications/notification-store.js'
import { startPostgres } from '../helpers/start-postgres.js'
import { backends, sharedDatabase } from '../payments/databases.js'

const postgres = await startPostgres({ after })
/** Each test sends on a UTC day of its own: the app's budget is counted per day, in one row. */
let days = 0
const newDay = (): { now: number } => ({ now: Date.parse('2026-11-24T10:00:00.000Z') + ++days * 2 * DAY_MS })

let users = 0
const newUser = (): string => `P-notified-${++users}`

const note = (to: string[], id: string) => ({ to, id, header: 'Your order shipped', path: '/orders/42' })
const statuses = (decisions: Decision[]): string[] => decisions.map(decision => decision.status)

function storeOn (db: Database, clock: { now: number }, limits: Partial<NotificationLimits> = {}): NotificationStore {
  return new NotificationStore(db, { now: () => clock.now, limits })
}

for (const backend of backends(postgres)) {
  describe(`notifications on the ${backend.name} database`, () => {
    const database = sharedDatabase(backend, { before, after })

    it('records a channel, moves it to another proxy keeping its opt-in time, lists it, and forgets it', async () => {
      const clock = newDay()
      const store = storeOn(database(), clock)
      const user = newUser()
      assert.deepEqual(await store.channels(user), [])
      assert.deepEqual(await store.register(user, 'bastyon', 'https://1.pocketnet.app:8899'), { channel: 'bastyon', target: 'https://1.pocketnet.app:8899', createdAtMs: clock.now })
      const since = clock.now
      clock.now += 60_000
      assert.deepEqual(await store.register(user, 'bastyon', 'https://2.pocketnet.app:8899'), { channel: 'bastyon', target: 'https://2.pocketnet.app:8899', createdAtMs: since })
      assert.deepEqual(await store.channels(user), [{ channel: 'bastyon', target: 'https://2.pocketnet.app:8899', createdAtMs: since }])
      assert.equal(await store.unregister(user, 'bastyon'), true)
      assert.equal(await store.unregister(user, 'bastyon'), false)
      assert.deepEqual(await store.channels(user), [])
      await assert.rejects(database().query("INSERT INTO notification_channels VALUES ($1, 'email', 'x', 0)", [user]), /check/i, 'only the channels named')
    })

    it('decides each recipient in the order given: not registered, accepted, a repeat of the list and a second send duplicate, the key counting again a day later', async () => {
      const clock = newDay()
      const store = storeOn(database(), clock, { userIntervalMs: 0 })
      const [alice, bob, carol] = [newUser(), newUser(), newUser()] as [string, string, string]
      await store.register(alice, 'bastyon', 'https://1.pocketnet.app:8899')
      await store.register(carol, 'bastyon', 'https://1.pocketnet.app:8899')
      const first = await store.enqueue(note([bob, alice, carol, alice], 'order-42'))
      assert.deepEqual(statuses(first), ['not_registered', 'accepted', 'accepted', 'duplicate'])
      assert.deepEqual(first.map(decision => decision.address), [bob, alice, carol, alice])
      assert.equal(first[1]?.status === 'accepted' && first[1].deliveryIds.length, 1)
      assert.deepEqual(statuses(await store.enqueue(note([carol, alice], 'order-42'))), ['duplicate', 'duplicate'])
      assert.deepEqual(statuses(await store.enqueue(note([alice], 'order-43'))), ['accepted'], 'another id')
      clock.now += DAY_MS - 1
      assert.deepEqual(statuses(await store.enqueue(note([alice], 'order-42'))), ['duplicate'], 'until the day is over')
      clock.now += 1
      assert.deepEqual(statuses(await store.enqueue(note([alice], 'order-42'))), ['accepted'], 'the key expired')
      const { rows } = await database().query<{ n: number }>('SELECT count(*)::integer AS n FROM notification_deliveries WHERE address = $1', [alice])
      assert.equal(rows[0]?.n, 3)
    })

    it('holds the user\'s interval and rolling day, and says which refused', async () => {
      const clock = newDay()
      const store = storeOn(database(), clock, { userIntervalMs: 30_000, userDailyLimit: 3 })
      const user = newUser()
      await store.register(user, 'bastyon', 'https://1.pocketnet.app:8899')
      const start = clock.now
      const send = async (id: string): Promise<Decision | undefined> => (await store.enqueue(note([user], id)))[0]
      assert.equal((await send('a'))?.status, 'accepted')
      clock.now += 29_999
      assert.deepEqual(await send('b'), { address: user, status: 'rate_limited', reason: 'user_interval' })
      clock.now += 1
      assert.equal((await send('b'))?.status, 'accepted')
      clock.now += 30_000
      assert.equal((await send('c'))?.status, 'accepted')
      clock.now += 30_000
      assert.deepEqual(await send('d'), { address: user, status: 'rate_limited', reason: 'user_daily' })
      assert.equal((await send('a'))?.status, 'duplicate', 'a duplicate is told as one, whatever the limits')
      clock.now = start + DAY_MS
      assert.equal((await send('d'))?.status, 'accepted', 'the first of the day has left the window')
      assert.deepEqual(await send('e'), { address: user, status: 'rate_limited', reason: 'user_interval' })
    })

    it('holds the app\'s budget of the UTC day across sends, in the order given, and starts again the next day', async () => {
      const clock = newDay()
      const store = storeOn(database(), clock, { appDailyLimit: 2 })
      const recipients = [newUser(), newUser(), newUser()]
      for (const user of recipients) await store.register(user, 'bastyon', 'https://1.pocketnet.app:8899')
      const first = await store.enqueue(note(recipients, 'news-1'))
      assert.deepEqual(statuses(first), ['accepted', 'accepted', 'rate_limited'])
      assert.deepEqual(first[2], { address: recipients[2], status: 'rate_limited', reason: 'app_daily' })
      assert.deepEqual(statuses(await store.enqueue(note([recipients[2] as string], 'news-1'))), ['rate_limited'], 'the budget is spent for the day; the key was not written')
      clock.now += DAY_MS
      assert.deepEqual(statuses(await store.enqueue(note([recipients[2] as string], 'news-1'))), ['accepted'])
    })

    it('leases due deliveries, acknowledges, retries later, gives up, counts the backlog, and drops what waits for a user who opts out', async () => {
      const clock = newDay()
      const store = storeOn(database(), clock, { userIntervalMs: 0 })
      const [alice, bob] = [newUser(), newUser()] as [string, string]
      await store.register(alice, 'bastyon', 'https://1.pocketnet.app:8899')
      await store.register(bob, 'bastyon', 'https://2.pocketnet.app:8899')
      // What earlier tests left pending on the shared database is delivered first.
      for (let batch = await store.claim('bastyon', { limit: 1000, leaseMs: 1 }); batch.length > 0; batch = await store.claim('bastyon', { limit: 1000, leaseMs: 1 })) {
        for (const row of batch) await store.ack('bastyon', row.id)
      }
      const before = await store.backlog('bastyon')
      await store.enqueue(note([alice, bob], 'ship-1'))
      assert.equal(await store.nextDueAt('bastyon'), clock.now)
      const claimed = await store.claim('bastyon', { limit: 10, leaseMs: 60_000 })
      assert.deepEqual(claimed.map(row => [row.address, row.target, row.notificationId, row.header, row.path, row.attempts]).sort(), [
        [alice, 'https://1.pocketnet.app:8899', 'ship-1', 'Your order shipped', '/orders/42', 1],
        [bob, 'https://2.pocketnet.app:8899', 'ship-1', 'Your order shipped', '/orders/42', 1],
      ].sort())
      assert.deepEqual(await store.claim('bastyon', { limit: 10, leaseMs: 60_000 }), [], 'leased')
      const [first, second] = [...claimed].sort((a, b) => a.address === alice ? -1 : b.address === alice ? 1 : 0) as [typeof claimed[0], typeof claimed[0]]
      assert.equal(await store.ack('bastyon', first.id), true)
      assert.equal(await store.ack('bastyon', first.id), false, 'once')
      await store.retryLater('bastyon', second.id, 5000)
      assert.equal(await store.nextDueAt('bastyon'), clock.now + 5000)
      clock.now += 5000
      const again = await store.claim('bastyon', { limit: 10, leaseMs: 60_000 })
      assert.deepEqual(again.map(row => [row.id, row.attempts]), [[second.id, 2]])
      await store.noteError(second.id, 'answered 500: {"error":{},"code":500}')
      await store.giveUp('bastyon', second.id)
      assert.deepEqual(await store.backlog('bastyon'), { pending: before.pending, givenUp: before.givenUp + 1 })
      const known = await store.statuses([first.id, second.id])
      assert.deepEqual([known.get(first.id), known.get(second.id), known.size], ['delivered', 'given_up', 2])

      await store.enqueue(note([alice], 'ship-2'))
      assert.deepEqual(await store.backlog('bastyon'), { pending: before.pending + 1, givenUp: before.givenUp + 1 })
      assert.deepEqual(await store.deleteUser(alice), { channels: 1 })
      assert.deepEqual(await store.backlog('bastyon'), { pending: before.pending, givenUp: before.givenUp + 1 }, 'what waited for her is gone')
      assert.deepEqual(statuses(await store.enqueue(note([alice], 'ship-3'))), ['not_registered'])
    })

    // Last of the block: it deletes what the tests before it settled on this database.
    it('deletes settled deliveries made before a time, the oldest first and no more than asked, never a pending or a younger one, through the settled rows\' index', async () => {
      const clock = newDay()
      const store = storeOn(database(), clock, { userIntervalMs: 0 })
      const [alice, bob, carol] = [newUser(), newUser(), newUser()] as [string, string, string]
      for (const user of [alice, bob, carol]) await store.register(user, 'bastyon', 'https://1.pocketnet.app:8899')
      const made = clock.now
      const idOf = (decisions: Decision[], address: string): number => {
        const decision = decisions.find(one => one.address === address)
        assert.ok(decision?.status === 'accepted')
        return decision.deliveryIds[0] as number
      }
      const old = await store.enqueue(note([alice, bob, carol], 'old-1'))
      const [delivered, givenUp, pending] = [idOf(old, alice), idOf(old, bob), idOf(old, carol)]
      assert.equal(await store.ack('bastyon', delivered), true)
      await store.giveUp('bastyon', givenUp)
      clock.now += 1000
      const young = idOf(await store.enqueue(note([alice], 'young-1')), alice)
      assert.equal(await store.ack('bastyon', young), true)
      // What earlier tests settled (on earlier days) goes first.
      await store.pruneSettled(made, 100_000)

      assert.equal(await store.pruneSettled(clock.now, 1), 1, 'no more than asked')
      assert.equal((await store.statuses([delivered, givenUp])).size, 1)
      assert.equal(await store.pruneSettled(clock.now, 10), 1)
      assert.equal(await store.pruneSettled(clock.now, 10), 0)
      assert.deepEqual([...(await store.statuses([delivered, givenUp, pending, young]))].sort(), [[pending, 'pending'], [young, 'delivered']].sort())
      assert.equal(await store.pruneSettled(clock.now + 1, 10), 1, 'the younger one, once past its time too')
      assert.deepEqual([...(await store.statuses([pending, young]))], [[pending, 'pending']], 'a pending delivery is work: never deleted by age')

      // On a table of some size (with its statistics), the statement reads the settled rows' index and the rows it deletes, not the table.
      await database().query(
        `INSERT INTO notification_deliveries (address, channel, target, notification_id, header, path, status, created_at_ms, delivered_at_ms)
         SELECT 'P-filler-' || i, 'bastyon', 'https://1.pocketnet.app:8899', 'filler', 'Hello', '/', CASE WHEN i % 10 = 0 THEN 'pending' ELSE 'delivered' END, $1::bigint + i, CASE WHEN i % 10 = 0 THEN NULL ELSE $1::bigint + i END
         FROM generate_series(1, 5000) i`,
        [clock.now]
      )
      await database().exec('ANALYZE notification_deliveries')
      const { rows } = await database().query<{ 'QUERY PLAN': string }>(`EXPLAIN ${PRUNE_SETTLED_SQL}`, [clock.now + 100, 500])
      const plan = rows.map(row => row['QUERY PLAN']).join('\n')
      assert.match(plan, /Index Scan using notification_deliveries_settled/, plan)
      assert.doesNotMatch(plan, /Seq Scan/, plan)
    })
  })
}

describe('two instances on one PostgreSQL database', () => {
  it('sending the same id to the same user at once make one delivery, and each user\'s limits hold across them', async (t) => {
    const url = await postgres.freshDatabase()
    const first = await openDatabase({ databaseUrl: url })
    t.after(() => first.close())
    const second = await openDatabase({ databaseUrl: url })
    t.after(() => second.close())
    const clock = newDay()
    const stores = [storeOn(first, clock), storeOn(second, clock)]
    const recipients = Array.from({ length: 20 }, newUser)
    for (const user of recipients) await (stores[0] as NotificationStore).register(user, 'bastyon', 'https://1.pocketnet.app:8899')
    // Each instance sends the whole list (in its own order, so that their locks cross) five times at once.
    const sends = Array.from({ length: 10 }, (_, i) => (stores[i % 2] as NotificationStore).enqueue(note(i % 2 === 0 ? recipients : [...recipients].reverse(), 'launch')))
    const decisions = (await Promise.all(sends)).flat()
    for (const user of recipients) {
      const mine = decisions.filter(decision => decision.address === user)
      assert.deepEqual(mine.map(decision => decision.status).sort(), ['accepted', ...Array(9).fill('duplicate')], user)
    }
    const { rows } = await first.query<{ address: string, n: number }>('SELECT address, count(*)::integer AS n FROM notification_deliveries GROUP BY address')
    assert.equal(rows.length, recipients.length)
    assert.ok(rows.every(row => row.n === 1), JSON.stringify(rows))
    // Another id right after: each user's interval holds across the instances.
    const next = await Promise.all(stores.map(store => store.enqueue(note(recipients, 'launch-2'))))
    assert.ok(next.flat().every(decision => decision.status === 'rate_limited'), JSON.stringify(next.flat().map(decision => decision.status)))
  })
})
