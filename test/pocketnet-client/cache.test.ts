import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ResultCache, type CacheOutcome } from '../../packages/pocketnet-client/cache.js'

function fakeClock () {
  let now = 1000
  return { perf: { now: () => now }, advance (ms: number) { now += ms } }
}

function counter<T> (value: T, bytes = 10) {
  const loader = async () => {
    loader.calls++
    return { value, bytes }
  }
  loader.calls = 0
  return loader
}

describe('ResultCache', () => {
  it('answers repeats from memory until the time to live ends', async () => {
    const clock = fakeClock()
    const outcomes: CacheOutcome[] = []
    const cache = new ResultCache({ ttlMs: { search: 30_000 }, maxEntries: 100, maxBytes: 10_000, perf: clock.perf, onLookup: (_m, outcome) => outcomes.push(outcome) })
    const load = counter({ results: [] })
    const key = ResultCache.key('search', ['a', 'posts'])
    await cache.get('search', key, load)
    await cache.get('search', key, load)
    assert.equal(load.calls, 1)
    clock.advance(29_999)
    await cache.get('search', key, load)
    assert.equal(load.calls, 1)
    clock.advance(2)
    await cache.get('search', key, load)
    assert.equal(load.calls, 2)
    assert.deepEqual(outcomes, ['miss', 'hit', 'hit', 'miss'])
  })

  it('shares one load between identical calls in flight, cached or not', async () => {
    for (const ttl of [0, 5000]) {
      const cache = new ResultCache({ ttlMs: { search: ttl }, maxEntries: 100, maxBytes: 10_000 })
      const load = counter('v')
      const values = await Promise.all(Array.from({ length: 100 }, () => cache.get('search', 'k', load)))
      assert.equal(load.calls, 1, `ttl ${ttl}`)
      assert.ok(values.every(value => value === 'v'))
    }
  })

  it('gives a failure to every waiter and keeps nothing', async () => {
    const cache = new ResultCache({ ttlMs: { search: 5000 }, maxEntries: 100, maxBytes: 10_000 })
    let calls = 0
    const failing = async () => {
      calls++
      throw new Error('node down')
    }
    const results = await Promise.allSettled([cache.get('search', 'k', failing), cache.get('search', 'k', failing)])
    assert.deepEqual(results.map(result => result.status), ['rejected', 'rejected'])
    assert.equal(calls, 1)
    assert.equal(cache.size, 0)
    const load = counter('v')
    assert.equal(await cache.get('search', 'k', load), 'v')
  })

  it('does not cache methods without a time to live', async () => {
    const cache = new ResultCache({ ttlMs: { search: 5000 }, maxEntries: 100, maxBytes: 10_000 })
    const load = counter('v')
    await cache.get('getaddressinfo', 'k', load)
    await cache.get('getaddressinfo', 'k', load)
    assert.equal(load.calls, 2)
    assert.equal(cache.size, 0)
  })

  it('stays within its entry and byte bounds', async () => {
    const cache = new ResultCache({ ttlMs: { search: 60_000 }, maxEntries: 50, maxBytes: 1000 })
    for (let i = 0; i < 500; i++) await cache.get('search', `k${i}`, counter(i, 30))
    assert.ok(cache.size <= 33, `${cache.size} entries`)
    assert.ok(cache.bytes <= 1000, `${cache.bytes} bytes`)
    const small = new ResultCache({ ttlMs: { search: 60_000 }, maxEntries: 50, maxBytes: 1_000_000 })
    for (let i = 0; i < 500; i++) await small.get('search', `k${i}`, counter(i, 1))
    assert.equal(small.size, 50)
  })

  it('drops the answers that depend on the chain tip on a new block, and keeps the others', async () => {
    const cache = new ResultCache({ ttlMs: { getnodeinfo: 5000, getuserprofile: 60_000, search: 30_000 }, maxEntries: 100, maxBytes: 10_000 })
    for (const method of ['getnodeinfo', 'getuserprofile', 'search']) await cache.get(method, ResultCache.key(method, []), counter(method))
    cache.onNewBlock()
    assert.equal(cache.size, 1)
    const load = counter('x')
    assert.equal(await cache.get('search', ResultCache.key('search', []), load), 'search')
    assert.equal(load.calls, 0)
  })

  it('answers the callers of a load that a new block overtook, without keeping a tip answer from before it', async () => {
    const cache = new ResultCache({ ttlMs: { getuserprofile: 60_000, search: 30_000 }, maxEntries: 100, maxBytes: 10_000 })
    const releases: Array<() => void> = []
    const slow = <T>(value: T) => () => new Promise<{ value: T, bytes: number }>(resolve => releases.push(() => resolve({ value, bytes: 1 })))
    const profile = cache.get('getuserprofile', 'p', slow('old profile'))
    const search = cache.get('search', 's', slow('results'))
    cache.onNewBlock()
    for (const release of releases) release()
    assert.equal(await profile, 'old profile')
    assert.equal(await search, 'results')
    // The search answer does not follow the tip and is kept; the profile is asked again.
    assert.equal(cache.size, 1)
    const load = counter('new profile')
    assert.equal(await cache.get('getuserprofile', 'p', load), 'new profile')
    assert.equal(load.calls, 1)
  })

  it('answers a stale entry at once while one refresh runs, for as long again as its time to live', async () => {
    const clock = fakeClock()
    const outcomes: CacheOutcome[] = []
    const cache = new ResultCache({ ttlMs: { search: 1000 }, maxEntries: 100, maxBytes: 10_000, serveStale: true, perf: clock.perf, onLookup: (_m, outcome) => outcomes.push(outcome) })
    let version = 0
    let release = (): void => {}
    const load = async () => {
      version++
      if (version > 1) await new Promise<void>(resolve => { release = resolve })
      return { value: `v${version}`, bytes: 1 }
    }
    assert.equal(await cache.get('search', 'k', load), 'v1')
    clock.advance(1001)
    // Stale: the old answer at once, and one refresh for any number of callers.
    assert.deepEqual(await Promise.all([cache.get('search', 'k', load), cache.get('search', 'k', load)]), ['v1', 'v1'])
    assert.equal(version, 2)
    release()
    await new Promise(resolve => setImmediate(resolve))
    assert.equal(await cache.get('search', 'k', load), 'v2')
    assert.deepEqual(outcomes, ['miss', 'stale', 'stale', 'hit'])
    // Past twice the time to live with no refresh, the entry is gone: the caller waits.
    clock.advance(2001)
    const waiting = cache.get('search', 'k', load)
    release()
    assert.equal(await waiting, 'v3')
    assert.equal(outcomes.at(-1), 'miss')
  })

  it('keeps serving the stale answer when its refresh fails, and caches no failure', async () => {
    const clock = fakeClock()
    const cache = new ResultCache({ ttlMs: { search: 1000 }, maxEntries: 100, maxBytes: 10_000, serveStale: true, perf: clock.perf })
    assert.equal(await cache.get('search', 'k', counter('v1')), 'v1')
    clock.advance(1500)
    let failures = 0
    const failing = async () => {
      failures++
      throw new Error('node down')
    }
    assert.equal(await cache.get('search', 'k', failing), 'v1')
    await new Promise(resolve => setImmediate(resolve))
    assert.equal(await cache.get('search', 'k', failing), 'v1')
    await new Promise(resolve => setImmediate(resolve))
    assert.equal(failures, 2)
    clock.advance(600)
    await assert.rejects(cache.get('search', 'k', failing), /node down/)
  })

  it('serves no stale answer without serveStale', async () => {
    const clock = fakeClock()
    const cache = new ResultCache({ ttlMs: { search: 1000 }, maxEntries: 100, maxBytes: 10_000, perf: clock.perf })
    await cache.get('search', 'k', counter('v1'))
    clock.advance(1001)
    assert.equal(await cache.get('search', 'k', counter('v2')), 'v2')
  })

  describe('reuse(answer), for a layer that keeps a rendering of an answer', () => {
    it('is true while the answer is the fresh cached one, and counts a hit', async () => {
      const clock = fakeClock()
      const outcomes: CacheOutcome[] = []
      const cache = new ResultCache({ ttlMs: { search: 1000 }, maxEntries: 100, maxBytes: 10_000, perf: clock.perf, onLookup: (_m, outcome) => outcomes.push(outcome) })
      const answer = await cache.get('search', ResultCache.key('search', ['a']), counter({ results: [] }))
      assert.equal(cache.reuse(answer), true)
      clock.advance(999)
      assert.equal(cache.reuse(answer), true)
      assert.deepEqual(outcomes, ['miss', 'hit', 'hit'])
      clock.advance(1)
      assert.equal(cache.reuse(answer), false, 'past its time to live')
      assert.deepEqual(outcomes, ['miss', 'hit', 'hit'])
    })

    it('is false once the answer is stale, even while stale answers are still served', async () => {
      const clock = fakeClock()
      const cache = new ResultCache({ ttlMs: { search: 1000 }, maxEntries: 100, maxBytes: 10_000, serveStale: true, perf: clock.perf })
      const key = ResultCache.key('search', ['a'])
      const answer = await cache.get('search', key, counter({ results: [] }))
      clock.advance(1500)
      assert.equal(cache.reuse(answer), false)
      // The refresh replaces the answer: the old one is never fresh again.
      const refresh = counter({ results: ['new'] })
      assert.equal(await cache.get('search', key, refresh), answer, 'stale answer served while refreshing')
      await new Promise(resolve => setImmediate(resolve))
      assert.equal(refresh.calls, 1)
      const renewed = await cache.get('search', key, refresh)
      assert.notEqual(renewed, answer)
      assert.equal(cache.reuse(renewed), true)
      assert.equal(cache.reuse(answer), false)
    })

    it('is false once the answer is dropped: new block (tip methods), eviction, clear', async () => {
      const cache = new ResultCache({ ttlMs: { getnodeinfo: 60_000, search: 60_000 }, maxEntries: 2, maxBytes: 10_000 })
      const tip = await cache.get('getnodeinfo', ResultCache.key('getnodeinfo', []), counter({ height: 1 }))
      const found = await cache.get('search', ResultCache.key('search', ['a']), counter({ results: [] }))
      cache.onNewBlock()
      assert.equal(cache.reuse(tip), false, 'getnodeinfo follows the tip')
      assert.equal(cache.reuse(found), true, 'search does not')
      await cache.get('search', ResultCache.key('search', ['b']), counter({ results: [] }))
      await cache.get('search', ResultCache.key('search', ['c']), counter({ results: [] }))
      assert.equal(cache.reuse(found), false, 'evicted by two newer entries')
      const last = await cache.get('search', ResultCache.key('search', ['d']), counter({ results: [] }))
      cache.clear()
      assert.equal(cache.reuse(last), false)
    })

    it('is false for answers it never kept: uncached methods, other objects', async () => {
      const cache = new ResultCache({ ttlMs: { search: 0 }, maxEntries: 100, maxBytes: 10_000 })
      const answer = await cache.get('search', ResultCache.key('search', ['a']), counter({ results: [] }))
      assert.equal(cache.reuse(answer), false)
      assert.equal(cache.reuse({}), false)
    })
  })
})
