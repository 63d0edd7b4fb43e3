/**
 * Requests a hostile client sends to make the service do work for nothing, or to slip past the
 * rate limit (issue #24): each is refused before its body is read or parsed, counted, and
 * answered in the envelope with a request id and the security headers.
 */
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { connect, type AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import { startApp, type TestApp } from '../helpers/build-app.js'
import { APP_ID } from '../helpers/sign-in.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { waitFor } from '../helpers/wait-for.js'

interface RawAnswer {
  status: number
  /** Lower-cased header lines. */
  headers: string
  body: string
  /** Whether the server closed the connection after it answered. */
  closed: boolean
}

/**
 * Writes `head`, then `body` if any, on a fresh connection, and resolves with the answer: once
 * the server closes the connection, or, with `untilAnswered`, once a whole answer has arrived.
 */
function rawRequest (service: TestApp, head: string, options: { body?: string, untilAnswered?: boolean } = {}): Promise<RawAnswer> {
  const { port } = service.app.server.address() as AddressInfo
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(head + (options.body ?? '')))
    let text = ''
    let settled = false
    const settle = (closed: boolean): void => {
      if (settled) return
      settled = true
      const [headers = '', body = ''] = text.split('\r\n\r\n')
      resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(headers)?.[1] ?? 0), headers: headers.toLowerCase(), body, closed })
      socket.destroy()
    }
    socket.on('data', chunk => {
      text += chunk
      const length = /\r\ncontent-length: (\d+)/i.exec(text)?.[1]
      const bodyStart = text.indexOf('\r\n\r\n') + 4
      if (options.untilAnswered && length !== undefined && bodyStart > 3 && Buffer.byteLength(text.slice(bodyStart)) >= Number(length)) settle(false)
    })
    socket.on('close', () => settle(true))
    socket.on('error', reject)
  })
}

function assertEnvelope (answer: { headers: string, body: string }, what: string): void {
  assert.match(answer.headers, /content-type: application\/json/, what)
  assertHeaders(answer, what)
  const body = JSON.parse(answer.body) as { message: unknown, error: unknown }
  assert.equal(typeof body.message, 'string', what)
  assert.equal(typeof body.error, 'string', what)
}

/** The request id and a security header from helmet's set. */
function assertHeaders (answer: { headers: string }, what: string): void {
  assert.match(answer.headers, /\r\nx-request-id: \S+/, what)
  assert.match(answer.headers, /\r\nx-content-type-options: nosniff/, what)
}

/** A JSON array nested `depth` deep, as the flood in issue #24 sent it (~900 KB). */
function nestedArray (depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth)
}

const FLOOD_BODY = nestedArray(450_000)

