import assert from 'node:assert/strict'
import type { IncomingMessage } from 'node:http'
import { describe, it } from 'node:test'
import { RateLimiter, parseWindow } from '../../src/rate-limiter.js'

describe('RateLimiter', () => {
  it('allows max requests per client and window, then denies until the window ends', () => {
    let now = 0
    const limiter = new RateLimiter(2, 10_000, () => now)
    assert.deepEqual(limiter.take('a'), { allowed: true, remaining: 1, resetSeconds: 10 })
    now = 2500
    assert.deepEqual(limiter.take('a'), { allowed: true, remaining: 0, resetSeconds: 8 })
    assert.deepEqual(limiter.take('a'), { allowed: false, remaining: 0, resetSeconds: 8 })
    assert.equal(limiter.take('b').allowed, true, 'clients are counted apart')
    now = 9999
    assert.deepEqual(limiter.take('a'), { allowed: false, remaining: 0, resetSeconds: 1 })
    now = 10_000
    assert.deepEqual(limiter.take('a'), { allowed: true, remaining: 1, resetSeconds: 10 }, 'a new window')
  })

  it('counts a request once, however many layers decide on it', () => {
    const limiter = new RateLimiter(5, 60_000)
    const request = {} as IncomingMessage
    const first = limiter.decide(request, 'a')
    assert.equal(first.remaining, 4)
    RateLimiter.remember(request, first)
    assert.equal(limiter.decide(request, 'a'), first)
    assert.equal(limiter.decide({} as IncomingMessage, 'a').remaining, 3, 'another request counts')
  })
})

describe('parseWindow', () => {
  it('reads RATE_LIMIT_WINDOW: milliseconds or a number with a unit', () => {
    assert.equal(parseWindow('60000'), 60_000)
    assert.equal(parseWindow('1 minute'), 60_000)
    assert.equal(parseWindow('30 seconds'), 30_000)
    assert.equal(parseWindow('30s'), 30_000)
    assert.equal(parseWindow('500 ms'), 500)
    assert.equal(parseWindow('2 hours'), 7_200_000)
    assert.throws(() => parseWindow('1 fortnight'), /not a duration/)
    assert.throws(() => parseWindow('minute'), /not a duration/)
  })
})
