import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createSharedInstance } from '../../packages/pocketnet-client/index.js'
import { FastPath, type Recording } from '../../src/fast-path/fast-path.js'
import { startApp, type TestApp } from '../helpers/build-app.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { waitFor } from '../helpers/wait-for.js'

/** Headers that are made anew for every request; all others must be the same from either path. */
const PER_REQUEST = new Set(['x-request-id', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'date', 'connection', 'keep-alive'])

function stableHeaders (headers: Headers): Record<string, string> {
  return Object.fromEntries([...headers].filter(([name]) => !PER_REQUEST.has(name)).sort(([a], [b]) => a.localeCompare(b)))
}

async function fastAnswers (service: TestApp, route: string): Promise<number> {
  // In process: GET /metrics serves one scrape for a second, and counts in the rate limit.
  const body = await service.app.metrics.registry.metrics()
  const line = body.split('\n').find(row => row.startsWith(`http_fast_path_answers_total{route="${route}"}`))
  return line === undefined ? 0 : Number(line.split(' ').at(-1))
}

async function requestsCounted (service: TestApp, route: string, status: number): Promise<number> {
  // In process: GET /metrics serves one scrape for a second, and counts in the rate limit.
  const body = await service.app.metrics.registry.metrics()
  const line = body.split('\n').find(row => row.startsWith(`http_requests_total{route="${route}",method="GET",status="${status}"}`))
  return line === undefined ? 0 : Number(line.split(' ').at(-1))
}

