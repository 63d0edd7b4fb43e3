import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { startApp } from '../helpers/build-app.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { waitFor } from '../helpers/wait-for.js'

// A node URL that nothing listens on, for tests that never reach a node.
const NO_NODE = 'http://127.0.0.1:9'

/** An error like the RPC client's when every node is at capacity (pocketnet-client's RPC_ERR_OVERLOADED). */
function overloaded (fields: Record<string, unknown>): Error {
  return Object.assign(new Error('Every Pocketnet node is at capacity: getnodeinfo would wait past its deadline'), { code: 'RPC_ERR_OVERLOADED', ...fields })
}

/**
 * Blocks the event loop for `ms`, as a flood of work would, without the CPU that work would cost
 * (the thread sleeps): the loop's delay and utilization see the same, the suite's other lanes get
 * the core.
 */
function block (ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

/**
 * Overloads the process as a flood of work would: the event loop blocked 100 ms at a time, with
 * a turn of the loop in between so that the plugin's timers run, until a sample (one a second)
 * sees the delay. The state then holds until the next sample, a second later.
 */
async function overload (app: FastifyInstance): Promise<void> {
  await waitFor('the event loop delay to be sampled over the limit', () => {
    if (app.isUnderPressure()) return true
    block(100)
    return false
  })
}

describe('overload of the Pocketnet nodes (RPC_ERR_OVERLOADED)', () => {
  async function appThrowing (t: { after (fn: () => unknown): void }, err: Error, lines: string[] = []) {
    const app = await buildApp(loadConfig({ LOG_LEVEL: 'info', POCKETNET_NODES: NO_NODE }), { logStream: { write: line => lines.push(line) } })
    t.after(() => app.close())
    // A route with a failure message: overload is not a failure, and answers 503 all the same.
    app.get('/api/busy', { config: { failureMessage: 'Failed to do the thing' } }, async () => { throw err })
    return app
  }

  it('answers 503 in the envelope with Retry-After in whole seconds, rounded up', async (t) => {
    const lines: string[] = []
    const app = await appThrowing(t, overloaded({ retryAfterMs: 1500, method: 'getnodeinfo' }), lines)
    const response = await app.inject({ method: 'GET', url: '/api/busy' })
    assert.equal(response.statusCode, 503)
    assert.equal(response.headers['retry-after'], '2')
    assert.match(response.headers['content-type'] as string, /application\/json/)
    assert.deepEqual(response.json(), { message: 'Service unavailable', error: 'Every Pocketnet node is at capacity: getnodeinfo would wait past its deadline' })
    const shed = lines.map(line => JSON.parse(line)).filter(line => line.code === 'RPC_ERR_OVERLOADED')
    assert.equal(shed.length, 1)
    assert.equal(shed[0].level, 30, 'logged at info: load, not a fault')
  })

  it('answers Retry-After 1 when retryAfterMs is missing, not a number, or under a second', async (t) => {
    for (const fields of [{}, { retryAfterMs: 'soon' }, { retryAfterMs: Number.NaN }, { retryAfterMs: Infinity }, { retryAfterMs: 1 }, { retryAfterMs: 1000 }]) {
      const app = await appThrowing(t, overloaded(fields))
      const response = await app.inject({ method: 'GET', url: '/api/busy' })
      assert.equal(response.statusCode, 503, JSON.stringify(fields))
      assert.equal(response.headers['retry-after'], '1', JSON.stringify(fields))
      assert.equal(response.json().message, 'Service unavailable')
    }
  })
})

describe('overload of the event loop (MAX_EVENT_LOOP_DELAY_MS)', () => {
  it('answers 503 in the envelope with Retry-After, except /healthz and /metrics', async (t) => {
    const service = await startApp(t, { nodes: [NO_NODE], env: { MAX_EVENT_LOOP_DELAY_MS: '50' } })
    await overload(service.app)
    const [api, readyz, healthz, metrics] = await Promise.all([service.get('/api/nodeinfo'), service.get('/readyz'), service.get('/healthz'), service.get('/metrics')])
    assert.equal(api.status, 503)
    assert.equal(api.headers.get('retry-after'), '1')
    assert.match(api.headers.get('content-type') ?? '', /application\/json/)
    assert.equal(api.body.message, 'Service unavailable')
    assert.match(api.body.error, /^The server is overloaded: its event loop is delayed \d+ ms \(limit 50 ms\); retry after 1 s$/)
    assert.deepEqual(Object.keys(api.body).sort(), ['error', 'message'])
    assert.equal(readyz.status, 503, 'an overloaded instance leaves the rotation')
    assert.equal(readyz.headers.get('retry-after'), '1')
    assert.deepEqual(Object.keys(readyz.body).sort(), ['error', 'message'])
    assert.equal(readyz.body.message, 'Service unavailable')
    assert.equal(healthz.status, 200, 'a busy process is alive')
    assert.deepEqual(healthz.body, { message: 'Alive' })
    assert.equal(metrics.status, 200, 'scrapes work under load')
    assert.match(String(metrics.body), /http_requests_total\{route="\/api\/nodeinfo",method="GET",status="503"\} 1/)
  })

  it('lets the fast path replay fresh answers under pressure, and refuses the requests that would do work', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { MAX_EVENT_LOOP_DELAY_MS: '50', CACHE_TTL_NODEINFO_MS: '600000' } })
    // Fastify answers the first and records the second: the third is the fast path's.
    for (let i = 0; i < 2; i++) assert.equal((await service.get('/api/nodeinfo')).status, 200)
    await overload(service.app)
    const [replayed, search] = await Promise.all([service.get('/api/nodeinfo'), service.get('/api/search?keyword=bitcoin')])
    assert.equal(replayed.status, 200)
    assert.equal(replayed.body.message, 'Node information retrieved successfully')
    assert.equal(search.status, 503)
    assert.equal(search.headers.get('retry-after'), '1')
  })

  it('checks nothing when MAX_EVENT_LOOP_DELAY_MS is 0', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { MAX_EVENT_LOOP_DELAY_MS: '0', CACHE_TTL_NODEINFO_MS: '0' } })
    assert.equal(service.app.isUnderPressure(), false)
    // Blocked across more than one sample interval: a sampler, had there been one, would see it.
    for (let i = 0; i < 12; i++) {
      block(100)
      await new Promise(resolve => setTimeout(resolve, 5))
    }
    assert.equal(service.app.isUnderPressure(), false)
    const response = await service.get('/api/nodeinfo')
    assert.equal(response.status, 200)
  })
})
