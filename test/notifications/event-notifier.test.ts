/**
 * The outbox consumer `notify` on both databases, with the clock moved by hand: a grant written
 * with a `notify` row is sent to its holder with its id; a send that is `rate_limited` is tried
 * again after the retry's delay and then acknowledged; a row handed out again is sent again with
 * the same id (the notifications answer `duplicate`); revocations and kinds turned off pass
 * without a send; the give-up after the last attempt.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { TimerHandle, Timers } from 'pocketnet-client'
import { EntitlementStore } from '../../src/entitlements/entitlement-store.js'
import { emptyNoticeCounts, NOTIFY_CONSUMER, type EventNoticeSettings } from '../../src/notifications/event-notices.js'
import { EventNotifier } from '../../src/notifications/event-notifier.js'
import type { NotificationsService, SendStatus } from '../../src/notifications/notifications-service.js'
import type { NotificationInput } from '../../src/notifications/notification-rules.js'
import { PaymentOutbox } from '../../src/payments/payment-outbox.js'
import { addressOf, testKey } from '../../devnode/bastyon-host.js'
import { startPostgres } from '../helpers/start-postgres.js'
import { backends, sharedDatabase } from '../payments/databases.js'

const postgres = await startPostgres({ after })
const START = 1_800_000_000_000
const GRANTED: EventNoticeSettings = { entitlementGranted: { header: 'Yours', path: '/gifts' } }

let users = 0
const freshAddress = (): string => addressOf(testKey(`notified holder ${++users}`))

/** Timers that never fire by themselves: passes are run by hand (wake, whenIdle). */
const STILL_TIMERS: Timers = { setTimeout: () => ({}) as TimerHandle, clearTimeout: () => {} }

for (const backend of backends(postgres)) {
  describe(`the notify consumer on the ${backend.name} database`, () => {
    const database = sharedDatabase(backend, { before, after })

    function setup (t: { after (fn: () => unknown): void }, answer: (input: NotificationInput, call: number) => SendStatus, settings: EventNoticeSettings = GRANTED) {
      const clock = { now: START }
      const sent: NotificationInput[] = []
      const notifications = {
        async send (input: NotificationInput) {
          sent.push(input)
          return { results: [{ address: input.to as string, status: answer(input, sent.length) }] }
        },
      } as unknown as NotificationsService
      const counts = emptyNoticeCounts()
      const warnings: string[] = []
      const notifier = new EventNotifier({
        outbox: new PaymentOutbox(database(), { now: () => clock.now }),
        notifications,
        settings,
        network: 'main',
        log: { info () {}, warn (_fields, message) { warnings.push(message) } },
        now: () => clock.now,
        timers: STILL_TIMERS,
        random: () => 0.5,
        retry: { firstDelayMs: 30_000, maxDelayMs: 60_000, jitter: 0, maxAttempts: 3 },
        counts,
      })
      t.after(() => notifier.close())
      const store = new EntitlementStore(database(), { now: () => clock.now, consumers: [NOTIFY_CONSUMER] })
      const pass = async (): Promise<void> => { notifier.wake(); await notifier.whenIdle() }
      const rowOf = async (grantId: number) => (await database().query<{ status: string, attempts: number, available_at_ms: unknown }>(
        "SELECT o.status, o.attempts, o.available_at_ms FROM outbox o JOIN outbox_events e ON e.id = o.event_id WHERE o.consumer = 'notify' AND e.grant_id = $1 AND e.type = 'entitlementGranted'", [grantId])).rows[0]
      return { clock, sent, counts, warnings, notifier, store, pass, rowOf }
    }

    it('sends a grant to its holder with its id, tries a rate-limited one again after the delay, then acknowledges it', async (t) => {
      const { clock, sent, counts, store, pass, rowOf } = setup(t, (_input, call) => (call === 1 ? 'rate_limited' : 'queued'))
      const holder = freshAddress()
      const grant = await store.grant({ address: holder, sku: 'gift', reason: 'a test' })
      await pass()
      const mine = (): NotificationInput[] => sent.filter(input => input.to === holder)
      assert.deepEqual(mine(), [{ to: holder, header: 'Yours', path: '/gifts', id: `grant:${grant.id}:granted` }])
      const waiting = await rowOf(grant.id)
      assert.deepEqual([waiting?.status, waiting?.attempts, Number(waiting?.available_at_ms)], ['pending', 1, START + 30_000])
      clock.now += 29_999
      await pass()
      assert.equal(mine().length, 1, 'not before its delay')
      clock.now += 1
      await pass()
      assert.equal(mine().length, 2)
      assert.equal((await rowOf(grant.id))?.status, 'delivered')
      assert.deepEqual([counts.told.entitlementGranted.rate_limited, counts.told.entitlementGranted.queued], [1, 1])
    })

    it('sends a row handed out again with the same id, and passes revocations and kinds turned off without a send', async (t) => {
      const { clock, sent, store, pass, rowOf } = setup(t, () => 'queued')
      const holder = freshAddress()
      const grant = await store.grant({ address: holder, sku: 'gift' })
      await pass()
      await database().query("UPDATE outbox o SET status = 'pending', available_at_ms = 0, delivered_at_ms = NULL FROM outbox_events e WHERE e.id = o.event_id AND o.consumer = 'notify' AND e.grant_id = $1", [grant.id])
      await pass()
      assert.deepEqual(sent.filter(input => input.to === holder).map(input => input.id), [`grant:${grant.id}:granted`, `grant:${grant.id}:granted`])
      await store.revoke(holder, 'gift', 'refunded')
      await pass()
      assert.equal(sent.filter(input => input.to === holder).length, 2, 'a revocation is not told')

      const off = setup(t, () => 'queued', {})
      const other = freshAddress()
      const quiet = await off.store.grant({ address: other, sku: 'gift' })
      off.clock.now = clock.now
      await off.pass()
      assert.deepEqual(off.sent.filter(input => input.to === other), [])
      assert.equal((await rowOf(quiet.id))?.status, 'delivered', 'passed, not left pending')
    })

    it('gives a notice up after its last attempt, and says so', async (t) => {
      const { clock, store, pass, rowOf, warnings } = setup(t, () => 'rate_limited')
      const grant = await store.grant({ address: freshAddress(), sku: 'gift' })
      for (let attempt = 0; attempt < 3; attempt++) {
        await pass()
        clock.now += 60_000
      }
      assert.equal((await rowOf(grant.id))?.status, 'given_up')
      assert.ok(warnings.includes('Notifications: an event could not be told; given up'))
    })
  })
}
