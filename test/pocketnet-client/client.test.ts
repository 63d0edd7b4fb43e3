import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import { DEFAULT_NODES, PocketNetProxyApi, clientOptionsFromEnv, type ClientOptions, type RpcNodeError } from '../../packages/pocketnet-client/index.js'
import { resolveOptions } from '../../packages/pocketnet-client/options.js'
import { startEmulator, startEmulators } from '../helpers/start-emulator.js'
import { waitFor } from '../helpers/wait-for.js'

// The answer cache is off unless a test turns it on: these tests change a node's behaviour
// between identical calls.
const NO_CACHE = { ttlMs: { getnodeinfo: 0, getuserprofile: 0, search: 0 } }

async function createClient (t: { after (fn: () => unknown): void }, options: ClientOptions) {
  const api = await PocketNetProxyApi.create({ cache: NO_CACHE, ...options })
  t.after(() => api.close())
  return api
}

describe('PocketNetProxyApi', () => {
  it('resolves once a node answered, knowing its version and height', async (t) => {
    const node = await startEmulator(t)
    const api = await createClient(t, { nodes: [node.url] })
    const [snapshot] = api.nodes()
    assert.equal(snapshot?.usable, true)
    assert.equal(snapshot?.version, '0.22.7')
    assert.equal(snapshot?.height, node.height)
  })

  it('answers typed results: node info, profiles, content pages', async (t) => {
    const node = await startEmulator(t)
    const api = await createClient(t, { nodes: [node.url] })
    const info = await api.rpc.getnodeinfo()
    assert.equal(info.lastblock.height, node.height)
    const users = node.dataset.users.filter((user: { deleted?: boolean }) => !user.deleted).slice(0, 2)
    const profiles = await api.rpc.getuserprofile({ address: users.map((user: { address: string }) => user.address) })
    assert.deepEqual(profiles.map(profile => profile.address), users.map((user: { address: string }) => user.address).sort())
    const page = await api.rpc.search({ keyword: 'bitcoin', type: 'content', pageStart: 0, pageSize: 3 })
    assert.equal(page.results.length, 3)
    assert.equal(page.hasMore, true)
    const name = node.dataset.users[0]?.name as string
    const found = await api.rpc.search({ keyword: name, type: 'users' })
    assert.ok(Array.isArray(found.users?.data))
    await assert.rejects(api.rpc.search({ keyword: 'bit', type: 'tags' as 'users' }), { code: 'RPC_ERR_INVALID_PARAMS', message: /type tags is broken on 0.22 nodes .*use gettags/ })
  })

  it('drops the answers that follow the tip when told of a new block (noteBlock), once per height', async (t) => {
    const node = await startEmulator(t)
    // No probe during the test: every getnodeinfo the node sees is the test's.
    const api = await PocketNetProxyApi.create({ nodes: [node.url], probeIntervalMs: 3_600_000, cache: { ttlMs: { getnodeinfo: 60_000, search: 60_000 } } })
    t.after(() => api.close())
    node.clearCalls()
    const ask = async (): Promise<void> => {
      await api.rpc.getnodeinfo()
      await api.rpc.search({ keyword: 'bitcoin', type: 'content' })
    }
    await ask()
    await ask()
    assert.deepEqual([node.callsTo('getnodeinfo').length, node.callsTo('search').length], [1, 1], 'both cached')
    api.noteBlock(node.height + 1)
    await ask()
    assert.deepEqual([node.callsTo('getnodeinfo').length, node.callsTo('search').length], [2, 1], 'the tip answer dropped, the search kept')
    api.noteBlock(node.height + 1)
    api.noteBlock(node.height)
    await ask()
    assert.equal(node.callsTo('getnodeinfo').length, 2, 'a height already seen, or a lower one, drops nothing')
  })

  it('tells the tip each node reports, from its probes and a caller\'s getnodeinfo, to every watcher until it stops', async (t) => {
    const node = await startEmulator(t)
    // No probe during the test but the start's: every later report comes from the test's calls.
    const api = await createClient(t, { nodes: [node.url], probeIntervalMs: 3_600_000 })
    assert.equal(api.nodes()[0]?.blockHash, node.chain.tip.hash, 'the start\'s probe')
    const heard: unknown[] = []
    const stop = api.watchNodeTips(report => heard.push(report))
    api.watchNodeTips(() => { throw new Error('a watcher\'s bug') })
    node.mineBlock()
    await api.rpc.getnodeinfo()
    assert.deepEqual(heard, [{ node: 'node 1', height: node.height, blockHash: node.chain.tip.hash }])
    assert.equal(api.nodes()[0]?.blockHash, node.chain.tip.hash)
    assert.equal(api.nodes()[0]?.circuit, 'closed', 'a watcher that throws fails nothing')
    stop()
    await api.rpc.getnodeinfo({ fresh: true })
    assert.equal(heard.length, 1)
  })

  it('takes an unknown txid (and a param of the wrong type) as the request\'s fault: one node asked, none blamed', async (t) => {
    const [a, b] = await startEmulators(t, 2)
    assert.ok(a && b)
    const api = await createClient(t, { nodes: [a.url, b.url], hedging: false })
    a.clearCalls()
    b.clearCalls()
    for (const params of [['ab'.repeat(32)], [['not a string'], 1]] as const) {
      const method = params.length === 1 ? 'getrawtransaction' : 'getuserprofile'
      await assert.rejects(api.callRaw(method, [...params]), (err: RpcNodeError) => err.code === 'RPC_ERR_NODE' && err.rpcCode === -32603 && !err.retryable)
    }
    assert.equal(a.callsTo('getrawtransaction').length + b.callsTo('getrawtransaction').length, 1, 'not asked of the other node')
    assert.deepEqual(api.nodes().map(node => node.circuit), ['closed', 'closed'])
  })

  it('rejects at creation, naming each node and why, when none answers', async (t) => {
    const [a, b] = await startEmulators(t, 2)
    assert.ok(a && b)
    await a.stop()
    b.setFault({ kind: 'html', status: 502 })
    await assert.rejects(PocketNetProxyApi.create({ nodes: [a.url, b.url] }), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'RPC_ERR_UNAVAILABLE')
      assert.equal(err.message, 'No Pocketnet node answered at start-up (2 tried): node 1 failed: connection refused; node 2 answered HTTP 502 with a body that is not JSON')
      return true
    })
  })

  it('fails over to the next node after a transport failure, and stops using the failed one', async (t) => {
    // b answers slower and one block higher: a is the pool's first pick, and answers are told apart.
    const a = await startEmulator(t)
    const b = await startEmulator(t, { latencyMs: 40, height: 3_100_001 })
    const api = await createClient(t, { nodes: [a.url, b.url], hedging: false })
    a.setFault({ kind: 'garbage' })
    for (let i = 0; i < 4; i++) {
      const info = await api.rpc.getnodeinfo()
      assert.equal(info.lastblock.height, b.height)
    }
    assert.equal(a.callsTo('getnodeinfo').length, 2, 'the start-up probe and one failed call')
    assert.equal(api.nodes()[0]?.circuit, 'open')
  })

  it('fails over when a node hangs, within the deadline', async (t) => {
    const [a, b] = await startEmulators(t, 2)
    assert.ok(a && b)
    const api = await createClient(t, { nodes: [a.url, b.url], deadlineMs: 2000, attemptTimeoutMs: 200, hedging: false })
    a.setFault({ kind: 'hang' }, { method: 'search' })
    const results = await Promise.all([0, 1].map(() => api.rpc.search({ keyword: 'bitcoin', type: 'content' })))
    for (const page of results) assert.equal(page.results.length, 20)
  })

  it('returns an RPC error about the request without trying another node', async (t) => {
    const [a, b] = await startEmulators(t, 2)
    assert.ok(a && b)
    const api = await createClient(t, { nodes: [a.url, b.url] })
    a.setFault({ kind: 'rpc-error', code: -8, message: 'Invalid parameter' }, { method: 'search' })
    b.setFault({ kind: 'rpc-error', code: -8, message: 'Invalid parameter' }, { method: 'search' })
    await assert.rejects(api.rpc.search({ keyword: 'x', type: 'content' }), (err: Error & { code?: string, rpcCode?: number }) => {
      assert.equal(err.code, 'RPC_ERR_NODE')
      assert.equal(err.rpcCode, -8)
      return true
    })
    assert.equal(a.callsTo('search').length + b.callsTo('search').length, 1)
  })

  it('retries elsewhere when the RPC error says the node is unwell, and stops using that node', async (t) => {
    const [a, b] = await startEmulators(t, 2)
    assert.ok(a && b)
    const events: string[] = []
    const api = await createClient(t, { nodes: [a.url, b.url], hedging: false, onAttempt: event => events.push(`${event.node} ${event.outcome}`) })
    a.setFault({ kind: 'rpc-error', code: -28, message: 'Loading block index...' }, { method: 'search' })
    for (let i = 0; i < 10; i++) {
      const page = await api.rpc.search({ keyword: 'bitcoin', type: 'content', pageSize: 2 })
      assert.equal(page.results.length, 2)
    }
    assert.ok(a.callsTo('search').length <= 1)
    assert.equal(events.filter(event => event === 'node 2 ok').length, 10)
    assert.deepEqual(events.filter(event => event.startsWith('node 1')), a.callsTo('search').length ? ['node 1 rpc-error'] : [])
  })

  it('cancels the attempt a hedge overtook, without waiting for its node', async (t) => {
    const [a, b] = await startEmulators(t, 2)
    assert.ok(a && b)
    const events: Array<{ node: string, outcome: string, durationMs: number, hedge: boolean }> = []
    const api = await createClient(t, { nodes: [a.url, b.url], onAttempt: event => events.push(event) })
    a.setFault({ kind: 'latency', ms: 3000 }, { method: 'search' })
    // Many calls at once: calls in flight make a node rate worse, so some start on node 1, and
    // those are hedged on node 2 (after at most 1 s).
    const pages = await Promise.all(Array.from({ length: 30 }, (_, i) => api.rpc.search({ keyword: 'bitcoin', type: 'content', pageStart: i, pageSize: 1 })))
    for (const page of pages) assert.ok(Array.isArray(page.results))
    const overtaken = events.filter(event => event.node === 'node 1')
    assert.ok(overtaken.length > 0, 'some calls started on node 1')
    // Cancelled, not answered: an attempt that had waited for node 1 would have ended 'ok' (its
    // answer comes, late, after 3 s); all 30 calls were answered before that by node 2.
    for (const event of overtaken) assert.equal(event.outcome, 'cancelled')
    assert.ok(events.some(event => event.node === 'node 2' && event.hedge && event.outcome === 'ok'))
  })

  it('says which nodes failed and why when all fail, without their URLs', async (t) => {
    const [a, b] = await startEmulators(t, 2)
    assert.ok(a && b)
    const api = await createClient(t, { nodes: [a.url, b.url] })
    a.setFault({ kind: 'work-queue' })
    b.setFault({ kind: 'drop' })
    await assert.rejects(api.rpc.getnodeinfo(), (err: Error & { code?: string, cause?: AggregateError }) => {
      assert.equal(err.code, 'RPC_ERR_UNAVAILABLE')
      assert.match(err.message, /node 1 is overloaded \(Work queue depth exceeded\)/)
      assert.match(err.message, /node 2 failed: connection/)
      assert.doesNotMatch(err.message, /127\.0\.0\.1/)
      assert.equal(err.cause?.errors.length, 2)
      return true
    })
  })

  it('times out with RPC_ERR_TIMEOUT when every node hangs', async (t) => {
    const node = await startEmulator(t)
    const api = await createClient(t, { nodes: [node.url], attemptTimeoutMs: 200 })
    node.setFault({ kind: 'hang' })
    await assert.rejects(api.rpc.getnodeinfo(), (err: Error & { code?: string, cause?: AggregateError }) => {
      assert.equal(err.code, 'RPC_ERR_TIMEOUT')
      // The one node got its attempt timeout, not the whole deadline.
      assert.deepEqual(err.cause?.errors.map(attempt => (attempt as { timeoutMs?: number }).timeoutMs), [200])
      assert.match(err.message, /node 1 did not answer getnodeinfo within 200 ms/)
      return true
    })
  })

  it('reads an answer that starts with a byte order mark, and an answer in many chunks', async (t) => {
    const node = await startEmulator(t)
    // A node that answers like the emulator, but with a UTF-8 byte order mark first, in 100-byte writes.
    const proxy = createServer((request, response) => {
      const chunks: Buffer[] = []
      request.on('data', (chunk: Buffer) => chunks.push(chunk))
      request.on('end', () => {
        fetch(`${node.url}/public/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) })
          .then(async answer => {
            const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(await answer.arrayBuffer())])
            response.writeHead(answer.status, { 'content-type': 'application/json', 'content-length': body.length })
            for (let at = 0; at < body.length; at += 100) response.write(body.subarray(at, at + 100))
            response.end()
          }, () => response.destroy())
      })
    })
    await new Promise<void>(resolve => proxy.listen(0, '127.0.0.1', resolve))
    t.after(() => new Promise(resolve => proxy.close(resolve)))
    const api = await createClient(t, { nodes: [`http://127.0.0.1:${(proxy.address() as AddressInfo).port}`] })
    const page = await api.rpc.search({ keyword: 'bitcoin', type: 'content', pageSize: 5 })
    assert.equal(page.results.length, 5)
    assert.equal((await api.rpc.getnodeinfo()).lastblock.height, node.height)
  })

  it('rejects a too-large answer', async (t) => {
    const node = await startEmulator(t)
    const api = await createClient(t, { nodes: [node.url], maxResponseBytes: 2000 })
    await assert.rejects(api.rpc.search({ keyword: 'bitcoin', type: 'content', pageSize: 50 }), /answer larger than 2000 bytes/)
  })

  it('calls any public method by name with callRaw', async (t) => {
    const node = await startEmulator(t)
    const api = await createClient(t, { nodes: [node.url] })
    const info = await api.callRaw('getnodeinfo') as { lastblock: { height: number } }
    assert.equal(info.lastblock.height, node.height)
    await assert.rejects(api.callRaw('nosuchmethod'), { code: 'RPC_ERR_NODE', rpcCode: -32601 })
  })

  it('aborts a call when its signal aborts', async (t) => {
    const node = await startEmulator(t)
    const api = await createClient(t, { nodes: [node.url] })
    node.setFault({ kind: 'hang' })
    const controller = new AbortController()
    const call = api.rpc.getnodeinfo({ signal: controller.signal })
    controller.abort(new Error('gave up'))
    await assert.rejects(call, /gave up/)
  })

  it('refuses calls once closed', async (t) => {
    const node = await startEmulator(t)
    const api = await PocketNetProxyApi.create({ nodes: [node.url] })
    await api.close()
    await api.close()
    await assert.rejects(api.rpc.getnodeinfo(), { code: 'RPC_ERR_CLOSED' })
  })

  it('fails the calls in flight with RPC_ERR_CLOSED when closed, cached methods too', async (t) => {
    const node = await startEmulator(t)
    const api = await PocketNetProxyApi.create({ nodes: [node.url] })
    node.setFault({ kind: 'hang' })
    const calls = [api.rpc.search({ keyword: 'bitcoin', type: 'content', pageStart: 0, pageSize: 5 }), api.rpc.getnodeinfo()]
    const outcomes = Promise.allSettled(calls)
    // Both calls have reached the node before the client closes.
    await waitFor('the search and the probes to reach the node', () => node.callsTo('search').length > 0 && node.callsTo('getnodeinfo').length >= 2)
    await api.close()
    assert.deepEqual((await outcomes).map(outcome => outcome.status === 'rejected' ? (outcome.reason as { code?: string }).code : 'fulfilled'), ['RPC_ERR_CLOSED', 'RPC_ERR_CLOSED'])
  })

  it('validates options with a TypeError naming the option and its range', async () => {
    await assert.rejects(PocketNetProxyApi.create({ nodes: [] }), { name: 'TypeError', message: /option nodes must be a non-empty list/ })
    await assert.rejects(PocketNetProxyApi.create({ nodes: ['ftp://x'] }), { name: 'TypeError', message: /option nodes must be a list of http\(s\) URLs .*got "ftp:\/\/x"/ })
    await assert.rejects(PocketNetProxyApi.create({ nodes: ['http://127.0.0.1:9'], deadlineMs: -1 }), { name: 'TypeError', message: /option deadlineMs must be an integer from 100 to 120000 \(got -1\)/ })
    await assert.rejects(PocketNetProxyApi.create({ nodes: ['http://127.0.0.1:9'], cache: { maxEntries: 0 } }), { name: 'TypeError', message: /option cache.maxEntries must be an integer from 1 to 10000000 \(got 0\)/ })
    await assert.rejects(PocketNetProxyApi.create({ nodes: ['http://127.0.0.1:9'], hedging: 'yes' as unknown as boolean }), { name: 'TypeError', message: /option hedging must be true or false/ })
  })

  it('reads no environment variable unless asked, and then through clientOptionsFromEnv', async (t) => {
    const node = await startEmulator(t)
    const env = { POCKETNET_NODES: ` ${node.url} ,`, RPC_TIMEOUT_MS: '1500', CACHE_TTL_SEARCH_MS: '5' }
    assert.deepEqual(clientOptionsFromEnv(env), { nodes: [node.url], attemptTimeoutMs: 1500 })
    assert.deepEqual(clientOptionsFromEnv({ RPC_DEADLINE_MS: '' }), {}, 'an empty variable is unset')
    assert.throws(() => clientOptionsFromEnv({ RPC_TIMEOUT_MS: 'soon' }), { name: 'TypeError', message: 'clientOptionsFromEnv: RPC_TIMEOUT_MS must be a whole number (got "soon")' })
    assert.deepEqual(clientOptionsFromEnv({ POCKETNET_NETWORK: 'test' }), { network: 'test' })
    await assert.rejects(PocketNetProxyApi.create({ nodes: [node.url], network: 'signet' as 'test' }), { name: 'TypeError', message: /option network must be "main", "test" or "regtest" \(got "signet"\)/ })
    const api = await createClient(t, clientOptionsFromEnv(env))
    assert.deepEqual(api.nodes().map(snapshot => snapshot.url), [node.url])
    // Without options, the built-in list, whatever the process environment says.
    process.env.POCKETNET_NODES = node.url
    t.after(() => { delete process.env.POCKETNET_NODES })
    assert.deepEqual(resolveOptions({}).nodes, [...DEFAULT_NODES])
  })
})
