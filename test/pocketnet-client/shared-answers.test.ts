/**
 * The answer cache's second level, with a real redis-server and two clients (as two instances
 * would have) in front of one emulator, which counts the calls that reach a node.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { describe, it, type TestContext } from 'node:test'
import { Redis } from 'ioredis'
import { PocketNetProxyApi, RedisLink, type RedisLinkOptions, type SharedOutcome } from '../../packages/pocketnet-client/index.js'
import { SharedAnswers } from '../../packages/pocketnet-client/redis/shared-answers.js'
import type { EmulatorOptions } from '../../devnode/server.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { startRedis, type TestRedis } from '../helpers/start-redis.js'
import { waitFor } from '../helpers/wait-for.js'

const SEARCH = { keyword: 'bitcoin', type: 'content', pageStart: 0, pageSize: 10 } as const

function link (t: TestContext, redis: TestRedis, options: Partial<RedisLinkOptions> = {}): RedisLink {
  const created = new RedisLink({ url: redis.url, keyPrefix: 'test:', ...options })
  t.after(() => created.close())
  return created
}

async function client (t: TestContext, nodes: string[], redis: RedisLink, outcomes: SharedOutcome[] = []): Promise<PocketNetProxyApi> {
  const api = await PocketNetProxyApi.create({ nodes, hedging: false, redis, onSharedLookup: (_method, outcome) => outcomes.push(outcome) })
  t.after(() => api.close())
  return api
}

async function connected (...links: RedisLink[]): Promise<void> {
  await waitFor('the Redis links to connect', () => links.every(each => each.available && each.listening))
}

/** A redis-server, an emulator, and two clients that share the one through the other (as two instances would). */
async function twoClients (t: TestContext, emulator: EmulatorOptions = {}) {
  const [redis, node] = await Promise.all([startRedis(t), startEmulator(t, emulator)])
  const [linkA, linkB] = [link(t, redis), link(t, redis)]
  await connected(linkA, linkB)
  const outcomes: SharedOutcome[] = []
  const a = await client(t, [node.url], linkA, outcomes)
  const b = await client(t, [node.url], linkB, outcomes)
  return { redis, node, a, b, linkA, linkB, outcomes }
}

/** A redis-server, one second level on it, a client of its own to look at Redis, and the digest of the call `k`. */
async function oneSharedLevel (t: TestContext, options: Partial<RedisLinkOptions> = {}) {
  const redis = await startRedis(t)
  const own = link(t, redis, options)
  await connected(own)
  const outcomes: SharedOutcome[] = []
  const shared = new SharedAnswers({ link: own, deadlineMs: 5000, fetchReserveMs: 100, onLookup: (_method, outcome) => outcomes.push(outcome) })
  const raw = new Redis(redis.url)
  t.after(() => raw.quit())
  return { redis, shared, outcomes, raw, digest: createHash('sha256').update('k').digest('base64url') }
}

