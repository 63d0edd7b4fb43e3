/**
 * `app.notifications` without HTTP (NotificationsService), on both databases, with the clock and
 * the timers moved by hand: a push the proxy refuses is tried again on the default schedule (5 s,
 * doubling, capped at 10 minutes) and given up after its 8th attempt, logged without its header;
 * a push cut short by a shutdown is put back and pushed by the next instance, once; and two
 * instances on one PostgreSQL database sending the same id at once push it to each user once.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { addressOf, testKey } from '../../devnode/bastyon-host.js'
import { startBastyonProxy, type BastyonProxy } from '../../devnode/bastyon-proxy.js'
import type { Database } from '../../src/db/database.js'
import { openDatabase } from '../../src/db/open-database.js'
import { NotificationsService, PUSH_RETRY, type NotificationsServiceOptions } from '../../src/notifications/notifications-service.js'
import { manualClock, type ManualClock } from '../helpers/manual-clock.js'
import { startPostgres } from '../helpers/start-postgres.js'
import { waitFor } from '../helpers/wait-for.js'
import { backends, sharedDatabase } from '../payments/databases.js'

const postgres = await startPostgres({ after })
const APP_ID = 'demo.pocketnet.app'
const START = Date.parse('2026-11-24T10:00:00.000Z')

let users = 0
const newUser = (): string => addressOf(testKey(`service user ${++users}`))

interface Logged { level: string, fields: Record<string, unknown>, message: string }

function serviceOn (db: Database, proxy: BastyonProxy, clock: ManualClock, logged: Logged[] = [], more: Partial<NotificationsServiceOptions> = {}): NotificationsService {
  const log = (level: string) => (fields: object, message: string) => { logged.push({ level, fields: fields as Record<string, unknown>, message }) }
  return new NotificationsService(async () => db, {
    appId: APP_ID,
    network: 'main',
    proxies: [proxy.url],
    limits: { userIntervalMs: 0 },
    waitMs: 0,
    now: () => START + clock.now(),
    timers: clock.timers,
    // The schedule's own delays, without jitter.
    random: () => 0.5,
    log: { info: log('info'), warn: log('warn'), error: log('error') },
    ...more,
  })
}

for (const backend of backends(postgres)) {
  describe(`notifications' delivery on the ${backend.name} database`, () => {
    const database = sharedDatabase(backend, { before, after })

    it('tries a refused push again after 5, 10, 20 … seconds, at most 10 minutes apart, and gives it up after the 8th attempt', async (t) => {
      const proxy = await startBastyonProxy({ apps: { [APP_ID]: { name: 'Demo', scope: APP_ID } } })
      t.after(() => proxy.close())
      const clock = manualClock()
      const logged: Logged[] = []
      const service = serviceOn(database(), proxy, clock, logged)
      t.after(() => service.close())
      const user = newUser()
      proxy.addToken(APP_ID, user)
      await service.register(user, proxy.url)
      proxy.fault('http-500', 100)

      assert.deepEqual((await service.send({ to: user, header: 'A secret offer', path: '/offer', id: 'offer-1' })).results, [{ address: user, status: 'queued' }])
      await waitFor('the first attempt', () => proxy.sendCalls === 1)
      await service.whenIdle()
      const delays = [5000, 10_000, 20_000, 40_000, 80_000, 160_000, 320_000]
      assert.deepEqual(delays, Array.from({ length: 7 }, (_, i) => Math.min(PUSH_RETRY.firstDelayMs * 2 ** i, PUSH_RETRY.maxDelayMs)))
      for (const [i, delay] of delays.entries()) {
        clock.advance(delay - 1)
        await service.whenIdle()
        assert.equal(proxy.sendCalls, i + 1, `not before ${delay} ms`)
        clock.advance(1)
        await waitFor(`attempt ${i + 2}`, () => proxy.sendCalls === i + 2)
        await service.whenIdle()
      }
      clock.advance(3_600_000)
      await service.whenIdle()
      assert.equal(proxy.sendCalls, 8, 'given up after the 8th')
      assert.deepEqual(await service.backlog(), new Map([['bastyon', { pending: 0, givenUp: 1 }]]))
      assert.deepEqual(service.counts, { results: { sent: 0, queued: 1, failed: 0, not_registered: 0, duplicate: 0, rate_limited: 0 }, deliveries: { bastyon: { delivered: 0, failed: 8, givenUp: 1 }, telegram: { delivered: 0, failed: 0, givenUp: 0 } }, pruned: 0 })
      const gaveUp = logged.filter(line => line.level === 'error')
      assert.equal(gaveUp.length, 1)
      assert.deepEqual([gaveUp[0]?.fields.notificationId, gaveUp[0]?.fields.attempt, gaveUp[0]?.fields.address], ['offer-1', 8, user])
      assert.equal(logged.filter(line => line.level === 'warn').length, 7, 'a line per failed attempt that is retried')
      assert.ok(logged.every(line => !JSON.stringify(line).includes('secret offer')), 'no log line holds the header')
    })

    it('deletes a delivered push at the first run past the retention, and says so', async (t) => {
      const proxy = await startBastyonProxy({ apps: { [APP_ID]: { name: 'Demo', scope: APP_ID } } })
      t.after(() => proxy.close())
      const clock = manualClock()
      const logged: Logged[] = []
      const service = serviceOn(database(), proxy, clock, logged, { retentionMs: 3_600_000, retentionIntervalMs: 600_000 })
      t.after(() => service.close())
      const user = newUser()
      proxy.addToken(APP_ID, user)
      await service.register(user, proxy.url)
      await service.send({ to: user, header: 'Hello', path: '/', id: 'kept-an-hour' })
      await waitFor('the push', () => proxy.pushes(user).length === 1)
      const count = async (): Promise<number> => (await database().query<{ n: number }>('SELECT count(*)::integer AS n FROM notification_deliveries WHERE address = $1', [user])).rows[0]?.n ?? -1
      // The run at start, then the one ten minutes later: the push is younger than the hour at both.
      clock.advance(0)
      await service.whenIdle()
      clock.advance(3_600_000)
      await service.whenIdle()
      assert.equal(await count(), 1, 'kept while younger than the retention')
      assert.equal(service.counts.pruned, 0)
      // The next run, ten minutes after the last ended (an hour and ten minutes in): past the hour.
      clock.advance(600_000)
      await service.whenIdle()
      assert.equal(await count(), 0)
      assert.ok(service.counts.pruned >= 1, 'counted (with what earlier tests left past the hour on this database)')
      const line = logged.find(entry => entry.message.startsWith('Notifications: deliveries past the retention'))
      assert.equal(line?.level, 'info')
      assert.equal(line?.fields.deleted, service.counts.pruned)
    })

    it('puts a push cut short by the shutdown back, due at once, and the next instance pushes it once', async (t) => {
      const proxy = await startBastyonProxy({ apps: { [APP_ID]: { name: 'Demo', scope: APP_ID } } })
      t.after(() => proxy.close())
      const clock = manualClock()
      const first = serviceOn(database(), proxy, clock)
      const user = newUser()
      proxy.addToken(APP_ID, user)
      await first.register(user, proxy.url)
      proxy.fault('hang')
      await first.send({ to: user, header: 'Hello', path: '/', id: 'hello' })
      await waitFor('the push at the proxy', () => proxy.sendCalls === 1)
      await first.close()
      assert.deepEqual(proxy.pushes(user), [])

      const second = serviceOn(database(), proxy, clock)
      t.after(() => second.close())
      await second.start()
      await waitFor('the push from the next instance', () => proxy.pushes(user).length === 1)
      await second.whenIdle()
      assert.equal(second.counts.deliveries.bastyon.delivered, 1)
      assert.deepEqual((await second.send({ to: user, header: 'Hello', path: '/', id: 'hello' })).results, [{ address: user, status: 'duplicate' }])
      assert.equal(proxy.pushes(user).length, 1)
    })
  })
}

describe('two instances on one PostgreSQL database', () => {
  it('send the same id to the same users at once, and each user gets one push', async (t) => {
    const url = await postgres.freshDatabase()
    const dbs = [await openDatabase({ databaseUrl: url }), await openDatabase({ databaseUrl: url })]
    t.after(() => Promise.all(dbs.map(db => db.close())))
    const proxy = await startBastyonProxy({ apps: { [APP_ID]: { name: 'Demo', scope: APP_ID } } })
    t.after(() => proxy.close())
    const clock = manualClock()
    const instances = dbs.map(db => serviceOn(db, proxy, clock))
    t.after(() => Promise.all(instances.map(instance => instance.close())))
    const recipients = Array.from({ length: 30 }, newUser)
    for (const user of recipients) {
      proxy.addToken(APP_ID, user)
      await (instances[0] as NotificationsService).register(user, proxy.url)
    }
    const answers = await Promise.all([0, 1, 2, 3].map(i => (instances[i % 2] as NotificationsService).send({ to: i % 2 === 0 ? recipients : [...recipients].reverse(), header: 'Launch', path: '/launch', id: 'launch' })))
    for (const user of recipients) {
      // The accepted send is `queued`, or `sent` when a consumer pushed it before the send read its status back (a slow machine).
      const statuses = answers.flatMap(answer => answer.results).filter(result => result.address === user).map(result => result.status === 'sent' ? 'queued' : result.status).sort()
      assert.deepEqual(statuses, ['duplicate', 'duplicate', 'duplicate', 'queued'], user)
    }
    await waitFor('every push', () => proxy.pushes().length === recipients.length)
    await Promise.all(instances.map(instance => instance.whenIdle()))
    assert.deepEqual(proxy.pushes().map(push => push.address).sort(), [...recipients].sort(), 'one push each')
    assert.equal(proxy.sendCalls, recipients.length)
  })
})
