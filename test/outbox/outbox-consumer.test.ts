/**
 * The outbox consumer over the payments' outbox, on both databases, on a clock the tests move:
 * what the handler takes is acknowledged, what it refuses comes back after the retry policy's
 * delay and is given up after its last attempt (or at once, when `decide` reads the failure so), acknowledgements that come while one is written go together, a wake() is not missed, a claim another instance
 * holds is taken once its lease lapses, and close() waits for the batch in hand.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { OutboxConsumer, type ConsumerOutbox, type OutboxConsumerOptions } from '../../src/outbox/outbox-consumer.js'
import { RetryPolicy, type RetryDecision, type RetrySchedule } from '../../src/outbox/retry-policy.js'
import { InvoiceStore } from '../../src/payments/invoice-store.js'
import { PaymentOutbox, type ClaimedEvent } from '../../src/payments/payment-outbox.js'
import { manualClock } from '../helpers/manual-clock.js'
import { startPostgres } from '../helpers/start-postgres.js'
import { waitFor } from '../helpers/wait-for.js'
import { MERCHANT, paymentTransaction, txid } from '../payments/chain-transactions.js'
import { backends, sharedDatabase } from '../payments/databases.js'

type WithAfter = { after (fn: () => unknown): void }

const postgres = await startPostgres({ after })
/** Where the manual clock's zero is, in milliseconds since the epoch. */
const EPOCH_MS = 1_800_000_000_000
/** With random 0.5, no jitter: 1 s, 2 s, 4 s, 8 s, 8 s … */
const SCHEDULE: RetrySchedule = { firstDelayMs: 1000, maxDelayMs: 8000, jitter: 0.25 }
const POLL_MS = 60_000
/** Every txid of the file is new: a txid settles one invoice, ever, on the database the tests share. */
let payments = 0

/** A promise and the function that resolves it. */
function deferred () {
  let settle!: () => void
  const promise = new Promise<void>(resolve => { settle = resolve })
  return { promise, resolve: settle }
}

/** The outbox's methods, to override one of them in a test. */
function delegating (outbox: PaymentOutbox): ConsumerOutbox<ClaimedEvent> {
  return {
    claim: (consumer, options) => outbox.claim(consumer, options),
    ack: (consumer, id) => outbox.ack(consumer, id),
    retryLater: (consumer, id, delayMs) => outbox.retryLater(consumer, id, delayMs),
    giveUp: (consumer, id) => outbox.giveUp(consumer, id),
    nextDueAt: consumer => outbox.nextDueAt(consumer),
  }
}

/** Turns of the event loop: enough for anything not waiting on something else to finish. */
async function turns (count = 20): Promise<void> {
  for (let i = 0; i < count; i++) await new Promise(resolve => setImmediate(resolve))
}