describe('answers shared through Redis', () => {
  it('an answer one client fetched serves another without a call', async (t) => {
    const { node, a, b, outcomes } = await twoClients(t)
    const first = await a.rpc.search(SEARCH)
    const second = await b.rpc.search(SEARCH)
    assert.deepEqual(second, first)
    assert.equal(node.callsTo('search').length, 1)
    assert.deepEqual(outcomes, ['miss', 'hit'])
  })

  it('20 identical calls at once on two clients make one call', async (t) => {
    const { node, a, b, outcomes } = await twoClients(t, { latencyMs: 200 })
    node.clearCalls()
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).rpc.search(SEARCH)))
    assert.equal(node.callsTo('search').length, 1)
    for (const answer of answers) assert.deepEqual(answer, answers[0])
    // Each client shares its own callers' call in-process; the two clients meet in Redis.
    assert.deepEqual(outcomes.sort(), ['joined', 'miss'])
  })

  it('never shares a failure: each client then asks a node itself', async (t) => {
    const { redis, node, a, b } = await twoClients(t, { latencyMs: 100 })
    node.clearCalls()
    node.setFault({ kind: 'rpc-error', code: -8, message: 'Invalid parameter', status: 200 }, { method: 'search' })
    const results = await Promise.allSettled([a.rpc.search(SEARCH), b.rpc.search(SEARCH)])
    assert.deepEqual(results.map(result => result.status), ['rejected', 'rejected'])
    assert.equal(node.callsTo('search').length, 2, 'the waiting client asked on its own after the failure')
    const raw = new Redis(redis.url)
    t.after(() => raw.quit())
    assert.deepEqual(await raw.keys('test:answer:*'), [])
  })

  it('takes over the call when the lease holder dies', async (t) => {
    const { shared, outcomes, raw, digest } = await oneSharedLevel(t)
    // A lease its holder took for 300 ms and never released: the holder died.
    await raw.set(`test:lease:search::${digest}`, 'dead holder', 'PX', 300)
    let fetches = 0
    const answer = await shared.load({ method: 'search', key: 'k', ttlMs: 10_000, keep: () => true }, async () => {
      fetches++
      assert.equal(await raw.exists(`test:lease:search::${digest}`), 1, 'fetched under a lease of its own')
      return { value: 'v', bytes: 1 }
    })
    assert.equal(answer.value, 'v')
    assert.equal(fetches, 1)
    assert.deepEqual(outcomes, ['miss'])
    assert.equal(await raw.exists(`test:lease:search::${digest}`), 0, 'the new holder released its lease')
  })

  it('releases a lease that its lookup took after the budget ran out, and stores the answer', async (t) => {
    const { redis, shared, outcomes, raw, digest } = await oneSharedLevel(t, { timeoutMs: 20 })
    // Redis stalls: the lookup outlives its budget, then runs (and takes the lease) once Redis goes on.
    await raw.call('CLIENT', 'PAUSE', '300', 'ALL')
    const answer = await shared.load({ method: 'search', key: 'k', ttlMs: 10_000, keep: () => true }, async () => ({ value: 'v', bytes: 1 }))
    assert.equal(answer.value, 'v')
    assert.deepEqual(outcomes, ['unshared'])
    const checker = new Redis(redis.url)
    t.after(() => checker.quit())
    for (let attempt = 0; await checker.exists(`test:answer:search::${digest}`) === 0; attempt++) {
      assert.ok(attempt < 3000, 'the answer was stored once Redis went on')
      await new Promise(resolve => setTimeout(resolve, 10))
    }
    assert.equal(await checker.exists(`test:lease:search::${digest}`), 0, 'the lease the late lookup took was released')
  })

  it('shares answers that depend on the chain tip only at the same height', async (t) => {
    const { node, a, b } = await twoClients(t)
    node.clearCalls()
    const address = node.dataset.users[0]!.address
    await a.rpc.getuserprofile({ address })
    await b.rpc.getuserprofile({ address })
    assert.equal(node.callsTo('getuserprofile').length, 1)
    node.mineBlock()
    // Each learns of the new block from a node (its own call here; its probes otherwise).
    await a.rpc.getnodeinfo()
    await b.rpc.getnodeinfo()
    assert.deepEqual([a.bestHeight, b.bestHeight], [node.height, node.height])
    await b.rpc.getuserprofile({ address })
    assert.equal(node.callsTo('getuserprofile').length, 2, 'the answer of the old height was not used')
    await a.rpc.getuserprofile({ address })
    assert.equal(node.callsTo('getuserprofile').length, 2, 'the answer of the new height is shared')
  })

  it('does not share an answer larger than the bound', async (t) => {
    const redis = await startRedis(t)
    const linkA = link(t, redis)
    await connected(linkA)
    const shared = new SharedAnswers({ link: linkA, deadlineMs: 1000, fetchReserveMs: 100, maxValueBytes: 64 })
    const call = { method: 'search', key: 'k', ttlMs: 10_000, keep: () => true }
    let size = 100
    let fetches = 0
    const fetch = async () => { fetches++; return { value: 'x'.repeat(size), bytes: size } }
    await shared.load(call, fetch)
    await shared.load(call, fetch)
    assert.equal(fetches, 2, 'the large answer was not stored')
    size = 10
    await shared.load(call, fetch)
    const small = await shared.load(call, fetch)
    assert.equal(fetches, 3, 'a small answer is stored and read back')
    assert.deepEqual(small, { value: 'x'.repeat(10), bytes: 10, freshForMs: small.freshForMs })
    assert.ok(small.freshForMs !== undefined && small.freshForMs > 0 && small.freshForMs <= 10_000)
  })

  it('goes on without Redis while it is gone, and shares again when it is back', async (t) => {
    const { redis, node, a, b, linkA, linkB, outcomes } = await twoClients(t)
    await redis.kill()
    node.clearCalls()
    await a.rpc.search({ ...SEARCH, keyword: 'while gone' })
    await b.rpc.search({ ...SEARCH, keyword: 'while gone' })
    assert.equal(node.callsTo('search').length, 2, 'each asked a node')
    assert.deepEqual(outcomes, ['unshared', 'unshared'])
    await redis.restart()
    await connected(linkA, linkB)
    node.clearCalls()
    outcomes.length = 0
    await a.rpc.search({ ...SEARCH, keyword: 'back again' })
    await b.rpc.search({ ...SEARCH, keyword: 'back again' })
    assert.equal(node.callsTo('search').length, 1)
    assert.deepEqual(outcomes, ['miss', 'hit'])
  })
})
