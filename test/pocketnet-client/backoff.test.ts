/**
 * The one backoff helper, with each of its users' numbers: a schedule that changes shows here
 * first. The users' own tests (node-health, cluster's RestartPolicy, the event source's
 * reconnection) check that they still call it with these.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { backoffDelayMs, type BackoffOptions } from '../../packages/pocketnet-client/backoff.js'
import { DEFAULT_HEALTH_POLICY } from '../../packages/pocketnet-client/node-health.js'
import { REDIS_RECONNECT_BACKOFF } from '../../packages/pocketnet-client/redis/redis-link.js'
import { EVENT_SOURCE_RANGES } from '../../packages/pocketnet-client/events/source-options.js'

const schedule = (options: BackoffOptions, failures = 8): number[] => Array.from({ length: failures }, (_, i) => backoffDelayMs(i + 1, options))

describe('backoffDelayMs', () => {
  it('doubles from minMs up to maxMs, without jitter when told', () => {
    assert.deepEqual(schedule({ minMs: 100, maxMs: 1000, jitter: 'none' }, 6), [100, 200, 400, 800, 1000, 1000])
  })

  it('takes fewer failures than one for one, and never overflows however many', () => {
    const options: BackoffOptions = { minMs: 1000, maxMs: 30_000, jitter: 'none' }
    assert.equal(backoffDelayMs(0, options), 1000)
    assert.equal(backoffDelayMs(-3, options), 1000)
    assert.equal(backoffDelayMs(5000, options), 30_000)
    assert.equal(backoffDelayMs(5000, { minMs: 0, maxMs: 10, jitter: 'none' }), 0)
  })

  it('keeps half of each delay fixed and makes half random by default (equal jitter)', () => {
    const options = { minMs: 1000, maxMs: 8000 }
    assert.deepEqual(schedule({ ...options, random: () => 0 }, 5), [500, 1000, 2000, 4000, 4000])
    assert.deepEqual(schedule({ ...options, random: () => 0.5 }, 5), [750, 1500, 3000, 6000, 6000])
    assert.equal(backoffDelayMs(3, { ...options, random: () => 0.999999 }), 4000)
  })

  it('moves each delay by up to a fraction either way, around the capped delay', () => {
    const options: BackoffOptions = { minMs: 1000, maxMs: 4000, jitter: { spread: 0.25 } }
    assert.deepEqual(schedule({ ...options, random: () => 0 }, 4), [750, 1500, 3000, 3000])
    assert.deepEqual(schedule({ ...options, random: () => 0.5 }, 4), [1000, 2000, 4000, 4000])
    assert.equal(backoffDelayMs(4, { ...options, random: () => 0.999999 }), 5000)
  })

  it('grows by minMs per failure when linear', () => {
    assert.deepEqual(schedule({ minMs: 300, maxMs: 1000, growth: 'linear', jitter: 'none' }, 5), [300, 600, 900, 1000, 1000])
  })
})

describe('the schedules of the helper\'s users', () => {
  it('a node\'s circuit: from 1 s, doubling to 30 s, no jitter', () => {
    const { baseCooldownMs, maxCooldownMs } = DEFAULT_HEALTH_POLICY
    assert.deepEqual(schedule({ minMs: baseCooldownMs, maxMs: maxCooldownMs, jitter: 'none' }, 7), [1000, 2000, 4000, 8000, 16_000, 30_000, 30_000])
  })

  it('a dead worker\'s replacement: from 100 ms, doubling to 10 s, no jitter', () => {
    assert.deepEqual(schedule({ minMs: 100, maxMs: 10_000, jitter: 'none' }), [100, 200, 400, 800, 1600, 3200, 6400, 10_000])
  })

  it('the Redis connection: 100 ms more per attempt, then every 2 s', () => {
    assert.deepEqual(schedule(REDIS_RECONNECT_BACKOFF, 22), [...Array.from({ length: 20 }, (_, i) => 100 * (i + 1)), 2000, 2000])
  })

  it('the node event source\'s socket by default: from 1 s, doubling to 60 s, half of it random', () => {
    const options = { minMs: EVENT_SOURCE_RANGES.reconnectMinMs.default, maxMs: EVENT_SOURCE_RANGES.reconnectMaxMs.default }
    assert.deepEqual(schedule({ ...options, random: () => 0 }), [500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000])
    assert.deepEqual(schedule({ ...options, random: () => 0.999999 }), [1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000])
  })

  it('the payments\' retries: from 1 s, doubling to 5 min, half of it random', () => {
    const options = { minMs: 1000, maxMs: 300_000 }
    assert.deepEqual(schedule({ ...options, random: () => 0.5 }, 10), [750, 1500, 3000, 6000, 12_000, 24_000, 48_000, 96_000, 192_000, 225_000])
  })

  it('a webhook\'s: from a minute, doubling to 8 h, moved by up to a quarter either way', () => {
    const webhook: BackoffOptions = { minMs: 60_000, maxMs: 8 * 3_600_000, jitter: { spread: 0.25 } }
    const minutes = [1, 2, 4, 8, 16, 32, 64, 128, 256, 480, 480, 480]
    assert.deepEqual(schedule({ ...webhook, random: () => 0.5 }, 12), minutes.map(each => each * 60_000))
    assert.deepEqual(schedule({ ...webhook, random: () => 0 }, 12), minutes.map(each => each * 45_000))
    assert.equal(backoffDelayMs(12, { ...webhook, random: () => 0.999999 }), Math.round(480 * 60_000 * (0.75 + 0.5 * 0.999999)))
  })
})
