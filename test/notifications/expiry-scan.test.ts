/**
 * The scan for entitlements ending soon on both databases: which runs of grants it finds (their
 * end within the notice, come within it in the last twelve hours, not revoked, not renewed past
 * it, not held for good besides, not written inside their own notice), the id that names the end,
 * and, on a PostgreSQL server shared by two instances, one scan at a time through the lease.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { TimerHandle, Timers } from 'pocketnet-client'
import type { Database } from '../../src/db/database.js'
import { EntitlementStore } from '../../src/entitlements/entitlement-store.js'
import { emptyNoticeCounts } from '../../src/notifications/event-notices.js'
import { ExpiryScan, LOOKBACK_MS, runsEndingSoon } from '../../src/notifications/expiry-scan.js'
import type { NotificationsService, SendStatus } from '../../src/notifications/notifications-service.js'
import type { NotificationInput } from '../../src/notifications/notification-rules.js'
import { startPostgres } from '../helpers/start-postgres.js'
import { backends, sharedDatabase } from '../payments/databases.js'

const postgres = await startPostgres({ after })
const DAY_S = 86_400
const DAY_MS = DAY_S * 1000
const BEFORE_MS = 3 * DAY_MS
const START = 1_800_000_000_000

let users = 0
/** An address of its own for each test: the tests of a backend share one database. */
const freshAddress = (): string => `P-ending-${++users}`

/** Timers that never fire by themselves: scans are run by hand. */
const STILL_TIMERS: Timers = {
  setTimeout: () => ({}) as TimerHandle,
  clearTimeout: () => {},
}

/** A stand-in for app.notifications: records what it is asked to send and answers `status`. */
function recordingNotifications (status: (input: NotificationInput) => SendStatus = () => 'queued') {
  const sent: NotificationInput[] = []
  const service = {
    async send (input: NotificationInput) {
      sent.push(input)
      return { results: [{ address: input.to as string, status: status(input) }] }
    },
  } as unknown as NotificationsService
  return { sent, service }
}

