import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Cancel } from '../../packages/pocketnet-client/cancel.js'
import { NODE_THREADS, NoSlot, NodeSlots } from '../../packages/pocketnet-client/node-slots.js'
import { manualClock, type ManualClock } from '../helpers/manual-clock.js'

/** Far enough that no waiter's own timer fires while a test runs. */
const FAR = 600_000

function fill (slots: NodeSlots): void {
  while (slots.tryAcquire()) { /* takes every free slot */ }
}

/**
 * Slots on a manual clock, every one taken, the node's answer time known: one call answered in
 * `answerMs`, its slot taken again.
 */
function busy (max: number, answerMs: number): { clock: ManualClock, slots: NodeSlots } {
  const clock = manualClock()
  const slots = new NodeSlots(max, clock.now)
  fill(slots)
  slots.release('search', answerMs)
  assert.equal(slots.tryAcquire(), true)
  return { clock, slots }
}

/** Ends a test's waiting calls. */
async function drain (slots: NodeSlots, waiters: Array<Promise<unknown>>): Promise<void> {
  slots.clear(new Error('end'))
  await Promise.allSettled(waiters)
}

/** Starts `count` waiters; `order` gets each one's label as it is given a slot. */
function wait (slots: NodeSlots, labels: string[], deadline: number, order: string[]): Array<Promise<void>> {
  return labels.map(label => slots.acquire(deadline, new Cancel()).then(() => { order.push(label) }))
}