for (const backend of backends(postgres)) {
  describe(`an outbox consumer on the ${backend.name} database`, () => {
    const database = sharedDatabase(backend, { before, after })
    let consumers = 0

    type Handle = OutboxConsumerOptions<ClaimedEvent>['handle']

    /**
     * A consumer of a name of this test's own, on a manual clock, with what it reported kept, and
     * an invoice store whose events get rows for that name only.
     */
    function setup (t: WithAfter, handle: Handle, options: Partial<OutboxConsumerOptions<ClaimedEvent>> & { schedule?: RetrySchedule, outboxFor?: (outbox: PaymentOutbox) => ConsumerOutbox<ClaimedEvent> } = {}) {
      const name = `consumer-${++consumers}`
      const clock = manualClock()
      const now = (): number => EPOCH_MS + clock.now()
      const store = new InvoiceStore(database(), { now, consumers: [name] })
      const outbox = new PaymentOutbox(database(), { now })
      const reported = {
        delivered: [] as number[],
        failed: [] as Array<{ id: number, attempts: number, decision: RetryDecision }>,
        putBack: [] as number[],
        outboxErrors: [] as unknown[],
      }
      const { schedule, outboxFor, ...rest } = options
      const consumer = new OutboxConsumer<ClaimedEvent>({
        consumer: name,
        outbox: outboxFor?.(outbox) ?? outbox,
        handle,
        retry: new RetryPolicy(schedule ?? SCHEDULE, () => 0.5),
        batchSize: 10,
        leaseMs: 30_000,
        pollMs: POLL_MS,
        now,
        timers: clock.timers,
        onDelivered: event => { reported.delivered.push(event.id) },
        onFailed: (event, _err, decision) => { reported.failed.push({ id: event.id, attempts: event.attempts, decision }) },
        onPutBack: event => { reported.putBack.push(event.id) },
        onOutboxError: err => { reported.outboxErrors.push(err) },
        ...rest,
      })
      t.after(() => consumer.close())
      /** A new event (an invoice confirmed) with a row for this consumer; its id. */
      async function newEvent (): Promise<number> {
        const invoice = await store.createInvoice({ amountSat: 1000, receiver: MERCHANT, expiresInS: 600, confirmations: 1 })
        const id = txid(1_000_000 + ++payments)
        const { events } = await store.recordObservation(invoice.id, { txid: id, transaction: paymentTransaction({ txid: id, amountSat: 1000, memo: invoice.memo, height: 7 }), tipHeight: 7 })
        return events[0]?.id as number
      }
      async function rowOf (eventId: number) {
        const { rows } = await database().query<{ status: string, available_at_ms: number, attempts: number }>(
          'SELECT status, available_at_ms, attempts FROM outbox WHERE consumer = $1 AND event_id = $2', [name, eventId])
        return rows[0]
      }
      /** Moves the clock, then waits for what that woke to finish. */
      async function advance (ms: number): Promise<void> {
        clock.advance(ms)
        await consumer.whenIdle()
      }
      async function runOnce (): Promise<void> {
        consumer.wake()
        await consumer.whenIdle()
      }
      return { name, clock, now, outbox, consumer, reported, newEvent, rowOf, advance, runOnce }
    }

    it('starts the handlers of a parallel batch a turn of the event loop apart, all in flight at once', async (t) => {
      let turn = 0
      let counting = true
      const count = (): void => { turn++; if (counting) setImmediate(count) }
      const release = deferred()
      const startedAt: number[] = []
      let finished = 0
      const { newEvent, runOnce, reported } = setup(t, async () => {
        startedAt.push(turn)
        await release.promise
        finished++
      }, { inParallel: true })
      t.after(() => { counting = false })
      const ids = [await newEvent(), await newEvent(), await newEvent(), await newEvent()]
      setImmediate(count)
      const running = runOnce()
      try {
        await waitFor('every handler started', () => startedAt.length === ids.length)
        assert.equal(finished, 0, 'all four in flight together')
        for (let i = 1; i < startedAt.length; i++) assert.ok((startedAt[i] as number) > (startedAt[i - 1] as number), `start ${i} came in a later turn than the one before (${startedAt.join(', ')})`)
      } finally {
        // Whatever failed, the handlers end: the consumer's close waits for them.
        release.resolve()
      }
      await running
      counting = false
      assert.deepEqual([...reported.delivered].sort((a, b) => a - b), ids)
    })

    it('acknowledges the rows of a parallel batch that succeed while an acknowledgement is written together, in one ackMany; a failed ackMany leaves them to come back', async (t) => {
      const writes: Array<number | number[]> = []
      /** Holds the next single acknowledgement until resolved: the rows that succeed meanwhile wait for the next write. */
      let hold: Promise<void> | undefined
      let failMany = false
      const { reported, newEvent, rowOf, runOnce } = setup(t, () => {}, {
        inParallel: true,
        outboxFor: outbox => ({
          ...delegating(outbox),
          ack: async (consumer, id) => {
            writes.push(id)
            const held = hold
            hold = undefined
            await held
            return await outbox.ack(consumer, id)
          },
          ackMany: async (consumer, ids) => {
            writes.push(ids)
            if (failMany) throw new Error('the database is gone')
            for (const id of ids) await outbox.ack(consumer, id)
          },
        }),
      })
      for (const fails of [false, true]) {
        failMany = fails
        writes.length = 0
        reported.delivered.length = 0
        const first = deferred()
        hold = first.promise
        const ids = [await newEvent(), await newEvent(), await newEvent(), await newEvent()]
        const running = runOnce()
        // The other rows succeed while the first acknowledgement is held.
        await waitFor('the batch handled', () => writes.length === 1 && reported.delivered.length === 0)
        await turns()
        assert.deepEqual(writes, [ids[0]], 'the first acknowledgement alone, at once')
        first.resolve()
        await running
        assert.deepEqual(writes, [ids[0], ids.slice(1)], 'the three that came meanwhile in one write')
        assert.deepEqual([...reported.delivered].sort((a, b) => a - b), fails ? [ids[0]] : ids)
        for (const id of ids.slice(1)) assert.equal((await rowOf(id))?.status, fails ? 'pending' : 'delivered', 'not acknowledged: back once the lease lapses')
      }
      assert.equal(reported.outboxErrors.length, 3, 'each row the failed write held, reported')
    })

    it('hands every due row to the handler in order, batch after batch, acknowledges each, then sleeps until the poll', async (t) => {
      const handled: Array<[number, number]> = []
      const { consumer, clock, outbox, name, reported, newEvent, rowOf, runOnce } = setup(t, event => { handled.push([event.id, event.attempts]) }, { batchSize: 2 })
      assert.equal(consumer.state, 'idle')
      const ids = [await newEvent(), await newEvent(), await newEvent(), await newEvent(), await newEvent()]
      await runOnce()
      assert.deepEqual(handled, ids.map(id => [id, 1]))
      assert.deepEqual(reported.delivered, ids)
      for (const id of ids) assert.equal((await rowOf(id))?.status, 'delivered')
      assert.deepEqual(await outbox.backlog(name), { pending: 0, givenUp: 0 })
      assert.equal(consumer.state, 'sleeping')
      assert.equal(clock.pendingTimers, 1, 'one wake set: the poll')
      await newEvent()
      clock.advance(POLL_MS - 1)
      await consumer.whenIdle()
      assert.equal(handled.length, 5, 'not before the poll')
      clock.advance(1)
      await consumer.whenIdle()
      assert.equal(handled.length, 6, 'the poll finds a row another instance wrote')
    })

    it('lets `decide` read the failure: a refusal no retry changes is given up at once, a server\'s own wait is kept', async (t) => {
      class Refused extends Error {}
      const handledFirst = new Set<number>()
      const { reported, newEvent, rowOf, runOnce, now } = setup(t, event => { throw handledFirst.has(event.id) ? new Refused('no') : new Error('later') }, {
        decide: (_row, error, retry) => error instanceof Refused ? { giveUp: true } : { giveUp: false, retryInMs: Math.max(retry.delayMs(1), 5000) },
      })
      const refused = await newEvent()
      handledFirst.add(refused)
      const later = await newEvent()
      await runOnce()
      assert.deepEqual(reported.failed, [{ id: refused, attempts: 1, decision: { giveUp: true } }, { id: later, attempts: 1, decision: { giveUp: false, retryInMs: 5000 } }])
      assert.equal((await rowOf(refused))?.status, 'given_up')
      assert.deepEqual(await rowOf(later), { status: 'pending', available_at_ms: now() + 5000, attempts: 1 })
    })

    it('puts a row the handler refused back for the policy\'s delay, doubling, then hands it out again', async (t) => {
      const handled: number[] = []
      const { reported, newEvent, rowOf, runOnce, advance, now } = setup(t, event => {
        handled.push(event.attempts)
        if (event.attempts <= 2) throw new Error('the app\'s database was away')
      })
      const id = await newEvent()
      await runOnce()
      assert.deepEqual(handled, [1])
      assert.deepEqual(reported.failed, [{ id, attempts: 1, decision: { giveUp: false, retryInMs: 1000 } }])
      assert.deepEqual(await rowOf(id), { status: 'pending', available_at_ms: now() + 1000, attempts: 1 })
      await advance(999)
      assert.deepEqual(handled, [1], 'not before its time')
      await advance(1)
      assert.deepEqual(handled, [1, 2], 'woken by its own retry: nothing else happened')
      assert.deepEqual(reported.failed.at(-1), { id, attempts: 2, decision: { giveUp: false, retryInMs: 2000 } })
      await advance(1999)
      assert.deepEqual(handled, [1, 2])
      await advance(1)
      assert.deepEqual(handled, [1, 2, 3])
      assert.deepEqual(reported.delivered, [id])
      assert.equal((await rowOf(id))?.status, 'delivered')
    })

    it('gives a row up once its last attempt failed: never handed out again, counted apart', async (t) => {
      let calls = 0
      const { outbox, name, reported, newEvent, rowOf, runOnce, advance, clock } = setup(t, () => {
        calls++
        throw new Error('refused')
      }, { schedule: { ...SCHEDULE, maxAttempts: 2 } })
      const id = await newEvent()
      await runOnce()
      await advance(1000)
      assert.equal(calls, 2)
      assert.deepEqual(reported.failed.map(failure => failure.decision), [{ giveUp: false, retryInMs: 1000 }, { giveUp: true }])
      assert.equal((await rowOf(id))?.status, 'given_up')
      assert.deepEqual(await outbox.backlog(name), { pending: 0, givenUp: 1 })
      assert.equal(clock.pendingTimers, 1, 'asleep until the poll: nothing is due')
      await advance(10 * POLL_MS)
      assert.equal(calls, 2, 'never again')
      assert.deepEqual(reported.delivered, [])
    })

    it('wakes at once on wake(), even one that comes while it is finishing a pass', async (t) => {
      const handled: number[] = []
      const gate = deferred()
      const looking = deferred()
      let holdNextLook = false
      const { consumer, newEvent, runOnce, clock } = setup(t, event => { handled.push(event.id) }, {
        // The real outbox, but its look for the next due row can be held once: the moment after
        // a pass's last claim found nothing and before its sleep is set.
        outboxFor: outbox => ({
          ...delegating(outbox),
          nextDueAt: async consumer => {
            if (holdNextLook) {
              holdNextLook = false
              looking.resolve()
              await gate.promise
            }
            return outbox.nextDueAt(consumer)
          },
        }),
      })
      await runOnce()
      assert.equal(consumer.state, 'sleeping')
      const sleeping = await newEvent()
      await runOnce()
      assert.deepEqual(handled, [sleeping], 'woken from its sleep')

      holdNextLook = true
      const late = await newEvent()
      consumer.wake()
      await looking.promise
      // Written after this pass's last claim found nothing: only the wake brings it.
      const written = await newEvent()
      consumer.wake()
      gate.resolve()
      await consumer.whenIdle()
      assert.deepEqual(handled, [sleeping, late, written], 'the wake during the pass ran another pass')
      assert.equal(clock.now(), 1000, 'the clock never moved')
    })

    it('takes a row another instance claimed once that claim\'s lease lapses, sleeping until then', async (t) => {
      const handled: Array<[number, number]> = []
      const { outbox, name, newEvent, consumer, rowOf, advance, clock } = setup(t, event => { handled.push([event.id, event.attempts]) })
      const id = await newEvent()
      // Another instance claims it and dies before acknowledging.
      assert.deepEqual((await outbox.claim(name, { leaseMs: 5000 })).map(event => event.id), [id])
      consumer.wake()
      await consumer.whenIdle()
      assert.deepEqual(handled, [])
      assert.equal(clock.pendingTimers, 1)
      await advance(4999)
      assert.deepEqual(handled, [], 'still the other instance\'s')
      await advance(1)
      assert.deepEqual(handled, [[id, 2]], 'handed out again when the lease lapsed, not at the poll')
      assert.equal((await rowOf(id))?.status, 'delivered')
    })

    it('closes once the batch in hand is handled: a handler that stops on the signal has its row put back, due at once', async (t) => {
      const started = { count: 0, all: deferred() }
      const finishFirst = deferred()
      const { consumer, newEvent, rowOf, reported, now, clock } = setup(t, async (event, signal) => {
        if (++started.count === 2) started.all.resolve()
        if (event.id === firstId) {
          // Ignores the signal: takes its time, and succeeds.
          await finishFirst.promise
          return
        }
        await new Promise((resolve, reject) => signal.addEventListener('abort', () => reject(new Error('cut short')), { once: true }))
      }, { inParallel: true })
      const firstId = await newEvent()
      const secondId = await newEvent()
      consumer.wake()
      await started.all.promise
      assert.equal(consumer.state, 'handling')
      let closed = false
      const closing = consumer.close().then(() => { closed = true })
      await turns()
      assert.equal(consumer.state, 'closed')
      assert.equal(closed, false, 'waits for the first row, still in hand')
      finishFirst.resolve()
      await closing
      assert.deepEqual(reported.delivered, [firstId])
      assert.deepEqual(reported.putBack, [secondId])
      assert.deepEqual(reported.failed, [], 'cut short is not a failure')
      assert.deepEqual(await rowOf(secondId), { status: 'pending', available_at_ms: now(), attempts: 1 })
      assert.equal(clock.pendingTimers, 0, 'no wake left set')
      await newEvent()
      consumer.wake()
      await consumer.whenIdle()
      assert.equal(started.count, 2, 'closed: nothing more is handed out')
    })

    it('puts back, unhandled, the rows of a batch it had not come to when it closed', async (t) => {
      const inHand = deferred()
      const release = deferred()
      const handled: number[] = []
      const { consumer, newEvent, rowOf, now } = setup(t, async event => {
        handled.push(event.id)
        inHand.resolve()
        await release.promise
      })
      const ids = [await newEvent(), await newEvent(), await newEvent()]
      consumer.wake()
      await inHand.promise
      const closing = consumer.close()
      release.resolve()
      await closing
      assert.deepEqual(handled, [ids[0]], 'one after the other: the first only')
      assert.equal((await rowOf(ids[0] as number))?.status, 'delivered')
      for (const id of ids.slice(1)) assert.deepEqual(await rowOf(id), { status: 'pending', available_at_ms: now(), attempts: 1 })
    })

    it('reports an outbox that fails and looks again at the poll', async (t) => {
      const handled: number[] = []
      let failures = 1
      const { consumer, newEvent, reported, advance } = setup(t, event => { handled.push(event.id) }, {
        outboxFor: outbox => ({
          ...delegating(outbox),
          claim: async (consumer, options) => {
            if (failures-- > 0) throw new Error('connection terminated')
            return outbox.claim(consumer, options)
          },
        }),
      })
      const id = await newEvent()
      consumer.wake()
      await consumer.whenIdle()
      assert.deepEqual(reported.outboxErrors.map(err => (err as Error).message), ['connection terminated'])
      assert.deepEqual(handled, [])
      await advance(POLL_MS - 1)
      assert.deepEqual(handled, [])
      await advance(1)
      assert.deepEqual(handled, [id])
    })
  })
}
