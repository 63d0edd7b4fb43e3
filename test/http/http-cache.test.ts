import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import { NO_CACHE, startApp } from '../helpers/build-app.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { manualClock } from '../helpers/manual-clock.js'
import { waitFor } from '../helpers/wait-for.js'

function metric (text: string, line: RegExp): number {
  return [...text.matchAll(new RegExp(`^${line.source} (\\d+)$`, 'gm'))].reduce((sum, match) => sum + Number(match[1]), 0)
}

/** A loopback proxy in front of a node that holds `search` calls until opened; health probes pass. */
async function startGate (t: { after (fn: () => unknown): void }, target: string): Promise<{ url: string, open (): void }> {
  let open!: () => void
  const opened = new Promise<void>(resolve => { open = resolve })
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk)).on('end', async () => {
      const body = Buffer.concat(chunks)
      if (body.includes('"search"')) await opened
      const answer = await fetch(`${target}${request.url}`, { method: 'POST', body, headers: { 'content-type': 'application/json' } })
      response.writeHead(answer.status, { 'content-type': 'application/json' }).end(Buffer.from(await answer.arrayBuffer()))
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.after(() => new Promise(resolve => server.close(resolve)))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, open }
}

describe('HTTP caching', () => {
  it('gives each route a max-age matching the answer cache, and an ETag', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { CACHE_TTL_NODEINFO_MS: '5000', CACHE_TTL_PROFILE_MS: '60000', CACHE_TTL_SEARCH_MS: '30000' } })
    const user = node.dataset.users[0] as { address: string }
    const cases: Array<[string, string]> = [
      ['/api/nodeinfo', 'public, max-age=5, stale-while-revalidate=5'],
      [`/api/user/${user.address}`, 'public, max-age=60, stale-while-revalidate=60'],
      ['/api/search?keyword=bitcoin', 'public, max-age=30, stale-while-revalidate=30'],
    ]
    for (const [path, cacheControl] of cases) {
      const { status, headers } = await service.get(path)
      assert.equal(status, 200)
      assert.equal(headers.get('cache-control'), cacheControl, path)
      assert.match(headers.get('etag') ?? '', /^W\/"[\w-]+"$/, path)
    }
    const strict = await startApp(t, { nodes: [node.url], env: { CACHE_SERVE_STALE: 'false' } })
    assert.equal((await strict.get('/api/search?keyword=bitcoin')).headers.get('cache-control'), 'public, max-age=30')
  })

  it('answers 304 without a body to a matching If-None-Match, and 200 when the data changed', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: NO_CACHE })
    const first = await service.get('/api/nodeinfo')
    const etag = first.headers.get('etag') as string
    const again = await fetch(`${service.url}/api/nodeinfo`, { headers: { 'if-none-match': etag } })
    assert.equal(again.status, 304)
    assert.equal(await again.text(), '')
    node.mineBlock()
    const changed = await fetch(`${service.url}/api/nodeinfo`, { headers: { 'if-none-match': etag } })
    assert.equal(changed.status, 200)
    assert.notEqual(changed.headers.get('etag'), etag)
    assert.equal((await changed.json()).data.lastblock.height, node.height)
  })

  it('marks error answers no-store and gives them no ETag', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    for (const path of ['/api/search', '/api/user/nope', '/api/nothing']) {
      const { status, headers } = await service.get(path)
      assert.ok(status >= 400)
      assert.equal(headers.get('cache-control'), 'no-store', path)
      assert.equal(headers.get('etag'), null, path)
    }
  })
})

