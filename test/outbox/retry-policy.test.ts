import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { RetryPolicy } from '../../src/outbox/retry-policy.js'

const SCHEDULE = { firstDelayMs: 1000, maxDelayMs: 300_000, jitter: 0.25 }

/** Random numbers spread over [0, 1), the highest just below 1. */
const SPREAD = [0, 0.001, 0.1, 0.25, 0.5, 0.75, 0.9, 0.999, 1 - Number.EPSILON]

describe('the retry policy', () => {
  it('doubles from the first delay up to the cap, which it keeps however many attempts failed', () => {
    const middle = new RetryPolicy(SCHEDULE, () => 0.5)
    assert.deepEqual(Array.from({ length: 11 }, (_, i) => middle.delayMs(i + 1)), [1000, 2000, 4000, 8000, 16_000, 32_000, 64_000, 128_000, 256_000, 300_000, 300_000])
    assert.equal(middle.delayMs(10_000), 300_000, 'no overflow far past the cap')
    assert.equal(middle.delayMs(0), 1000, 'an attempt count below 1 counts as the first')
  })

  it('moves each delay by up to the jitter either way, and no further', () => {
    for (const attempt of [1, 4, 9, 10, 30]) {
      const base = new RetryPolicy(SCHEDULE, () => 0.5).delayMs(attempt)
      const delays = SPREAD.map(random => new RetryPolicy(SCHEDULE, () => random).delayMs(attempt))
      for (const delay of delays) assert.ok(delay >= base * 0.75 && delay <= base * 1.25, `${delay} within a quarter of ${base}`)
      assert.equal(delays[0], base * 0.75, 'random 0: a quarter less')
      assert.equal(delays.at(-1), base * 1.25, 'random just below 1: a quarter more, rounded')
      assert.deepEqual([...delays].sort((a, b) => a - b), delays, 'a higher random number never gives a shorter delay')
    }
    assert.deepEqual(SPREAD.map(random => new RetryPolicy({ ...SCHEDULE, jitter: 0 }, () => random).delayMs(3)), SPREAD.map(() => 4000), 'no jitter: the schedule itself')
  })

  it('asks a new random number for each delay', () => {
    const randoms = [0, 0.5, 0.999]
    const policy = new RetryPolicy(SCHEDULE, () => randoms.shift() as number)
    assert.deepEqual([policy.delayMs(2), policy.delayMs(2), policy.delayMs(2)], [1500, 2000, 2499])
  })

  it('gives up once the last attempt failed, and never without maxAttempts', () => {
    const limited = new RetryPolicy({ ...SCHEDULE, maxAttempts: 3 }, () => 0.5)
    assert.deepEqual([1, 2, 3, 4].map(attempts => limited.afterFailure(attempts)), [
      { giveUp: false, retryInMs: 1000 },
      { giveUp: false, retryInMs: 2000 },
      { giveUp: true },
      { giveUp: true },
    ])
    const unlimited = new RetryPolicy(SCHEDULE, () => 0.5)
    assert.deepEqual(unlimited.afterFailure(1_000_000), { giveUp: false, retryInMs: 300_000 })
  })

  it('refuses a schedule that makes no sense', () => {
    assert.throws(() => new RetryPolicy({ ...SCHEDULE, firstDelayMs: -1 }), RangeError)
    assert.throws(() => new RetryPolicy({ ...SCHEDULE, maxDelayMs: 999 }), RangeError)
    assert.throws(() => new RetryPolicy({ ...SCHEDULE, jitter: 1 }), RangeError)
    assert.throws(() => new RetryPolicy({ ...SCHEDULE, jitter: -0.1 }), RangeError)
    assert.throws(() => new RetryPolicy({ ...SCHEDULE, maxAttempts: 0 }), RangeError)
    assert.throws(() => new RetryPolicy({ ...SCHEDULE, maxAttempts: 2.5 }), RangeError)
  })
})
