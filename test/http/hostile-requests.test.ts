/**
 * Requests a hostile client sends to make the service do work for nothing, or to slip past the
 * rate limit (issue #24): each is refused cheaply, counted, and answered in the envelope with a
 * request id and the security headers.
 */
import assert from 'node:assert/strict'
import { connect, type AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import { startApp, type TestApp } from '../helpers/build-app.js'
import { APP_ID } from '../helpers/sign-in.js'
import { startEmulator } from '../helpers/start-emulator.js'

/** Writes `head` (and `body`, if any) on a fresh connection; resolves with all the server wrote once it closes or answers. */
function rawRequest (service: TestApp, head: string, options: { body?: string, keepOpen?: boolean } = {}): Promise<{ status: number, headers: string, body: string }> {
  const { port } = service.app.server.address() as AddressInfo
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(head + (options.body ?? '')))
    let text = ''
    const done = (): void => {
      const [headers = '', body = ''] = text.split('\r\n\r\n')
      resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(headers)?.[1] ?? 0), headers: headers.toLowerCase(), body })
      socket.destroy()
    }
    socket.on('data', chunk => {
      text += chunk
      // Answered: enough for requests whose body is never sent.
      if (options.keepOpen && text.includes('\r\n\r\n') && /"message"/.test(text)) done()
    })
    socket.on('close', done)
    socket.on('error', reject)
  })
}

function assertEnvelope (answer: { headers: string, body: string }, what: string): void {
  assert.match(answer.headers, /content-type: application\/json/, what)
  assert.match(answer.headers, /x-request-id: \S+/, what)
  assert.match(answer.headers, /x-content-type-options: nosniff/, what)
  const body = JSON.parse(answer.body) as { message: unknown, error: unknown }
  assert.equal(typeof body.message, 'string', what)
  assert.equal(typeof body.error, 'string', what)
}

describe('hostile requests', () => {
  it('answers a body sent to no route 404 at once, without waiting for it or reading it', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    // 900 KB announced, a few bytes sent, the rest never: the answer cannot wait for the body.
    const answer = await rawRequest(service, 'POST /nope HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 900000\r\n\r\n', { body: '[[[[[[', keepOpen: true })
    assert.equal(answer.status, 404)
    assertEnvelope(answer, '404')
  })

  it('refuses a JSON body nested deeper than 16 levels with 400, and a body over the limit with 413', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { BASTYON_APP_ID: APP_ID } })
    const post = (body: string) => service.get('/api/auth/session', { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    const deep = await post(`{"signature":${'['.repeat(200)}${']'.repeat(200)}}`)
    assert.equal(deep.status, 400)
    assert.equal(deep.body.error, 'The JSON body nests objects and arrays deeper than 16 levels')
    // Brackets inside strings are text, not nesting.
    const text = await post(JSON.stringify({ signature: { nonce: '['.repeat(100) } }))
    assert.notEqual(text.status, 400, JSON.stringify(text.body))
    const large = await service.get('/api/auth/challenge', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ pad: 'x'.repeat(20_000) }) })
    assert.equal(large.status, 413)
    assert.equal((await service.get('/healthz')).status, 200)
  })

  it('cuts a body trickled slower than REQUEST_TIMEOUT_MS with 408', { timeout: 15_000 }, async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { BASTYON_APP_ID: APP_ID, REQUEST_TIMEOUT_MS: '300' } })
    const { port } = service.app.server.address() as AddressInfo
    const socket = connect(port, '127.0.0.1')
    t.after(() => socket.destroy())
    socket.write('POST /api/auth/session HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{')
    // One byte now and then, never the whole body.
    const trickle = setInterval(() => { if (!socket.destroyed) socket.write(' ') }, 50)
    t.after(() => clearInterval(trickle))
    let text = ''
    socket.on('data', chunk => { text += chunk })
    await new Promise(resolve => socket.on('close', resolve))
    assert.match(text, /^HTTP\/1\.1 408 /)
    assert.match(text, /"message":"Request timeout"/)
  })

  it('counts unknown routes, preflights, malformed URLs and requests without Host in the rate limit', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { RATE_LIMIT_MAX: '4', CORS_ORIGINS: 'https://app.example' } })
    const requests = [
      ['an unknown route', 'GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 404],
      ['a preflight', 'OPTIONS /api/nodeinfo HTTP/1.1\r\nHost: x\r\nConnection: close\r\nOrigin: https://app.example\r\nAccess-Control-Request-Method: GET\r\n\r\n', 204],
      ['a malformed URL', 'GET /api/user/%ff HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 400],
      ['no Host', 'GET /api/nodeinfo HTTP/1.1\r\nConnection: close\r\n\r\n', 400],
    ] as const
    for (const [what, head, status] of requests) {
      const answer = await rawRequest(service, head)
      assert.equal(answer.status, status, what)
      assert.match(answer.headers, /x-ratelimit-remaining: \d/, `${what} is counted`)
      if (status !== 204) assertEnvelope(answer, what)
    }
    for (const [what, head] of requests) {
      const answer = await rawRequest(service, head)
      assert.equal(answer.status, 429, `${what}, past the limit`)
      assertEnvelope(answer, what)
      assert.match(answer.headers, /retry-after: \d+/, what)
    }
  })

  it('answers OPTIONS * and an OPTIONS without Origin in the envelope', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { CORS_ORIGINS: 'https://app.example' } })
    for (const head of ['OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 'OPTIONS /api/nodeinfo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n']) {
      const answer = await rawRequest(service, head)
      assert.equal(answer.status, 400, head)
      assertEnvelope(answer, head)
    }
  })

  it('refuses page sizes and pages that are not whole numbers, naming the parameter', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    for (const [query, field] of [['pageSize=Infinity', 'pageSize'], ['pageSize=1e400', 'pageSize'], ['page=Infinity', 'page']]) {
      const { status, body } = await service.get(`/api/search?keyword=bitcoin&${query}`)
      assert.equal(status, 400, query)
      assert.equal(body.message, `Invalid query parameter: ${field}`, query)
    }
    assert.equal(node.callsTo('search').length, 0)
  })
})

describe('a node\'s failures, as clients see them', () => {
  it('never passes on what a node wrote: no URL, no secret, no length it chose', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { CACHE_TTL_SEARCH_MS: '0' } })
    const message = `upstream http://10.1.2.3:38081/?password=hunter2 said ${'x'.repeat(200_000)}`
    node.setFault({ kind: 'rpc-error', code: -8, message, status: 500 }, { method: 'search' })
    const { status, body, headers } = await service.get('/api/search?keyword=bitcoin')
    assert.equal(status, 500)
    assert.equal(body.message, 'Search operation failed')
    assert.equal(body.error, 'Pocketnet node rejected search (node 1): invalid parameter (RPC error -8)')
    assert.equal(headers.get('retry-after'), null, 'an answer about the request is not worth retrying')
    const ready = await service.get('/readyz')
    assert.doesNotMatch(JSON.stringify(ready.body), /password|10\.1\.2\.3/)
  })

  it('says when the failure is temporary: no node reachable, with a code and Retry-After', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { CACHE_TTL_SEARCH_MS: '0' } })
    assert.equal((await service.get('/api/search?keyword=bitcoin')).status, 200)
    await node.stop()
    const { status, body, headers } = await service.get('/api/search?keyword=music')
    assert.equal(status, 500, 'the spec\'s status for a failed route')
    assert.equal(body.message, 'Search operation failed')
    assert.equal(body.code, 'RPC_ERR_UNAVAILABLE')
    assert.equal(headers.get('retry-after'), '2')
  })
})