describe('the answer cache', () => {
  it('answers repeats without calling the node, per method', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    const user = node.dataset.users[0] as { address: string }
    for (let i = 0; i < 3; i++) {
      await service.get('/api/nodeinfo')
      await service.get(`/api/user/${user.address}`)
      await service.get('/api/search?keyword=bitcoin&page=1')
    }
    assert.equal(node.callsTo('getnodeinfo').length, 2, 'the start-up probe and one call')
    assert.equal(node.callsTo('getuserprofile').length, 1)
    assert.equal(node.callsTo('search').length, 1)
    await service.get('/api/search?keyword=bitcoin&page=2')
    assert.equal(node.callsTo('search').length, 2, 'another page is another key')
  })

  it('sends 100 concurrent identical requests to the node once', async (t) => {
    const node = await startEmulator(t)
    // The node's answer is held until the other 99 requests have joined the call in flight:
    // concurrent whatever the machine's speed.
    const gate = await startGate(t, node.url)
    // The gate decides when the node answers: no timeout may end the call first (under load, 100
    // requests took longer than the default 2 s to arrive, and a second call began after it).
    const service = await startApp(t, { nodes: [gate.url], env: { ...NO_CACHE, RPC_TIMEOUT_MS: '60000', RPC_DEADLINE_MS: '60000' } })
    let joined = 0
    const pending = Promise.all(Array.from({ length: 100 }, () => service.get('/api/search?keyword=music&pageSize=10')))
    const hangAt = performance.now() + 30_000
    while (joined < 99) {
      assert.ok(performance.now() < hangAt, `still waiting for 99 requests to join the first one's call (${joined} did)`)
      joined = metric(await service.app.metrics.scrape(), /pocketnet_cache_lookups_total\{method="search",outcome="shared"\}/)
      await new Promise(resolve => setImmediate(resolve))
    }
    gate.open()
    const answers = await pending
    assert.ok(answers.every(answer => answer.status === 200 && answer.body.data.results.length === 10))
    assert.equal(node.callsTo('search').length, 1)
  })

  it('answers a stale search at once past its time to live, and asks the node again in the background', async (t) => {
    const node = await startEmulator(t)
    const clock = manualClock()
    const service = await startApp(t, { nodes: [node.url], clock: clock.now, env: { CACHE_TTL_SEARCH_MS: '200' } })
    const first = await service.get('/api/search?keyword=music')
    assert.equal(node.callsTo('search').length, 1)
    clock.advance(199)
    assert.equal((await service.get('/api/search?keyword=music')).status, 200)
    assert.equal(node.callsTo('search').length, 1, 'still fresh: no call')
    // From now on the node never answers a search: a caller that waited for it would fail.
    node.setFault({ kind: 'hang' }, { method: 'search' })
    clock.advance(1)
    const stale = await service.get('/api/search?keyword=music')
    assert.equal(stale.status, 200)
    assert.equal(stale.headers.get('etag'), first.headers.get('etag'))
    assert.deepEqual(stale.body, first.body)
    await waitFor('the background refresh to reach the node', () => node.callsTo('search').length === 2)
    // One refresh at a time, however many callers see the stale answer.
    assert.equal((await service.get('/api/search?keyword=music')).status, 200)
    assert.equal(node.callsTo('search').length, 2)
  })

  it('never keeps an error', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    node.setFault({ kind: 'rpc-error', code: -8, message: 'Invalid parameter' }, { method: 'search', times: 1 })
    assert.equal((await service.get('/api/search?keyword=bitcoin')).status, 500)
    assert.equal((await service.get('/api/search?keyword=bitcoin')).status, 200)
    assert.equal(node.callsTo('search').length, 2)
  })

  it('drops node information and profiles when the pool sees a new block', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { POCKETNET_PROBE_INTERVAL_MS: '50', CACHE_TTL_NODEINFO_MS: '600000' } })
    const before = await service.get('/api/nodeinfo')
    node.mineBlock()
    // The next health probe sees the block and drops the cached answer.
    const client = service.app.pocketnet.peek()
    assert.ok(client)
    await waitFor('the probe to see the new block', () => client.bestHeight === node.height)
    const after = await service.get('/api/nodeinfo')
    assert.equal(after.body.data.lastblock.height, before.body.data.lastblock.height + 1)
  })
})