describe('the fast path', () => {
  it('answers a repeat with the very body and headers Fastify sent, without calling the node', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    const user = node.dataset.users[0] as { address: string }
    for (const [path, route, method] of [
      ['/api/search?keyword=bitcoin&pageSize=5', '/api/search', 'search'],
      [`/api/user/${user.address}`, '/api/user/:address', 'getuserprofile'],
      ['/api/nodeinfo', '/api/nodeinfo', 'getnodeinfo'],
    ] as const) {
      const calls = node.callsTo(method).length
      const first = await fetch(service.url + path)
      const firstBody = await first.text()
      const second = await fetch(service.url + path)
      assert.equal(await second.text(), firstBody)
      assert.equal(await fastAnswers(service, route), 0, `${path}: Fastify answers the first request, and records the second`)
      const repeat = await fetch(service.url + path, { headers: { 'x-request-id': 'repeat-1' } })
      assert.equal(repeat.status, 200)
      assert.equal(await repeat.text(), firstBody, path)
      assert.deepEqual(stableHeaders(repeat.headers), stableHeaders(first.headers), path)
      assert.equal(repeat.headers.get('x-request-id'), 'repeat-1', 'a plain client request id is kept')
      assert.match(first.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/)
      assert.equal(await fastAnswers(service, route), 1, path)
      assert.equal(node.callsTo(method).length - calls <= 1, true, `${path}: at most the first request reached the node`)
    }
    // Counted like every request, and the cache hit too.
    assert.equal(await requestsCounted(service, '/api/search', 200), 3)
    const metrics = String((await service.get('/metrics')).body)
    assert.match(metrics, /pocketnet_cache_lookups_total\{method="search",outcome="hit"\} 2/)
  })

  it('records an answer only once Fastify sent it twice', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    for (let i = 0; i < 5; i++) assert.equal((await service.get(`/api/search?keyword=once${i}`)).status, 200)
    assert.equal((await service.get('/api/search?keyword=once1')).status, 200)
    assert.equal(await fastAnswers(service, '/api/search'), 0, 'the first answer was not recorded')
    assert.equal((await service.get('/api/search?keyword=once1')).status, 200)
    assert.equal(await fastAnswers(service, '/api/search'), 1, 'the second was')
  })

  it('answers If-None-Match with the same 304 as Fastify', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    const first = await fetch(`${service.url}/api/search?keyword=bitcoin&page=0`)
    await first.arrayBuffer()
    await (await fetch(`${service.url}/api/search?keyword=bitcoin&page=0`)).arrayBuffer()
    const etag = first.headers.get('etag') as string
    // The same answer under another spelling of the URL: Fastify answers it (the fast path
    // keys on the URL as sent), then the fast path the repeat.
    const fromFastify = await fetch(`${service.url}/api/search?page=0&keyword=bitcoin`, { headers: { 'if-none-match': etag } })
    const fromFastPath = await fetch(`${service.url}/api/search?keyword=bitcoin&page=0`, { headers: { 'if-none-match': `"other", ${etag}` } })
    assert.equal(fromFastify.status, 304)
    assert.equal(fromFastPath.status, 304)
    assert.equal(await fromFastPath.text(), '')
    assert.deepEqual(stableHeaders(fromFastPath.headers), stableHeaders(fromFastify.headers))
    assert.equal(await fastAnswers(service, '/api/search'), 1)
    assert.equal(await requestsCounted(service, '/api/search', 304), 2)
  })

  it('counts each request once in the rate limit, and leaves the 429 to Fastify', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW: '1 minute' } })
    const remaining: Array<string | null> = []
    for (let i = 0; i < 3; i++) {
      const { status, headers } = await service.get('/api/search?keyword=bitcoin')
      assert.equal(status, 200)
      assert.equal(headers.get('x-ratelimit-limit'), '3')
      remaining.push(headers.get('x-ratelimit-remaining'))
    }
    assert.deepEqual(remaining, ['2', '1', '0'])
    assert.equal(await fastAnswers(service, '/api/search'), 1)
    const limited = await service.get('/api/search?keyword=bitcoin')
    assert.equal(limited.status, 429)
    assert.equal(limited.body.message, 'Too many requests')
    assert.ok(Number(limited.headers.get('retry-after')) > 0)
    assert.equal(await fastAnswers(service, '/api/search'), 1)
  })

  it('stops replaying once the answer is no longer fresh: a new block ends a tip answer', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { POCKETNET_PROBE_INTERVAL_MS: '100' } })
    const client = await service.app.pocketnet.get()
    const before = await service.get('/api/nodeinfo')
    for (let i = 0; i < 2; i++) assert.equal((await service.get('/api/nodeinfo')).body.data.lastblock.height, before.body.data.lastblock.height)
    assert.equal(await fastAnswers(service, '/api/nodeinfo'), 1)
    node.mineBlock()
    await waitFor('the probe to see the new block', () => client.bestHeight === node.height)
    const after = await service.get('/api/nodeinfo')
    assert.equal(after.body.data.lastblock.height, before.body.data.lastblock.height + 1)
    assert.notEqual(after.headers.get('etag'), before.headers.get('etag'))
    assert.equal(await fastAnswers(service, '/api/nodeinfo'), 1, 'Fastify answered the new block')
    for (let i = 0; i < 2; i++) assert.equal((await service.get('/api/nodeinfo')).body.data.lastblock.height, node.height)
    assert.equal(await fastAnswers(service, '/api/nodeinfo'), 2, 'and the new answer is replayed')
  })

  it('replays per Origin when CORS answers vary by it', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { CORS_ORIGINS: 'https://a.example,https://b.example' } })
    const as = (origin: string) => service.get('/api/search?keyword=bitcoin', { headers: { origin } })
    for (let i = 0; i < 3; i++) assert.equal((await as('https://a.example')).headers.get('access-control-allow-origin'), 'https://a.example')
    assert.equal(await fastAnswers(service, '/api/search'), 1)
    assert.equal((await as('https://b.example')).headers.get('access-control-allow-origin'), 'https://b.example')
    assert.equal((await as('https://evil.example')).headers.get('access-control-allow-origin'), null)
    assert.equal((await service.get('/api/search?keyword=bitcoin')).headers.get('access-control-allow-origin'), null)
  })

  it('never replays errors, HEAD requests, or anything while successes are logged', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    for (let i = 0; i < 2; i++) {
      assert.equal((await service.get('/api/user/P8bbRWJknHBXJRBTDSS88uQJSFvX67iN88')).status, 404)
      assert.equal((await service.get('/api/search?keyword=')).status, 400)
      assert.equal((await fetch(`${service.url}/api/search?keyword=bitcoin`, { method: 'HEAD' })).status, 200)
    }
    assert.equal(await fastAnswers(service, '/api/user/:address'), 0)
    assert.equal(await fastAnswers(service, '/api/search'), 0)

    const lines: string[] = []
    const logged = await startApp(t, { nodes: [node.url], env: { LOG_LEVEL: 'debug' }, logStream: { write: line => { lines.push(line) } } })
    for (let i = 0; i < 3; i++) assert.equal((await logged.get('/api/search?keyword=bitcoin')).status, 200)
    assert.equal(await fastAnswers(logged, '/api/search'), 0)
    assert.equal(lines.filter(line => line.includes('"route":"/api/search"') && line.includes('request completed')).length, 3)
  })

  it('hands the request to Fastify when it fails, and logs why', async (t) => {
    const node = await startEmulator(t)
    const shared = createSharedInstance({ nodes: [node.url] })
    // A client whose freshness check breaks: the fast path fails after counting the request.
    const broken = <T extends object>(api: T): T => new Proxy(api, {
      // Everything else as the real client, its own methods and getters on itself.
      get: (target, name) => {
        if (name === 'isFreshAnswer') return () => { throw new Error('broken check') }
        const value: unknown = Reflect.get(target, name, target)
        return typeof value === 'function' ? value.bind(target) : value
      },
    })
    const client = { ...shared, peek: () => { const api = shared.peek(); return api && broken(api) } }
    const lines: string[] = []
    const service = await startApp(t, { nodes: [node.url], client, logStream: { write: line => { lines.push(line) } }, env: { LOG_LEVEL: 'error' } })
    const first = await service.get('/api/search?keyword=bitcoin')
    await service.get('/api/search?keyword=bitcoin')
    const again = await service.get('/api/search?keyword=bitcoin')
    assert.equal(again.status, 200)
    assert.deepEqual(again.body, first.body)
    assert.equal(again.headers.get('x-ratelimit-remaining'), '297', 'counted once')
    assert.equal(await fastAnswers(service, '/api/search'), 0)
    assert.ok(lines.some(line => line.includes('fast path failed') && line.includes('broken check')))
  })

  it('keeps recordings bounded by count and by body bytes', () => {
    const fastPath = new FastPath({ maxEntries: 2, maxBytes: 100 })
    const recording = (bytes: number): Recording => ({ count: () => {}, answer: new WeakRef({}), body: Buffer.alloc(bytes), etag: 'W/"x"', headers: [], vary: [], rateLimited: true })
    for (const url of ['/a', '/b', '/c']) fastPath.record(url, recording(10))
    assert.equal(fastPath.size, 2)
    fastPath.record('/big', recording(101))
    assert.equal(fastPath.size, 2, 'a body above the byte bound is not kept')
    fastPath.record('/d', recording(60))
    fastPath.record('/e', recording(60))
    assert.equal(fastPath.size, 1, 'two 60-byte bodies exceed 100 bytes')
  })
})
