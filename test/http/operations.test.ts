import assert from 'node:assert/strict'
import { get, type IncomingMessage } from 'node:http'
import { connect } from 'node:net'
import { describe, it } from 'node:test'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { startApp } from '../helpers/build-app.js'
import { startEmulator } from '../helpers/start-emulator.js'

/** Sends raw bytes and resolves with everything the server wrote before closing. */
function rawRequest (port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text))
    let answer = ''
    socket.on('data', chunk => { answer += chunk })
    socket.on('close', () => resolve(answer))
    socket.on('error', reject)
  })
}

describe('CORS', () => {
  it('answers a preflight from an allowed origin with the allowed method and headers', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { CORS_ORIGINS: 'https://app.example, https://other.example' } })
    const response = await fetch(`${service.url}/api/search`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'content-type,signature' },
    })
    assert.equal(response.status, 204)
    assert.equal(response.headers.get('access-control-allow-origin'), 'https://app.example')
    assert.match(response.headers.get('access-control-allow-methods') ?? '', /GET/)
    assert.match(response.headers.get('access-control-allow-headers') ?? '', /Signature/)
    assert.match(response.headers.get('access-control-allow-headers') ?? '', /Last-Event-ID/)
    const get = await fetch(`${service.url}/api/nodeinfo`, { headers: { origin: 'https://other.example' } })
    assert.equal(get.headers.get('access-control-allow-origin'), 'https://other.example')
  })

  it('gives an origin that is not listed no CORS headers', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { CORS_ORIGINS: 'https://app.example' } })
    const response = await fetch(`${service.url}/api/search`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' },
    })
    assert.equal(response.headers.get('access-control-allow-origin'), null)
  })

  it('allows any origin with *, and none by default', async (t) => {
    const node = await startEmulator(t)
    const open = await startApp(t, { nodes: [node.url], env: { CORS_ORIGINS: '*' } })
    assert.equal((await fetch(`${open.url}/healthz`, { headers: { origin: 'https://x.example' } })).headers.get('access-control-allow-origin'), '*')
    const closed = await startApp(t, { nodes: [node.url] })
    assert.equal((await fetch(`${closed.url}/healthz`, { headers: { origin: 'https://x.example' } })).headers.get('access-control-allow-origin'), null)
    const preflight = await fetch(`${closed.url}/api/search`, { method: 'OPTIONS', headers: { origin: 'https://x.example', 'access-control-request-method': 'GET' } })
    assert.equal(preflight.status, 404)
    assert.equal(preflight.headers.get('access-control-allow-origin'), null)
    assert.equal(preflight.headers.get('access-control-allow-methods'), null)
  })
})

describe('security headers', () => {
  it('are on the page and on the API', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    const page = await service.get('/')
    assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'self'.*img-src 'self' data: https:.*script-src 'self'/)
    assert.equal(page.headers.get('strict-transport-security'), 'max-age=31536000; includeSubDomains')
    const api = await service.get('/api/nodeinfo')
    assert.equal(api.headers.get('content-security-policy'), "default-src 'none'; frame-ancestors *")
    for (const { headers } of [page, api]) {
      assert.equal(headers.get('x-content-type-options'), 'nosniff')
      assert.equal(headers.get('referrer-policy'), 'no-referrer')
      assert.equal(headers.get('x-frame-options'), null, 'mini-apps run in an iframe')
    }
  })

  it('leave a reloaded page the CSP it was served with', async (t) => {
    const service = await startApp(t, { nodes: ['http://127.0.0.1:9'] })
    const page = await service.get('/')
    // node:http, not fetch: fetch marks a request with If-None-Match no-cache, which a static file answers in full.
    const renewed = await new Promise<IncomingMessage>((resolve, reject) => {
      get(`${service.url}/`, { headers: { 'if-none-match': page.headers.get('etag') ?? '' } }, resolve).on('error', reject)
    })
    renewed.resume()
    assert.equal(renewed.statusCode, 304)
    // A browser stores a 304's headers over the page's: the API's CSP would block the page's scripts.
    assert.equal(renewed.headers['content-security-policy'], undefined)
  })

  it('leave the docs page its own CSP', async (t) => {
    const service = await startApp(t, { nodes: ['http://127.0.0.1:9'] })
    const docs = await service.get('/docs/')
    assert.match(docs.headers.get('content-security-policy') ?? '', /script-src 'self'/)
    assert.equal(docs.headers.get('x-content-type-options'), 'nosniff')
  })
})