describe('node slots', () => {
  it('give a node as many calls at once as it has threads, then queue', async () => {
    const clock = manualClock()
    const slots = new NodeSlots(16, clock.now)
    for (let i = 0; i < NODE_THREADS; i++) assert.equal(slots.tryAcquire(), true)
    assert.equal(slots.tryAcquire(), false)
    assert.equal(slots.free, false)
    const order: string[] = []
    const waiting = wait(slots, ['a', 'b'], clock.now() + FAR, order)
    assert.equal(slots.queued, 2)
    slots.release('search', 100)
    await waiting[0]
    assert.deepEqual(order, ['a'])
    assert.equal(slots.inFlight, NODE_THREADS)
    slots.release('search', 100)
    await Promise.all(waiting)
    assert.deepEqual(order, ['a', 'b'])
  })

  it('start at, and never go below, the threads the node is said to have', () => {
    const clock = manualClock()
    const slots = new NodeSlots(16, clock.now, 8)
    fill(slots)
    assert.equal(slots.inFlight, 8)
    for (let i = 0; i < 40; i++) {
      slots.release('search', i === 0 ? 100 : 1000)
      assert.equal(slots.tryAcquire(), true)
    }
    assert.equal(slots.limit, 8, 'answers ten times slower do not take it below')
    assert.equal(new NodeSlots(2, clock.now, 8).limit, 2, 'nor above the connections')
  })

  it('serve the earliest deadline first', async () => {
    const clock = manualClock()
    const slots = new NodeSlots(16, clock.now)
    fill(slots)
    const order: string[] = []
    const late = wait(slots, ['late'], clock.now() + FAR, order)
    const early = wait(slots, ['early'], clock.now() + FAR / 2, order)
    slots.release('search', 100)
    slots.release('search', 100)
    await Promise.all([...late, ...early])
    assert.deepEqual(order, ['early', 'late'])
  })

  it('raise the limit by one per round of answers at the unloaded speed while calls wait, up to the maximum', async () => {
    const clock = manualClock()
    const slots = new NodeSlots(6, clock.now)
    fill(slots)
    const waiters = Array.from({ length: 40 }, () => slots.acquire(clock.now() + FAR, new Cancel()))
    const limits: number[] = []
    for (let i = 0; i < 30; i++) {
      slots.release('search', 100)
      limits.push(slots.limit)
    }
    assert.deepEqual(limits.slice(0, 5), [4, 4, 4, 5, 5], 'one more after four answers')
    assert.equal(Math.max(...limits), 6)
    await drain(slots, waiters)
  })

  it('do not raise the limit while no call waits: a limit nothing presses against proves nothing', () => {
    const clock = manualClock()
    const slots = new NodeSlots(16, clock.now)
    for (let i = 0; i < 50; i++) {
      assert.equal(slots.tryAcquire(), true)
      slots.release('search', 100)
    }
    assert.equal(slots.limit, NODE_THREADS)
  })

  it('lower the limit when answers slow down (the node queues our calls), never below its threads', async () => {
    const clock = manualClock()
    const slots = new NodeSlots(16, clock.now)
    fill(slots)
    const waiters = Array.from({ length: 200 }, () => slots.acquire(clock.now() + FAR, new Cancel()))
    for (let i = 0; i < 60; i++) slots.release('search', 100)
    const raised = slots.limit
    assert.ok(raised > NODE_THREADS + 2, `raised to ${raised}`)
    // Now each answer takes three times as long: the node holds two thirds of our calls in its queue.
    for (let i = 0; i < 10; i++) slots.release('search', 300)
    assert.ok(slots.limit < raised, `lowered from ${raised} to ${slots.limit}`)
    for (let i = 0; i < 100; i++) slots.release('search', 300)
    assert.equal(slots.limit, NODE_THREADS)
    await drain(slots, waiters)
  })

  it('wait twice as long before a step up that had to be taken back, so that a node at its knee is not pushed past it every other round', async () => {
    const clock = manualClock()
    const slots = new NodeSlots(16, clock.now)
    fill(slots)
    const waiters = Array.from({ length: 1000 }, () => slots.acquire(clock.now() + FAR, new Cancel()))
    /** Answers taking `ms` until the limit moves; how many it took. */
    const answersUntilStep = (ms: number): number => {
      const before = slots.limit
      for (let count = 1; count < 500; count++) {
        slots.release('search', ms)
        if (slots.limit !== before) return count
      }
      throw new Error(`the limit stayed at ${before}`)
    }
    // The node serves 4 at once in 100 ms: a fifth call waits 100 ms in its queue.
    assert.equal(answersUntilStep(100), NODE_THREADS, 'a first step up after one round')
    assert.equal(slots.limit, NODE_THREADS + 1)
    answersUntilStep(200)
    assert.equal(slots.limit, NODE_THREADS)
    const second = answersUntilStep(100)
    assert.ok(second >= 2 * NODE_THREADS, `the second step up after ${second} answers`)
    answersUntilStep(200)
    const third = answersUntilStep(100)
    assert.ok(third >= 4 * NODE_THREADS, `the third step up after ${third} answers`)
    await drain(slots, waiters)
  })

  it('judge each method by its own unloaded speed', async () => {
    const clock = manualClock()
    const slots = new NodeSlots(16, clock.now)
    fill(slots)
    const waiters = Array.from({ length: 100 }, () => slots.acquire(clock.now() + FAR, new Cancel()))
    // A cheap method's fast answers must not make a dearer method's normal answers look queued.
    for (let i = 0; i < 30; i++) {
      slots.release('getnodeinfo', 2)
      slots.release('search', 100)
    }
    assert.ok(slots.limit > NODE_THREADS, `limit ${slots.limit}`)
    await drain(slots, waiters)
  })

  it('let a burst wait as long as its deadline allows', async () => {
    const { clock, slots } = busy(16, 1000)
    const waiters = Array.from({ length: 10 }, () => slots.acquire(clock.now() + FAR, new Cancel()))
    const wait = slots.expectedWait(clock.now() + 5000)
    assert.ok(wait !== undefined)
    // This call is the 11th waiting: counting on the limit growing by one per answer round, it
    // goes in the second round (5 calls, then 6).
    assert.equal(wait.waitMs, 2 * 1000)
    assert.equal(wait.allowedMs, 5000 - 1000)
    await drain(slots, waiters)
  })

  it('once the queue has stood longer than one answer and the limit is the node\'s, let a call wait at most half an answer, at the measured rate', async () => {
    // A fixed limit (threads = connections): the node's knee is known.
    const { clock, slots } = busy(NODE_THREADS, 100)
    const waiters = Array.from({ length: 3 }, () => slots.acquire(clock.now() + FAR, new Cancel()))
    slots.release('search', 300)
    assert.equal(slots.answerMs, 140)
    clock.advance(141)
    // Two calls ahead and this one, at 4 calls per 140 ms.
    assert.deepEqual(slots.expectedWait(clock.now() + 5000), { waitMs: 105, allowedMs: 70 })
    assert.equal(slots.snapshot().congested, true)
    await drain(slots, waiters)
  })

  it('stay congested for a while after the queue empties, so that a sustained overload is not taken for a new burst', async () => {
    // A fixed limit (threads = connections): the node's knee is known.
    const { clock, slots } = busy(NODE_THREADS, 100)
    slots.release('search', 300)
    assert.equal(slots.tryAcquire(), true)
    const waiting = slots.acquire(clock.now() + FAR, new Cancel())
    assert.equal(slots.snapshot().congested, false, 'a queue that just formed is a burst')
    clock.advance(slots.answerMs + 1)
    assert.equal(slots.snapshot().congested, true)
    slots.release('search', 100)
    await waiting
    assert.equal(slots.queued, 0)
    clock.advance(500)
    assert.equal(slots.snapshot().congested, true)
    // The hold: 1 s, or 10 answer times (here 1.4 s) after the queue last stood.
    clock.advance(1000)
    assert.equal(slots.snapshot().congested, false)
  })

  it('do not take a queue for an overload while the limit still grows towards what the node takes', () => {
    const clock = manualClock()
    const slots = new NodeSlots(64, clock.now)
    fill(slots)
    const waiters = Array.from({ length: 40 }, () => slots.acquire(clock.now() + FAR, new Cancel()))
    for (let round = 0; round < 5; round++) {
      clock.advance(20)
      for (let i = 0; i < slots.limit; i++) slots.release('search', 20)
      assert.equal(slots.snapshot().congested, false, `round ${round}: the limit is ${slots.limit} and still growing`)
    }
    assert.ok(slots.limit > NODE_THREADS + 3)
    slots.clear(new Error('end'))
    return Promise.allSettled(waiters).then(() => {})
  })

  it('refuse a waiting call, instead of sending it, once it could no longer be answered before its deadline', async () => {
    const { clock, slots } = busy(16, 200)
    const late = slots.acquire(clock.now() + 1000, new Cancel())
    clock.advance(850)
    slots.release('search', 200)
    const refusal = await late.then(() => undefined, (err: unknown) => err)
    assert.ok(refusal instanceof NoSlot)
    assert.equal(refusal.reason, 'expired')
    assert.equal(refusal.waitedMs, 850)
    assert.equal(slots.inFlight, NODE_THREADS - 1, 'the freed slot stays free')
  })

  it('under sustained overload, refuse at once the calls at the back that would wait past their deadline', async () => {
    // A fixed limit (threads = connections): the node's knee is known.
    const { clock, slots } = busy(NODE_THREADS, 1000)
    // A burst admitted against a hoped-for limit of 16: ten calls, 4.5 s to their deadline.
    const outcomes: string[] = []
    const waiters = Array.from({ length: 10 }, (_, i) => slots.acquire(clock.now() + 4500, new Cancel())
      .then(() => { outcomes[i] = 'sent' }, (err: unknown) => { outcomes[i] = err instanceof NoSlot ? err.reason : 'other' }))
    clock.advance(1500)
    // The queue has stood longer than an answer. At the node's unloaded speed
    // (4 calls a second) the last of the 9 still waiting would be sent after 2.25 s, too late for
    // an answer by its deadline 3 s away: it is refused now, and the next one fits.
    slots.release('search', 3000)
    await new Promise(resolve => setImmediate(resolve))
    assert.deepEqual(outcomes.filter(Boolean), ['sent', 'full'])
    assert.equal(slots.queued, 8)
    clock.advance(1000)
    // 2 s left, one answer takes 1 s: of the 7 waiting after this release, 4 can be sent in time.
    slots.release('search', 1000)
    await new Promise(resolve => setImmediate(resolve))
    assert.equal(outcomes.filter(outcome => outcome === 'full').length, 4)
    assert.equal(slots.queued, 4)
    await drain(slots, waiters)
  })

  it('under sustained overload, cut the queue a burst left to what a new call may wait once calls are turned away', async () => {
    const { clock, slots } = busy(16, 100)
    // The node's knee is known: a step up had to be taken back.
    const outcomes: string[] = []
    const waiters = Array.from({ length: 12 }, (_, i) => slots.acquire(clock.now() + 5000, new Cancel())
      .then(() => { outcomes[i] = 'sent' }, (err: unknown) => { outcomes[i] = err instanceof NoSlot ? err.reason : 'other' }))
    for (let i = 0; i < 4; i++) slots.release('search', 100)
    assert.equal(slots.limit, NODE_THREADS + 1)
    while (slots.limit > NODE_THREADS) slots.release('search', 300)
    await new Promise(resolve => setImmediate(resolve))
    const waiting = slots.queued
    assert.ok(waiting > NODE_THREADS, `${waiting} waiting`)
    // A burst is not refused for waiting: only once the queue has stood and a call was turned away.
    slots.noteRefused()
    assert.equal(slots.queued, waiting)
    clock.advance(slots.answerMs + 1)
    slots.noteRefused()
    // At the measured rate (4 calls per answer time), 2 calls wait at most half an answer time.
    assert.equal(slots.queued, 2)
    await new Promise(resolve => setImmediate(resolve))
    assert.equal(outcomes.filter(outcome => outcome === 'full').length, waiting - 2)
    await drain(slots, waiters)
  })

  it('let a cancelled call leave the queue', async () => {
    const clock = manualClock()
    const slots = new NodeSlots(16, clock.now)
    fill(slots)
    const cancel = new Cancel()
    const waiting = slots.acquire(clock.now() + FAR, cancel)
    cancel.cancel('gone')
    await assert.rejects(waiting, (reason: unknown) => reason === 'gone')
    assert.equal(slots.queued, 0)
  })
})
