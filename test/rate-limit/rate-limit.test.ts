import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { parseWindow } from '../../src/rate-limit/window.js'
import { RefusalHold } from '../../src/rate-limit/refusal-hold.js'
import { FixedWindowStore } from '../../src/rate-limit/store.js'
import { startApp } from '../helpers/build-app.js'
import { manualClock } from '../helpers/manual-clock.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { waitFor } from '../helpers/wait-for.js'

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

describe('RefusalHold', () => {
  const options = (clock: ReturnType<typeof manualClock>) => ({ holdMs: 1000, windowMs: 60_000, freeRefusals: 2, maxHeldPerClient: 2, maxHeld: 3, clock: clock.now, timers: clock.timers })

  it('sends a client\'s first refusals of a window at once and holds the next ones for holdMs', () => {
    const clock = manualClock()
    const hold = new RefusalHold(options(clock))
    assert.deepEqual([hold.refuse('a'), hold.refuse('a'), hold.refuse('a')], ['send', 'send', 'hold'])
    assert.equal(hold.refuse('b'), 'send', 'clients are counted apart')
    let sent = 0
    hold.hold('a', () => sent++)
    clock.advance(999)
    assert.equal(sent, 0)
    clock.advance(1)
    assert.equal(sent, 1)
    assert.equal(hold.held, 0)
    clock.advance(60_000)
    assert.equal(hold.refuse('a'), 'send', 'a new window')
  })

  it('closes instead of holding past a client\'s share or the total, and frees a place when a hold ends early', () => {
    const clock = manualClock()
    const hold = new RefusalHold(options(clock))
    const sent: string[] = []
    for (const key of ['a', 'b']) for (let i = 0; i < 2; i++) hold.refuse(key)
    assert.equal(hold.refuse('a'), 'hold')
    const first = hold.hold('a', () => sent.push('a1'))
    assert.equal(hold.refuse('a'), 'hold')
    hold.hold('a', () => sent.push('a2'))
    assert.equal(hold.refuse('a'), 'close', 'past the client\'s share')
    assert.equal(hold.refuse('b'), 'hold')
    hold.hold('b', () => sent.push('b1'))
    assert.equal(hold.refuse('b'), 'close', 'past the total')
    first.release()
    first.release()
    assert.deepEqual(sent, ['a1'], 'a release sends once')
    assert.equal(hold.refuse('a'), 'hold', 'its place is free again')
    hold.releaseAll()
    assert.deepEqual(sent.sort(), ['a1', 'a2', 'b1'])
    assert.equal(clock.pendingTimers, 0)
  })

  it('holds nothing with holdMs 0', () => {
    const hold = new RefusalHold({ holdMs: 0, windowMs: 1000, freeRefusals: 0 })
    assert.equal(hold.refuse('a'), 'send')
  })
})

describe('a client that ignores its 429s', () => {
  it('gets its further refusals held while other clients are answered, and a refused body closes its connection', async (t) => {
    const node = await startEmulator(t)
    const clock = manualClock()
    const service = await startApp(t, { nodes: [node.url], clock: clock.now, refusalTimers: clock.timers, env: { RATE_LIMIT_MAX: '1', RATE_LIMIT_HOLD_MS: '1000', TRUST_PROXY: '127.0.0.1' } })
    const as = (ip: string, init: RequestInit = {}) => service.get('/api/nodeinfo', { ...init, headers: { 'x-forwarded-for': ip, ...init.headers } })
    assert.equal((await as('203.0.113.1')).status, 200)
    for (let i = 0; i < 10; i++) assert.equal((await as('203.0.113.1')).status, 429, 'the first refusals are sent at once')
    const held = as('203.0.113.1')
    let sent = false
    held.then(() => { sent = true }, () => {})
    // Other clients are answered while it waits, the other's first refusal at once.
    assert.equal((await as('203.0.113.2')).status, 200)
    assert.equal((await as('203.0.113.2')).status, 429)
    assert.equal(sent, false, 'held')
    clock.advance(1000)
    const answer = await held
    assert.equal(answer.status, 429)
    assert.equal(answer.headers.get('retry-after'), '60')

    // A refused request with a body it did not read: the refusal closes the connection.
    const refused = await fetch(`${service.url}/nope`, { method: 'POST', body: 'x'.repeat(100), headers: { 'x-forwarded-for': '203.0.113.2', 'content-type': 'text/plain' } })
    assert.equal(refused.status, 429)
    assert.equal(refused.headers.get('connection'), 'close')
  })

  it('sends held refusals at once when the service closes', async (t) => {
    const node = await startEmulator(t)
    const clock = manualClock()
    const service = await startApp(t, { nodes: [node.url], clock: clock.now, refusalTimers: clock.timers, env: { RATE_LIMIT_MAX: '1', RATE_LIMIT_HOLD_MS: '60000' } })
    for (let i = 0; i < 11; i++) await service.get('/api/nodeinfo')
    const held = service.get('/api/nodeinfo')
    await waitFor('the refusal held', () => clock.pendingTimers === 1)
    await service.app.close()
    assert.equal((await held).status, 429)
  })
})