describe('metrics', () => {
  it('exposes each metric after traffic', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    await service.get('/api/search?keyword=bitcoin')
    await service.get('/api/search?keyword=bitcoin')
    await service.get('/api/nope')
    const { status, body, headers } = await service.get('/metrics')
    assert.equal(status, 200)
    assert.match(headers.get('content-type') ?? '', /text\/plain/)
    for (const line of [
      /^http_requests_total\{route="\/api\/search",method="GET",status="200"\} 2$/m,
      /^http_requests_total\{route="unmatched",method="GET",status="404"\} 1$/m,
      /^http_request_duration_seconds_bucket\{le="0.005",route="\/api\/search"\} \d+$/m,
      /^http_requests_in_flight 1$/m,
      /^pocketnet_upstream_attempts_total\{node="node 1",method="search",outcome="ok"\} 1$/m,
      /^pocketnet_cache_lookups_total\{method="search",outcome="miss"\} 1$/m,
      /^pocketnet_cache_lookups_total\{method="search",outcome="hit"\} 1$/m,
      /^pocketnet_nodes_usable 1$/m,
      new RegExp(`^pocketnet_best_height ${node.height}$`, 'm'),
      /^process_resident_memory_bytes \d+/m,
    ]) assert.match(body, line)
    assert.doesNotMatch(body, /127\.0\.0\.1/)
  })
})

describe('request ids and logs', () => {
  async function loggedApp (t: { after (fn: () => unknown): void }, nodeUrl: string) {
    const lines: Array<Record<string, unknown>> = []
    const app = await buildApp(loadConfig({ POCKETNET_NODES: nodeUrl, LOG_LEVEL: 'info' }), { logStream: { write: line => lines.push(JSON.parse(line)) } })
    t.after(() => app.close())
    return { app, lines }
  }

  it('keeps a plain X-Request-Id, replaces a strange one, and makes one when absent', async (t) => {
    const node = await startEmulator(t)
    const { app } = await loggedApp(t, node.url)
    const given = await app.inject({ url: '/healthz', headers: { 'x-request-id': 'abc-123' } })
    assert.equal(given.headers['x-request-id'], 'abc-123')
    const strange = await app.inject({ url: '/healthz', headers: { 'x-request-id': 'a b<script>' } })
    assert.match(String(strange.headers['x-request-id']), /^[0-9a-f-]{36}$/)
    const none = await app.inject({ url: '/healthz' })
    assert.match(String(none.headers['x-request-id']), /^[0-9a-f-]{36}$/)
  })

  it('logs failed requests with id, route, status and duration, and no line per success at the default level', async (t) => {
    const node = await startEmulator(t)
    const { app, lines } = await loggedApp(t, node.url)
    for (let i = 0; i < 3; i++) await app.inject({ url: '/api/nodeinfo' })
    assert.equal(lines.filter(line => line.msg === 'request completed').length, 0)
    await app.inject({ url: '/api/search?pageSize=0', headers: { 'x-request-id': 'req-42' } })
    const line = lines.find(entry => entry.msg === 'request completed')
    assert.ok(line)
    assert.equal(line.reqId, 'req-42')
    assert.equal(line.route, '/api/search')
    assert.equal(line.status, 400)
    assert.equal(typeof line.durationMs, 'number')
  })
})

describe('limits', () => {
  it('answers 414 in the envelope for a URL over MAX_URL_LENGTH', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { MAX_URL_LENGTH: '100' } })
    const { status, body } = await service.get(`/api/search?keyword=${'a'.repeat(120)}`)
    assert.equal(status, 414)
    assert.deepEqual(body, { message: 'URI too long', error: 'The URL is 140 characters; the limit is 100' })
  })

  it('answers 431 in the envelope for headers over MAX_HEADER_BYTES', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { MAX_HEADER_BYTES: '2048' } })
    const port = Number(new URL(service.url).port)
    const answer = await rawRequest(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(4000)}\r\n\r\n`)
    assert.match(answer, /^HTTP\/1.1 431 /)
    assert.match(answer, /\{"message":"Request header fields too large","error":"The request headers exceed the size limit"\}$/)
  })

  it('answers 408 and closes the connection when a request does not arrive in time', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { REQUEST_TIMEOUT_MS: '300' } })
    const port = Number(new URL(service.url).port)
    // Headers never finished: the server must not wait for ever.
    const answer = await rawRequest(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n')
    assert.match(answer, /^HTTP\/1.1 408 /)
    assert.match(answer, /"message":"Request timeout"/)
  })
})
