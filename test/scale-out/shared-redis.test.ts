/**
 * Two service instances (two apps, each on its own loopback port) with one real redis-server and
 * one emulator: what one instance fetched or counted, the other sees; and losing Redis costs only
 * that sharing.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { describe, it, type TestContext } from 'node:test'
import { startApp, type TestApp } from '../helpers/build-app.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { startRedis, type TestRedis } from '../helpers/start-redis.js'
import { waitFor } from '../helpers/wait-for.js'

const root = new URL('../../', import.meta.url)

async function twoInstances (t: TestContext, redis: TestRedis, nodes: string[], env: Record<string, string> = {}): Promise<[TestApp, TestApp]> {
  const start = () => startApp(t, { nodes, env: { REDIS_URL: redis.url, ...env } })
  const instances = await Promise.all([start(), start()])
  await waitFor('both instances to reach Redis', () => instances.every(({ app }) => app.redis?.available === true && app.redis.listening))
  return instances
}

function metric (text: string, line: RegExp): number {
  return [...text.matchAll(new RegExp(`^${line.source} (\\d+)$`, 'gm'))].reduce((sum, match) => sum + Number(match[1]), 0)
}

describe('instances sharing one Redis', () => {
  it('a search asked on A and then on B reaches the node once', async (t) => {
    const [redis, node] = await Promise.all([startRedis(t), startEmulator(t)])
    const [a, b] = await twoInstances(t, redis, [node.url])
    node.clearCalls()
    const first = await a.get('/api/search?keyword=bitcoin')
    const second = await b.get('/api/search?keyword=bitcoin')
    assert.equal(first.status, 200)
    assert.equal(second.status, 200)
    assert.deepEqual(second.body, first.body)
    assert.equal(node.callsTo('search').length, 1)
    const metrics = await (await fetch(`${b.url}/metrics`)).text()
    assert.equal(metric(metrics, /pocketnet_shared_cache_lookups_total\{method="search",outcome="hit"\}/), 1)
    assert.ok(metric(metrics, /redis_operations_total\{operation="lookup",outcome="ok"\}/) >= 1)
  })

  it('20 identical new searches at once over A and B make one call', async (t) => {
    const [redis, node] = await Promise.all([startRedis(t), startEmulator(t, { latencyMs: 200 })])
    const [a, b] = await twoInstances(t, redis, [node.url])
    node.clearCalls()
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).get('/api/search?keyword=satoshi')))
    assert.deepEqual(answers.map(answer => answer.status), Array(20).fill(200))
    for (const answer of answers) assert.deepEqual(answer.body, answers[0]!.body)
    assert.equal(node.callsTo('search').length, 1)
  })

  it('RATE_LIMIT_MAX holds across instances, on the fast path too', async (t) => {
    const [redis, node] = await Promise.all([startRedis(t), startEmulator(t)])
    const [a, b] = await twoInstances(t, redis, [node.url], { RATE_LIMIT_MAX: '6' })
    const statuses: number[] = []
    const remaining: Array<string | null> = []
    for (let i = 0; i < 10; i++) {
      const { status, headers, body } = await (i % 2 === 0 ? a : b).get('/api/nodeinfo')
      statuses.push(status)
      remaining.push(headers.get('x-ratelimit-remaining'))
      if (status === 429) {
        assert.equal(body.message, 'Too many requests')
        assert.ok(Number(headers.get('retry-after')) > 0)
      }
    }
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200, 429, 429, 429, 429])
    assert.deepEqual(remaining.slice(0, 6), ['5', '4', '3', '2', '1', '0'])
    // Read in process: /metrics counts toward the rate limit these requests used up.
    const fastAnswers = await Promise.all([a, b].map(async ({ app }) => metric(await app.metrics.scrape(), /http_fast_path_answers_total\{route="\/api\/nodeinfo"\}/)))
    assert.ok(fastAnswers.every(count => count > 0), `the fast path answered on both instances (${fastAnswers})`)
  })

  it('a route with limits of its own counts them across instances, apart from the global limit', async (t) => {
    const [redis, node] = await Promise.all([startRedis(t), startEmulator(t)])
    const extend = (app: TestApp['app']) => app.get('/api/limited', { config: { rateLimit: { max: 2, timeWindow: 60_000 } } }, async () => ({ message: 'ok' }))
    const start = () => startApp(t, { nodes: [node.url], env: { REDIS_URL: redis.url, RATE_LIMIT_MAX: '100' }, extend })
    const [a, b] = await Promise.all([start(), start()])
    await waitFor('both instances to reach Redis', () => [a, b].every(({ app }) => app.redis?.available === true))
    const statuses = []
    for (const service of [a, b, a, b]) statuses.push((await service.get('/api/limited')).status)
    assert.deepEqual(statuses, [200, 200, 429, 429])
    assert.equal((await a.get('/api/nodeinfo')).headers.get('x-ratelimit-remaining'), '99', 'the global count is its own')
  })

  it('answers while Redis stalls: each operation gives up within its budget', async (t) => {
    const [redis, node] = await Promise.all([startRedis(t), startEmulator(t)])
    const [a, b] = await twoInstances(t, redis, [node.url], { RATE_LIMIT_MAX: '1000', REDIS_TIMEOUT_MS: '50' })
    redis.pause()
    const answers = await Promise.all([a, b].flatMap(service => [0, 1, 2].map(i => service.get(`/api/search?keyword=stalled${i}`))))
    assert.deepEqual(answers.map(answer => answer.status), Array(6).fill(200))
    const metrics = await (await fetch(`${a.url}/metrics`)).text()
    assert.ok(metric(metrics, /redis_operations_total\{operation="[a-z]+",outcome="timeout"\}/) >= 1, 'an operation timed out')
    assert.equal((await a.get('/readyz')).body.data.redis, 'degraded')
    redis.resume()
  })

  it('serves on without Redis, says so in /readyz, and shares again once Redis is back', async (t) => {
    const [redis, node] = await Promise.all([startRedis(t), startEmulator(t)])
    const [a, b] = await twoInstances(t, redis, [node.url], { RATE_LIMIT_MAX: '1000' })
    assert.equal((await a.get('/readyz')).body.data.redis, 'ok')
    node.clearCalls()
    await redis.kill()
    const answers = []
    for (let i = 0; i < 20; i++) {
      for (const service of [a, b]) answers.push(await service.get(`/api/search?keyword=gone${i % 5}`))
    }
    assert.deepEqual(answers.map(answer => answer.status), Array(40).fill(200))
    assert.equal(node.callsTo('search').length, 10, 'each instance asked once per search, its own cache in front')
    const readiness = await a.get('/readyz')
    assert.equal(readiness.status, 200, 'Redis never fails readiness')
    assert.equal(readiness.body.data.redis, 'degraded')

    await redis.restart()
    await waitFor('the instances to reconnect', () => [a, b].every(({ app }) => app.redis?.available === true && app.redis.listening))
    node.clearCalls()
    assert.equal((await a.get('/api/search?keyword=back')).status, 200)
    assert.equal((await b.get('/api/search?keyword=back')).status, 200)
    assert.equal(node.callsTo('search').length, 1, 'shared again, without a restart')
    assert.equal((await b.get('/readyz')).body.data.redis, 'ok')
  })
})

describe('REDIS_URL', () => {
  it('a malformed value stops the service at start with one line naming it, and no password', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      cwd: root,
      env: { ...process.env, REDIS_URL: 'http://user:secret@127.0.0.1:6379', POCKETNET_NODES: 'http://127.0.0.1:9', LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', chunk => { stderr += chunk })
    const [code] = await once(child, 'exit')
    assert.equal(code, 1)
    assert.match(stderr, /^- REDIS_URL must be empty \(no Redis\), or redis:\/\//m)
    assert.doesNotMatch(stderr, /secret/)
  })
})
