import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { RpcClosedError, RpcInvalidParamsError, RpcNodeError, RpcTimeoutError, RpcTransportError, RpcUnavailableError } from '../../packages/pocketnet-client/index.js'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { HttpError } from '../../src/http/errors.js'

// A node URL that nothing listens on: these tests never reach the RPC client.
const NO_NODE = 'http://127.0.0.1:9'

async function appWith (t: { after (fn: () => unknown): void }, env: Record<string, string> = {}) {
  const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', POCKETNET_NODES: NO_NODE, ...env }))
  t.after(() => app.close())
  return app
}

describe('error handling', () => {
  it('answers 404 in the envelope for an unknown route', async (t) => {
    const app = await appWith(t)
    const response = await app.inject({ method: 'GET', url: '/api/nope?x=1' })
    assert.equal(response.statusCode, 404)
    assert.match(response.headers['content-type'] as string, /application\/json/)
    assert.deepEqual(response.json(), { message: 'Not found', error: 'No route answers GET /api/nope?x=1' })
  })

  it('answers 404 in the envelope for a method the route does not take', async (t) => {
    const app = await appWith(t)
    const response = await app.inject({ method: 'POST', url: '/api/nodeinfo', payload: {} })
    assert.equal(response.statusCode, 404)
    assert.equal(response.json().message, 'Not found')
  })

  it('answers 400 in the envelope for a malformed JSON body on a route that takes one', async (t) => {
    const app = await appWith(t)
    // A mini-app developer's own route: the app-wide JSON parser is already on.
    app.post('/api/echo', async (request) => ({ message: 'ok', data: request.body }))
    const response = await app.inject({ method: 'POST', url: '/api/echo', headers: { 'content-type': 'application/json' }, payload: '{"a":' })
    assert.equal(response.statusCode, 400)
    assert.equal(response.json().message, 'Bad request')
    assert.match(response.json().error, /JSON/)
    const ok = await app.inject({ method: 'POST', url: '/api/echo', payload: { a: 1 } })
    assert.deepEqual(ok.json(), { message: 'ok', data: { a: 1 } })
  })

  it('answers 415 in the envelope for a body type no parser takes', async (t) => {
    const app = await appWith(t)
    app.post('/api/echo', async () => ({ message: 'ok' }))
    const response = await app.inject({ method: 'POST', url: '/api/echo', headers: { 'content-type': 'application/x-nope' }, payload: 'x' })
    assert.equal(response.statusCode, 415)
    assert.equal(response.json().message, 'Unsupported media type')
  })

  it('hides the detail of an unexpected error outside development', async (t) => {
    const app = await appWith(t, { NODE_ENV: 'production' })
    app.get('/api/boom', async () => { throw new Error('secret detail') })
    const response = await app.inject({ method: 'GET', url: '/api/boom' })
    assert.equal(response.statusCode, 500)
    assert.deepEqual(response.json(), { message: 'Internal server error', error: 'Unknown error' })
  })

  it('shows the detail of an unexpected error in development', async (t) => {
    const app = await appWith(t, { NODE_ENV: 'development' })
    app.get('/api/boom', async () => { throw new Error('secret detail') })
    const response = await app.inject({ method: 'GET', url: '/api/boom' })
    assert.equal(response.statusCode, 500)
    assert.deepEqual(response.json(), { message: 'Internal server error', error: 'secret detail' })
  })

  it('answers Unknown error for a thrown value that is not an Error, even in development', async (t) => {
    const app = await appWith(t, { NODE_ENV: 'development' })
    // eslint-disable-next-line no-throw-literal -- the case under test
    app.get('/api/boom', async () => { throw 'a string' })
    const response = await app.inject({ method: 'GET', url: '/api/boom' })
    assert.equal(response.statusCode, 500)
    assert.equal(response.json().message, 'Internal server error')
  })

  it('writes the unexpected error to the log', async (t) => {
    const lines: string[] = []
    const app = await buildApp(loadConfig({ LOG_LEVEL: 'error', POCKETNET_NODES: NO_NODE }), { logStream: { write: line => lines.push(line) } })
    t.after(() => app.close())
    app.get('/api/boom', async () => { throw new Error('logged detail') })
    await app.inject({ method: 'GET', url: '/api/boom' })
    const entry = lines.map(line => JSON.parse(line)).find(line => line.msg === 'Internal server error')
    assert.ok(entry, 'an error line was logged')
    assert.equal(entry.err.message, 'logged detail')
  })

  it('answers a failed route with its failureMessage and the error\'s own text, in production too', async (t) => {
    const app = await appWith(t, { NODE_ENV: 'production' })
    app.get('/api/fails', { config: { failureMessage: 'Failed to do the thing' } }, async () => { throw new Error('node 1 failed: connection refused') })
    // eslint-disable-next-line no-throw-literal -- the case under test
    app.get('/api/fails-oddly', { config: { failureMessage: 'Failed to do the thing' } }, async () => { throw 42 })
    app.get('/api/not-there', { config: { failureMessage: 'Failed to do the thing' } }, async () => { throw new HttpError(404, 'Thing not found', 'No thing here') })
    assert.deepEqual((await app.inject('/api/fails')).json(), { message: 'Failed to do the thing', error: 'node 1 failed: connection refused' })
    assert.deepEqual((await app.inject('/api/fails-oddly')).json(), { message: 'Failed to do the thing', error: 'Unknown error' })
    const notThere = await app.inject('/api/not-there')
    assert.equal(notThere.statusCode, 404, 'a deliberate 4xx keeps its status')
    assert.deepEqual(notThere.json(), { message: 'Thing not found', error: 'No thing here' })
  })

  it('answers 400 when the client refused a call before the wire, whatever the route\'s failure message', async (t) => {
    const app = await appWith(t)
    app.get('/api/refused', { config: { failureMessage: 'Search operation failed' } }, async () => {
      throw new RpcInvalidParamsError('search', 'keyword must be a string of at most 1000 characters')
    })
    const response = await app.inject('/api/refused')
    assert.equal(response.statusCode, 400)
    assert.deepEqual(response.json(), { message: 'Bad request', error: 'Invalid parameters for search: keyword must be a string of at most 1000 characters' })
  })

  it('adds code and Retry-After to a failed route\'s 500 only when the failure is temporary', async (t) => {
    const app = await appWith(t, { NODE_ENV: 'production' })
    const failures: Record<string, Error> = {
      unavailable: new RpcUnavailableError('search', 'No Pocketnet node could answer search: node 1 failed: connection refused', { cause: new AggregateError([]) }),
      timeout: new RpcTimeoutError('search', 'No Pocketnet node answered search in time: node 1 did not answer search within 2000 ms', { timeoutMs: 2000 }),
      transport: new RpcTransportError('search', 'node 1 answered HTTP 502 with a body that is not JSON'),
      node: new RpcNodeError('search', { rpcCode: -8, rpcMessage: 'Invalid parameter', httpStatus: 500, retryable: false, nodeName: 'node 1' }),
      closed: new RpcClosedError('search'),
    }
    for (const [name, err] of Object.entries(failures)) {
      app.get(`/api/fails/${name}`, { config: { failureMessage: 'Search operation failed' } }, async () => { throw err })
    }
    const answers = Object.fromEntries(await Promise.all(Object.keys(failures).map(async name => {
      const response = await app.inject(`/api/fails/${name}`)
      return [name, { status: response.statusCode, retryAfter: response.headers['retry-after'], body: response.json() }] as const
    })))
    for (const name of ['unavailable', 'timeout', 'transport']) {
      const err = failures[name] as Error & { code: string }
      assert.deepEqual(answers[name], { status: 500, retryAfter: '2', body: { message: 'Search operation failed', error: err.message, code: err.code } }, name)
    }
    for (const name of ['node', 'closed']) {
      const err = failures[name] as Error
      assert.deepEqual(answers[name], { status: 500, retryAfter: undefined, body: { message: 'Search operation failed', error: err.message } }, name)
    }
  })

  it('never answers HTML, whatever the path', async (t) => {
    const app = await appWith(t)
    for (const url of ['/%', '/api/user/%E0%A4%A', '/api/search?keyword=a&page=%', '/../../etc/passwd']) {
      const response = await app.inject({ method: 'GET', url })
      assert.match(response.headers['content-type'] as string, /application\/json/, url)
      assert.ok(response.statusCode >= 400 && response.statusCode < 500, `${url}: ${response.statusCode}`)
      assert.equal(typeof response.json().message, 'string')
    }
  })
})