describe('hostile requests', () => {
  it('answers a body sent to no route 404 before the body arrives, and closes the connection', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    // 900 KB announced, a few bytes sent, the rest never: the answer cannot wait for the body.
    for (const framing of ['Content-Length: 900000', 'Transfer-Encoding: chunked']) {
      const answer = await rawRequest(service, `POST /nope HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${framing}\r\n\r\n`, { body: framing.startsWith('Content') ? '[[[[' : '4\r\n[[[[\r\n' })
      assert.equal(answer.status, 404, framing)
      assertEnvelope(answer, framing)
      assert.match(answer.headers, /\r\nconnection: close/, framing)
      assert.equal(answer.closed, true, framing)
    }
  })

  it('refuses a flood of deeply nested bodies without parsing one, and answers the API beside it', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { BASTYON_APP_ID: APP_ID } })
    const parse = t.mock.method(JSON, 'parse')
    const head = (path: string, framing: string): string => `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${framing}\r\n\r\n`
    const chunk = (text: string): string => `${text.length.toString(16)}\r\n${text}\r\n`
    const flood = [
      // No route: answered on the headers, whatever follows.
      ...Array.from({ length: 2 }, () => rawRequest(service, head('/nope', `Content-Length: ${FLOOD_BODY.length}`), { body: FLOOD_BODY.slice(0, 1000), untilAnswered: true })),
      // A route that takes a body: refused on its announced size, or once the limit is passed.
      ...Array.from({ length: 2 }, () => rawRequest(service, head('/api/auth/challenge', `Content-Length: ${FLOOD_BODY.length}`), { body: FLOOD_BODY.slice(0, 1000), untilAnswered: true })),
      ...Array.from({ length: 2 }, () => rawRequest(service, head('/api/auth/challenge', 'Transfer-Encoding: chunked'), { body: chunk(FLOOD_BODY.slice(0, 17_000)), untilAnswered: true })),
      // Within sign-in's size limit (4 KB), all of it sent: refused on its depth.
      ...Array.from({ length: 2 }, () => rawRequest(service, head('/api/auth/session', 'Content-Length: 4000'), { body: nestedArray(2000), untilAnswered: true })),
    ]
    const [refused, api] = await Promise.all([Promise.all(flood), Promise.all(Array.from({ length: 10 }, () => service.get('/api/nodeinfo')))])
    assert.deepEqual(refused.map(answer => answer.status), [404, 404, 413, 413, 413, 413, 400, 400])
    for (const answer of refused) assertEnvelope(answer, String(answer.status))
    assert.deepEqual(api.map(answer => answer.status), Array(10).fill(200))
    const parsedBodies = parse.mock.calls.filter(call => typeof call.arguments[0] === 'string' && call.arguments[0].startsWith('[['))
    assert.equal(parsedBodies.length, 0, 'no nested body reached JSON.parse')
  })

  it('refuses a JSON body nested deeper than 16 levels before parsing it, and sizes and types the API does not take', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { BASTYON_APP_ID: APP_ID } })
    const post = (path: string, body: string, type = 'application/json') => service.get(path, { method: 'POST', headers: { 'content-type': type }, body })
    const deep = await post('/api/auth/session', `{"signature":${nestedArray(17)}}`)
    assert.equal(deep.status, 400)
    assert.deepEqual(deep.body, { message: 'Bad request', error: 'The JSON body nests objects and arrays deeper than 16 levels' })
    // Not JSON past the depth: the depth answers, so the parser never ran.
    assert.equal((await post('/api/auth/session', `${'['.repeat(17)}not json`)).body.error, 'The JSON body nests objects and arrays deeper than 16 levels')
    // Brackets inside strings are text, not nesting: parsed, and refused for what it says.
    const text = await post('/api/auth/session', JSON.stringify({ signature: { nonce: '['.repeat(100) } }))
    assert.equal(text.status, 401)
    const large = await post('/api/auth/challenge', JSON.stringify({ pad: 'x'.repeat(20_000) }))
    assert.equal(large.status, 413)
    assert.equal(large.body.message, 'Payload too large')
    const xml = await post('/api/auth/session', '<signature/>', 'application/xml')
    assert.equal(xml.status, 415)
    assert.equal(xml.body.message, 'Unsupported media type')
  })

  it('closes, when it shuts down, connections that never sent a request, which held the close for the headers timeout', { timeout: 30_000 }, async (t) => {
    const service = await startApp(t, { nodes: ['http://127.0.0.1:9'] })
    const { port } = service.app.server.address() as AddressInfo
    const silent = connect(port, '127.0.0.1')
    const trickling = connect(port, '127.0.0.1')
    t.after(() => { silent.destroy(); trickling.destroy() })
    // Closed by the service with what it had not read still unread: a reset, which is fine here.
    for (const socket of [silent, trickling]) socket.on('error', () => {})
    await Promise.all([once(silent, 'connect'), once(trickling, 'connect')])
    trickling.write('GET /api/nodeinfo HTTP/1.1\r\nHost: te')
    await waitFor('the service to hold both', async () => await new Promise<number>(resolve => service.app.server.getConnections((_error, count) => resolve(count))) === 2)
    const closed = Promise.all([silent, trickling].map(socket => new Promise(resolve => socket.once('close', resolve))))
    await service.app.close()
    await closed
  })

  it('cuts a body trickled slower than REQUEST_TIMEOUT_MS with 408', { timeout: 30_000 }, async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { BASTYON_APP_ID: APP_ID, REQUEST_TIMEOUT_MS: '300' } })
    const { port } = service.app.server.address() as AddressInfo
    const socket = connect(port, '127.0.0.1')
    t.after(() => socket.destroy())
    socket.write('POST /api/auth/session HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n{')
    // A byte now and then, never the whole body. (Before the fix, Node's 60 s default bound
    // the body whatever REQUEST_TIMEOUT_MS said: the test's timeout would end it first.)
    const trickle = setInterval(() => { if (!socket.destroyed) socket.write(' ') }, 50)
    t.after(() => clearInterval(trickle))
    let text = ''
    socket.on('data', chunk => { text += chunk })
    await new Promise(resolve => socket.on('close', resolve))
    assert.match(text, /^HTTP\/1\.1 408 /)
    assert.match(text, /"message":"Request timeout"/)
  })

  it('counts unknown routes, preflights, malformed URLs and requests without Host in the rate limit, in the envelope', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { RATE_LIMIT_MAX: '5', CORS_ORIGINS: 'https://app.example' } })
    const requests = [
      ['an unknown route', 'GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 404],
      ['a preflight', 'OPTIONS /api/nodeinfo HTTP/1.1\r\nHost: x\r\nOrigin: https://app.example\r\nAccess-Control-Request-Method: GET\r\nConnection: close\r\n\r\n', 204],
      ['a malformed URL', 'GET /api/user/%ff HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 400],
      ['no Host', 'GET /api/nodeinfo HTTP/1.1\r\nConnection: close\r\n\r\n', 400],
      ['OPTIONS *', 'OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 400],
    ] as const
    for (const [what, head, status] of requests) {
      const answer = await rawRequest(service, head)
      assert.equal(answer.status, status, what)
      if (status === 204) assertHeaders(answer, what)
      else assertEnvelope(answer, what)
      assert.match(answer.headers, /\r\nx-ratelimit-remaining: \d+/, what)
    }
    for (const [what, head] of requests) {
      const answer = await rawRequest(service, head)
      assert.equal(answer.status, 429, `${what}, past the limit`)
      assertEnvelope(answer, what)
      assert.match(answer.headers, /\r\nretry-after: \d+/, what)
    }
    assert.equal((await service.get('/api/nodeinfo')).status, 429, 'the API shares the count')
    // Logged and measured like any answer, and none left counted as in flight.
    const measured = await service.app.metrics.registry.getSingleMetricAsString('http_requests_total')
    assert.match(measured, /route="unmatched",method="GET",status="400"\} 1\b/)
    assert.equal(service.app.metrics.inFlight.value, 0)
  })

  it('answers a malformed URL 400 in the envelope, with its own text', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    for (const path of ['/api/user/%ff', '/nope/%e0%a4%a']) {
      const { status, body, headers } = await service.get(path)
      assert.equal(status, 400, path)
      assert.deepEqual(body, { message: 'Bad request', error: 'The URL is not valid: a percent-encoded part does not decode' }, path)
      assert.ok(headers.get('x-request-id'), path)
      assert.equal(headers.get('x-content-type-options'), 'nosniff', path)
    }
    assert.equal(node.callsTo('getuserprofile').length, 0)
  })
})
