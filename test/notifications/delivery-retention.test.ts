/**
 * The deliveries' retention on its own, over a store that records what it is asked, on a manual
 * clock: a run at start and one every interval, batches until one comes back short with a turn
 * of the event loop between two, what it reports, a failed run tried again at the next interval,
 * and close() waiting for the statement in hand and starting no other.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { DeliveryRetention, RETENTION_BATCH_SIZE, RETENTION_INTERVAL_MS } from '../../src/notifications/delivery-retention.js'
import { manualClock } from '../helpers/manual-clock.js'

const EPOCH = Date.parse('2026-11-29T12:00:00.000Z')
const RETENTION_MS = 30 * 86_400_000

/** A store whose pruneSettled answers from `answers` in turn (a number deleted, or an error thrown), recording each call. */
function fakeStore (answers: Array<number | Error>) {
  const calls: Array<{ beforeMs: number, limit: number }> = []
  return {
    calls,
    async pruneSettled (beforeMs: number, limit: number): Promise<number> {
      calls.push({ beforeMs, limit })
      const answer = answers.shift() ?? 0
      if (answer instanceof Error) throw answer
      return answer
    },
  }
}

/** Lets the run's promises and its turns of the event loop go by: a run over the fake store takes a few turns, and this many more than any here. */
async function settle (): Promise<void> {
  for (let turn = 0; turn < 20; turn++) await new Promise(resolve => setImmediate(resolve))
}

describe('the deliveries\' retention', () => {
  it('runs at start, then every ten minutes, deleting batch after batch of what is past the retention until one comes back short', async () => {
    const clock = manualClock()
    const store = fakeStore([RETENTION_BATCH_SIZE, RETENTION_BATCH_SIZE, 120])
    const pruned: number[] = []
    const retention = new DeliveryRetention({ store, retentionMs: RETENTION_MS, now: () => EPOCH + clock.now(), timers: clock.timers, onPruned: deleted => pruned.push(deleted) })
    retention.start()
    clock.advance(0)
    await settle()
    const cutoff = EPOCH + 1000 - RETENTION_MS
    assert.deepEqual(store.calls, Array.from({ length: 3 }, () => ({ beforeMs: cutoff, limit: 500 })))
    assert.deepEqual(pruned, [1120], 'one report per run, with its count')

    assert.equal(RETENTION_INTERVAL_MS, 600_000)
    clock.advance(RETENTION_INTERVAL_MS - 1)
    await settle()
    assert.equal(store.calls.length, 3, 'not before the interval')
    clock.advance(1)
    await settle()
    assert.deepEqual(store.calls.slice(3), [{ beforeMs: cutoff + RETENTION_INTERVAL_MS, limit: 500 }])
    assert.deepEqual(pruned, [1120], 'a run that deleted nothing is not reported')
    await retention.close()
    assert.equal(clock.pendingTimers, 0)
  })

  it('gives the event loop a turn between two statements', async () => {
    const order: string[] = []
    const store = {
      async pruneSettled (): Promise<number> {
        order.push('statement')
        setImmediate(() => order.push('another callback'))
        return order.filter(entry => entry === 'statement').length < 3 ? 10 : 0
      },
    }
    const retention = new DeliveryRetention({ store, retentionMs: RETENTION_MS, batchSize: 10 })
    assert.equal(await retention.runOnce(), 20)
    assert.deepEqual(order.slice(0, 4), ['statement', 'another callback', 'statement', 'another callback'])
  })

  it('reports a failed run and tries again at the next interval', async () => {
    const clock = manualClock()
    const failure = new Error('the database is gone')
    const store = fakeStore([failure, 7])
    const errors: unknown[] = []
    const pruned: number[] = []
    const retention = new DeliveryRetention({ store, retentionMs: RETENTION_MS, intervalMs: 60_000, now: () => EPOCH + clock.now(), timers: clock.timers, onError: error => errors.push(error), onPruned: deleted => pruned.push(deleted) })
    retention.start()
    clock.advance(0)
    await settle()
    assert.deepEqual(errors, [failure])
    clock.advance(60_000)
    await settle()
    assert.deepEqual(pruned, [7])
    await retention.close()
  })

  it('close() waits for the statement in hand and starts no other, nor another run', async () => {
    const clock = manualClock()
    let release: (count: number) => void = () => {}
    let calls = 0
    const store = {
      pruneSettled (): Promise<number> {
        calls++
        return new Promise<number>(resolve => { release = resolve })
      },
    }
    const pruned: number[] = []
    const retention = new DeliveryRetention({ store, retentionMs: RETENTION_MS, batchSize: 10, timers: clock.timers, onPruned: deleted => pruned.push(deleted) })
    retention.start()
    clock.advance(0)
    await settle()
    assert.equal(calls, 1)
    let closed = false
    const closing = retention.close().then(() => { closed = true })
    await settle()
    assert.equal(closed, false, 'the statement in hand is waited for')
    release(10)
    await closing
    assert.equal(calls, 1, 'a full batch, yet no statement after close()')
    assert.deepEqual(pruned, [10], 'what it deleted is still reported')
    clock.advance(RETENTION_INTERVAL_MS * 2)
    await settle()
    assert.equal(calls, 1, 'no run after close()')
    assert.equal(clock.pendingTimers, 0)
  })
})
