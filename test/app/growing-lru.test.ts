import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { growingLru } from '../../src/growing-lru.js'

describe('growingLru', () => {
  it('holds at most its entries, dropping the least recently used', () => {
    const cache = growingLru<string, number>(3)
    for (const key of ['a', 'b', 'c']) cache.set(key, 1)
    cache.get('a')
    cache.set('d', 1)
    assert.deepEqual([...cache.keys()].sort(), ['a', 'c', 'd'])
    assert.equal(cache.size, 3)
    assert.equal(cache.maxSize, 3)
  })

  it('allocates nothing for the entries it does not hold yet', () => {
    // lru-cache's `max` would size its storage for every entry at once.
    assert.equal(growingLru(100_000).max, 0)
  })

  it('takes lru-cache\'s other options, a time to live among them', () => {
    // Not from 0: lru-cache takes a start time of 0 for none.
    let now = 5000
    const cache = growingLru<string, number>(10, { ttl: 1000, ttlResolution: 0, perf: { now: () => now } })
    cache.set('a', 1)
    now = 5999
    assert.equal(cache.get('a'), 1)
    now = 6001
    assert.equal(cache.get('a'), undefined)
  })
})