for (const backend of backends(postgres)) {
  describe(`the expiry scan on the ${backend.name} database`, () => {
    const database = sharedDatabase(backend, { before, after })
    const storeAt = (clock: { now: number }): EntitlementStore => new EntitlementStore(database(), { now: () => clock.now })
    const endingFor = async (address: string, nowMs: number) => (await runsEndingSoon(database(), nowMs, BEFORE_MS)).filter(run => run.address === address)

    it('finds a run once its end is within the notice, for twelve hours, and not after it ended', async () => {
      const clock = { now: START }
      const address = freshAddress()
      const grant = await storeAt(clock).grant({ address, sku: 'monthly', durationS: 30 * DAY_S })
      const end = START + 30 * DAY_MS
      assert.deepEqual(await endingFor(address, end - BEFORE_MS - 1), [], 'a millisecond more than three days left: not yet')
      const run = { grantId: grant.id, address, sku: 'monthly', expiresAtMs: end }
      assert.deepEqual(await endingFor(address, end - BEFORE_MS), [run], 'three days left')
      assert.deepEqual(await endingFor(address, end - BEFORE_MS + LOOKBACK_MS - 1), [run])
      assert.deepEqual(await endingFor(address, end - BEFORE_MS + LOOKBACK_MS), [], 'twelve hours on: left alone, its id would count again after a day')
      assert.deepEqual(await endingFor(address, end), [], 'ended')
    })

    it('follows a renewal to its new end, and leaves out revoked runs, runs held for good besides and grants shorter than the notice', async () => {
      const clock = { now: START }
      const store = storeAt(clock)
      const renewed = freshAddress()
      const first = await store.grant({ address: renewed, sku: 'monthly', durationS: 30 * DAY_S })
      clock.now = START + 28 * DAY_MS
      const renewal = await store.grant({ address: renewed, sku: 'monthly', durationS: 30 * DAY_S })
      assert.equal(renewal.startsAtMs, first.expiresAtMs)
      assert.deepEqual(await endingFor(renewed, START + 28 * DAY_MS), [], 'the first end is no end any more')
      const newEnd = START + 60 * DAY_MS
      assert.deepEqual(await endingFor(renewed, newEnd - BEFORE_MS + 1), [{ grantId: renewal.id, address: renewed, sku: 'monthly', expiresAtMs: newEnd }])

      clock.now = START
      const revoked = freshAddress()
      await store.grant({ address: revoked, sku: 'monthly', durationS: 30 * DAY_S })
      await store.revoke(revoked, 'monthly', 'refunded')
      const forGood = freshAddress()
      await store.grant({ address: forGood, sku: 'monthly', durationS: 30 * DAY_S })
      await store.grant({ address: forGood, sku: 'monthly', reason: 'upgraded to lifetime' })
      const short = freshAddress()
      await store.grant({ address: short, sku: 'trial', durationS: 2 * DAY_S })
      for (const [address, nowMs] of [[revoked, START + 27 * DAY_MS + 1], [forGood, START + 27 * DAY_MS + 1], [short, START + 1]] as const) {
        assert.deepEqual(await endingFor(address, nowMs), [], address)
      }
    })

    it('sends each run found with the id that names its end, counting what went out', async (t) => {
      const clock = { now: START }
      const address = freshAddress()
      const grant = await storeAt(clock).grant({ address, sku: 'monthly', durationS: 30 * DAY_S })
      const end = START + 30 * DAY_MS
      clock.now = end - BEFORE_MS + 60_000
      let answer: SendStatus = 'rate_limited'
      const { sent, service } = recordingNotifications(input => (input.to === address ? answer : 'not_registered'))
      const counts = emptyNoticeCounts()
      const scan = new ExpiryScan({ db: database(), notifications: service, text: { header: 'Ends soon', path: '/renew', beforeMs: BEFORE_MS }, log: { info () {}, warn () {} }, now: () => clock.now, timers: STILL_TIMERS, counts })
      t.after(() => scan.close())
      await scan.start()
      await scan.scan()
      answer = 'queued'
      await scan.scan()
      answer = 'duplicate'
      await scan.scan()
      const mine = sent.filter(input => input.to === address)
      assert.deepEqual(mine, Array(3).fill({ to: address, header: 'Ends soon', path: '/renew', id: `grant:${grant.id}:expiring:${end}` }), 'sent again after rate_limited; the notifications refuse the repeats')
      assert.equal(counts.told.expiring.rate_limited, 1)
      assert.equal(counts.told.expiring.duplicate, 0, 'repeats are not counted')
      assert.ok(counts.told.expiring.queued >= 1)
      assert.equal(counts.expiryScans, 3)
    })

    if (backend.name === 'server') {
      it('scans on one of two instances sharing the database: the lease holder', async (t) => {
        const clock = { now: START }
        const address = freshAddress()
        await storeAt(clock).grant({ address, sku: 'monthly', durationS: 30 * DAY_S })
        clock.now = START + 27 * DAY_MS + 60_000
        const scans = []
        for (let i = 0; i < 2; i++) {
          const db: Database = database()
          const notifications = recordingNotifications()
          const counts = emptyNoticeCounts()
          const scan = new ExpiryScan({ db, notifications: notifications.service, text: { header: 'Ends soon', path: '/', beforeMs: BEFORE_MS }, log: { info () {}, warn () {} }, now: () => clock.now, timers: STILL_TIMERS, counts })
          t.after(() => scan.close())
          await scan.start()
          await scan.scan()
          scans.push({ notifications, counts })
        }
        assert.deepEqual(scans.map(each => each.counts.expiryScans), [1, 0], 'the second waits for the first one\'s lease')
        assert.deepEqual(scans.map(each => each.notifications.sent.some(input => input.to === address)), [true, false])
      })
    }
  })
}
