import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { parseWindow } from '../../src/rate-limit/window.js'
import { FixedWindowStore } from '../../src/rate-limit/store.js'
import { startApp } from '../helpers/build-app.js'
import { manualClock } from '../helpers/manual-clock.js'
import { startEmulator } from '../helpers/start-emulator.js'

describe('FixedWindowStore', () => {
  it('counts per key within a window that starts at the first request', () => {
    const clock = manualClock()
    const store = new FixedWindowStore(clock.now)
    assert.deepEqual(store.take('a', 10_000), { current: 1, ttl: 10_000 })
    clock.advance(2500)
    assert.deepEqual(store.take('a', 10_000), { current: 2, ttl: 7500 })
    assert.deepEqual(store.take('b', 10_000), { current: 1, ttl: 10_000 }, 'keys are counted apart')
    clock.advance(7499)
    assert.deepEqual(store.take('a', 10_000), { current: 3, ttl: 1 })
    clock.advance(1)
    assert.deepEqual(store.take('a', 10_000), { current: 1, ttl: 10_000 }, 'a new window')
  })

  it('answers @fastify/rate-limit through its callback, and gives a route with limits of its own a store of its own', () => {
    const store = new FixedWindowStore(() => 0)
    let result: unknown
    store.incr('a', (err, counted) => { assert.equal(err, null); result = counted }, 1000)
    assert.deepEqual(result, { current: 1, ttl: 1000 })
    const child = store.child()
    assert.deepEqual(child.take('a', 1000), { current: 1, ttl: 1000 })
    assert.deepEqual(store.take('a', 1000), { current: 2, ttl: 1000 })
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

describe('rate limiting', () => {
  it('answers 429 in the envelope with Retry-After past the limit, until the window ends', async (t) => {
    const node = await startEmulator(t)
    const clock = manualClock()
    const service = await startApp(t, { nodes: [node.url], clock: clock.now, env: { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW: '1 minute' } })
    const remaining: Array<string | null> = []
    for (let i = 0; i < 3; i++) {
      const { status, headers } = await service.get('/api/nodeinfo')
      assert.equal(status, 200)
      assert.equal(headers.get('x-ratelimit-limit'), '3')
      remaining.push(headers.get('x-ratelimit-remaining'))
    }
    assert.deepEqual(remaining, ['2', '1', '0'])
    clock.advance(20_000)
    const limited = await service.get('/api/nodeinfo')
    assert.equal(limited.status, 429)
    assert.deepEqual(limited.body, { message: 'Too many requests', error: 'Rate limit of 3 requests exceeded: retry in 40 s' })
    assert.equal(limited.headers.get('retry-after'), '40')
    assert.equal(limited.headers.get('x-ratelimit-remaining'), '0')
    assert.equal(limited.headers.get('cache-control'), 'no-store')
    clock.advance(40_000)
    const again = await service.get('/api/nodeinfo')
    assert.equal(again.status, 200, 'a new window')
    assert.equal(again.headers.get('x-ratelimit-remaining'), '2')
  })

  it('spares the probes, and limits everything else, the metrics included', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { RATE_LIMIT_MAX: '2' } })
    for (let i = 0; i < 2; i++) assert.equal((await service.get('/api/nodeinfo')).status, 200)
    assert.equal((await service.get('/metrics')).status, 429, '/metrics counts (issue #24)')
    for (let i = 0; i < 5; i++) {
      for (const path of ['/healthz', '/readyz']) {
        const { status, headers } = await service.get(path)
        assert.equal(status, 200, path)
        assert.equal(headers.get('x-ratelimit-limit'), null, `${path} is not counted`)
      }
    }
    // An unknown URL counts too (issue #24): it would otherwise be a free way to load the service.
    for (const path of ['/', '/docs/', '/openapi.json', '/api/nope']) assert.equal((await service.get(path)).status, 429, path)
  })

  it('tells clients apart by X-Forwarded-For only behind a trusted proxy, IPv6 clients by their /64', async (t) => {
    const node = await startEmulator(t)
    const trusting = await startApp(t, { nodes: [node.url], env: { RATE_LIMIT_MAX: '1', TRUST_PROXY: '127.0.0.1' } })
    const as = (ip: string) => trusting.get('/api/nodeinfo', { headers: { 'x-forwarded-for': ip } })
    assert.equal((await as('203.0.113.1')).status, 200)
    assert.equal((await as('203.0.113.2')).status, 200)
    assert.equal((await as('203.0.113.1')).status, 429)
    assert.equal((await as('2001:db8:1:2::1')).status, 200)
    assert.equal((await as('2001:db8:1:2::ffff')).status, 429, 'the same /64')
    assert.equal((await as('2001:db8:1:3::1')).status, 200, 'another /64')
    const untrusting = await startApp(t, { nodes: [node.url], env: { RATE_LIMIT_MAX: '1' } })
    assert.equal((await untrusting.get('/api/nodeinfo', { headers: { 'x-forwarded-for': '203.0.113.1' } })).status, 200)
    assert.equal((await untrusting.get('/api/nodeinfo', { headers: { 'x-forwarded-for': '203.0.113.2' } })).status, 429)
  })

  it('gives a route with rateLimit options in its config limits of its own', async (t) => {
    const node = await startEmulator(t)
    const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', POCKETNET_NODES: node.url, RATE_LIMIT_MAX: '100' }))
    t.after(() => app.close())
    app.get('/api/scarce', { config: { rateLimit: { max: 1, timeWindow: 60_000 } } }, async () => ({ message: 'ok', data: {} }))
    assert.equal((await app.inject('/api/scarce')).statusCode, 200)
    const limited = await app.inject('/api/scarce')
    assert.equal(limited.statusCode, 429)
    assert.equal(limited.json().error, 'Rate limit of 1 requests exceeded: retry in 60 s')
    assert.equal((await app.inject('/healthz')).statusCode, 200)
    assert.equal((await app.inject('/api/nope')).headers['x-ratelimit-remaining'], '99', 'an unknown URL counts in the global limit')
    const other = await app.inject('/api/search?keyword=x')
    assert.equal(other.headers['x-ratelimit-remaining'], '98', 'the global limit counts apart from the route\'s own')
  })
})
