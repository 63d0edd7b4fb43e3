import assert from 'node:assert/strict'
import { Agent, request } from 'node:http'
import { describe, it } from 'node:test'
import { startEmulator } from '../helpers/start-emulator.js'
import { waitFor } from '../helpers/wait-for.js'

/** One raw JSON-RPC POST, as a client of a real node would send it. */
async function rpc (url: string, method: string, params: unknown[] = [], path = '/public/'): Promise<{ status: number, body: any, text: string }> {
  const response = await fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ method, params, id: 7 }) })
  const text = await response.text()
  let body: unknown
  try { body = JSON.parse(text) } catch {}
  return { status: response.status, body, text }
}

/** A JSON-RPC POST over its own connection from `agent`, so calls really run side by side. */
function post (agent: Agent, url: string, method: string): Promise<{ status: number, text: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(`${url}/public/`, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, incoming => {
      let text = ''
      incoming.setEncoding('utf8')
      incoming.on('data', chunk => { text += chunk })
      incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, text }))
      incoming.on('error', reject)
    })
    outgoing.on('error', reject)
    outgoing.end(JSON.stringify({ method, params: [], id: 1 }))
  })
}

function freshAgent (t: { after (fn: () => unknown): void }): Agent {
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity })
  t.after(() => agent.destroy())
  return agent
}

describe('the node emulator', () => {
  describe('transport', () => {
    it('answers 405 to a GET', async (t) => {
      const node = await startEmulator(t)
      assert.equal((await fetch(`${node.url}/public/`)).status, 405)
    })

    it('answers an unknown method with HTTP 404 and -32601, echoing the id', async (t) => {
      const node = await startEmulator(t)
      const { status, body } = await rpc(node.url, 'nosuchmethod')
      assert.equal(status, 404)
      assert.deepEqual(body, { result: null, error: { code: -32601, message: 'Method not found' }, id: 7 })
    })

    it('answers a body that is not JSON with -32700', async (t) => {
      const node = await startEmulator(t)
      const response = await fetch(`${node.url}/public/`, { method: 'POST', body: '{nope' })
      assert.equal(response.status, 500)
      assert.equal((await response.json()).error.code, -32700)
      assert.equal(node.calls.length, 1)
    })

    it('keeps at most recordLimit calls, the newest', async (t) => {
      const node = await startEmulator(t, { recordLimit: 4 })
      for (let i = 0; i < 10; i++) await rpc(node.url, 'getuserprofile', [`P${i}`])
      assert.ok(node.calls.length <= 4, `${node.calls.length} calls kept`)
      assert.deepEqual(node.calls.at(-1)?.params, ['P9'])
    })

    it('keeps read methods off the /post/ path', async (t) => {
      const node = await startEmulator(t)
      assert.equal((await rpc(node.url, 'getnodeinfo', [], '/post/')).status, 404)
    })
  })

  describe('getnodeinfo', () => {
    it('reports version, chain and the last block, with a time frozen until the next block', async (t) => {
      const node = await startEmulator(t, { version: '0.22.5', height: 1000 })
      const first = (await rpc(node.url, 'getnodeinfo')).body.result
      assert.equal(first.version, '0.22.5')
      assert.equal(first.chain, 'main')
      assert.equal(first.lastblock.height, 1000)
      assert.match(first.lastblock.hash, /^[0-9a-f]{64}$/)
      assert.equal(first.time, first.lastblock.time)
      node.mineBlock()
      const second = (await rpc(node.url, 'getnodeinfo')).body.result
      assert.equal(second.lastblock.height, 1001)
      assert.notEqual(second.lastblock.hash, first.lastblock.hash)
      assert.ok(second.time > first.time)
    })
  })

  describe('getuserprofile', () => {
    it('gives the short form for "1" and the full form for anything else, even "basic"', async (t) => {
      const node = await startEmulator(t)
      const user = node.dataset.users[0] as { address: string, name: string }
      const [short] = (await rpc(node.url, 'getuserprofile', [user.address, '1'])).body.result
      assert.equal(short.name, user.name)
      assert.equal(short.subscribers, undefined)
      const [full] = (await rpc(node.url, 'getuserprofile', [user.address, 'basic'])).body.result
      assert.ok(Array.isArray(full.subscribers))
      assert.equal(typeof full.a, 'string')
    })

    it('answers a list sorted by address, without unknown addresses', async (t) => {
      const node = await startEmulator(t)
      const [a, b] = node.dataset.users.slice(1, 3).map(user => user.address) as [string, string]
      const result = (await rpc(node.url, 'getuserprofile', [[b, 'P8bbRWJknHBXJRBTDSS88uQJSFvX67iN88', a], '1'])).body.result
      assert.deepEqual(result.map((profile: { address: string }) => profile.address), [a, b].sort())
      assert.deepEqual((await rpc(node.url, 'getuserprofile', ['P8bbRWJknHBXJRBTDSS88uQJSFvX67iN88', '1'])).body.result, [])
      assert.deepEqual((await rpc(node.url, 'getuserprofile', [42, '1'])).body.result, [])
    })

    it('answers a deleted account with only hash, address, id and deleted', async (t) => {
      const node = await startEmulator(t)
      const deleted = node.dataset.users.find(user => user.deleted) as { address: string }
      const [profile] = (await rpc(node.url, 'getuserprofile', [deleted.address, '1'])).body.result
      assert.deepEqual(Object.keys(profile).sort(), ['address', 'deleted', 'hash', 'id'])
    })

    it('rejects a shortForm that is not a string with -32603 and HTTP 500', async (t) => {
      const node = await startEmulator(t)
      const { status, body } = await rpc(node.url, 'getuserprofile', [node.dataset.users[0]?.address, 1])
      assert.equal(status, 500)
      assert.equal(body.error.code, -32603)
    })
  })

  describe('search', () => {
    it('URL-decodes the keyword', async (t) => {
      const node = await startEmulator(t)
      const data = (await rpc(node.url, 'search', ['caf%C3%A9', 'posts'])).body.result.posts.data
      assert.ok(data.length > 0)
      for (const item of data) assert.match(`${item.c} ${item.m}`.toLowerCase(), /café/)
    })

    it('reads paging only from JSON integers on current nodes: offset, limit, newest first', async (t) => {
      const node = await startEmulator(t)
      const all = (await rpc(node.url, 'search', ['bitcoin', 'posts', 0, 0, 30])).body.result.posts.data
      assert.equal(all.length, 30)
      const times = all.map((item: { time: string }) => Number(item.time))
      assert.deepEqual(times, [...times].sort((a, b) => b - a))
      const page = (await rpc(node.url, 'search', ['bitcoin', 'posts', 0, 10, 5])).body.result.posts.data
      assert.deepEqual(page.map((item: { hash: string }) => item.hash), all.slice(10, 15).map((item: { hash: string }) => item.hash))
      const strings = (await rpc(node.url, 'search', ['bitcoin', 'posts', '0', '10', '5'])).body.result.posts.data
      assert.equal(strings.length, 10, 'strings are ignored: the default page of 10 from 0')
      assert.equal(strings[0].hash, all[0].hash)
      const unlimited = (await rpc(node.url, 'search', ['music', 'posts', 0, 0, -1])).body.result.posts.data
      assert.ok(unlimited.length > 30)
    })

    it('reads paging only from strings on nodes before 0.22.1', async (t) => {
      const node = await startEmulator(t, { version: '0.21.16' })
      assert.equal((await rpc(node.url, 'search', ['bitcoin', 'posts', '0', '0', '3'])).body.result.posts.data.length, 3)
      assert.equal((await rpc(node.url, 'search', ['bitcoin', 'posts', 0, 0, 3])).body.result.posts.data.length, 10)
    })

    it('rejects non-integer and out-of-range paging with -32603', async (t) => {
      const node = await startEmulator(t)
      for (const params of [['x', 'posts', 0, 0, 10.5], ['x', 'posts', 0, 2 ** 31, 10]]) {
        const { status, body } = await rpc(node.url, 'search', params)
        assert.equal(status, 500)
        assert.equal(body.error.code, -32603)
      }
    })

    it('caps by topBlock and filters by author, and rejects an empty sixth element', async (t) => {
      const node = await startEmulator(t)
      const capped = (await rpc(node.url, 'search', ['bitcoin', 'posts', node.height - 50_000, 0, 50])).body.result.posts.data
      const heightOf = (hash: string) => node.dataset.posts.find(post => post.hash === hash)?.height as number
      assert.ok(capped.every((item: { hash: string }) => heightOf(item.hash) <= node.height - 50_000))
      const author = node.dataset.users[0]?.address as string
      const mine = (await rpc(node.url, 'search', ['bitcoin', 'posts', 0, 0, 50, author])).body.result.posts.data
      assert.ok(mine.length > 0)
      assert.ok(mine.every((item: { address: string }) => item.address === author))
      assert.equal((await rpc(node.url, 'search', ['bitcoin', 'posts', 0, 0, 10, null])).status, 500)
      assert.equal((await rpc(node.url, 'search', ['bitcoin', 'posts', 0, 0, 10, ''])).status, 500)
    })

    it('answers {} for an unknown type, including "content"', async (t) => {
      const node = await startEmulator(t)
      assert.deepEqual((await rpc(node.url, 'search', ['bitcoin', 'content'])).body.result, {})
      assert.deepEqual((await rpc(node.url, 'search', ['bitcoin', 'POSTS'])).body.result.posts.data.length, 10)
    })

    it('finds users, and fails on tags as 0.22 nodes do (older ones found them)', async (t) => {
      const node = await startEmulator(t)
      const tags = await rpc(node.url, 'search', ['bit', 'tags'])
      assert.deepEqual([tags.status, tags.body.error.code], [500, 500])
      assert.match(tags.body.error.message, /unable to use function MATCH/)
      const old = await startEmulator(t, { version: '0.21.16' })
      assert.ok((await rpc(old.url, 'search', ['bit', 'tags'])).body.result.tags.data.includes('bitcoin'))
      const name = node.dataset.users[0]?.name as string
      const users = (await rpc(node.url, 'search', [name, 'users'])).body.result.users.data
      assert.ok(users.some((user: { name: string }) => user.name === name))
    })

    it('fails like SQLite on a double quote in the keyword', async (t) => {
      const node = await startEmulator(t)
      const { status, body } = await rpc(node.url, 'search', ['"bitcoin', 'posts'])
      assert.equal(status, 500)
      assert.match(body.error.message, /fts5/)
    })

    it('carries user content with HTML as it is', async (t) => {
      const node = await startEmulator(t)
      const data = (await rpc(node.url, 'search', ['xsscheck', 'posts'])).body.result.posts.data
      assert.ok(data.some((item: { c: string }) => item.c.includes('<img src=x onerror=alert(1)>')))
    })
  })

  describe('getcontent', () => {
    it('answers the posts among the hashes, in its own order, without unknown ones', async (t) => {
      const node = await startEmulator(t)
      const [newer, older] = node.dataset.posts
      assert.ok(newer && older)
      const unknown = 'f'.repeat(64)
      const { status, body } = await rpc(node.url, 'getcontent', [[newer.hash, unknown, older.hash]])
      assert.equal(status, 200)
      const ids = body.result.map((item: { id: number }) => item.id)
      assert.deepEqual(ids, [newer.id, older.id].sort((a, b) => a - b), 'by row id, not request order')
      assert.equal(body.result.find((item: { hash: string }) => item.hash === newer.hash).txid, newer.hash)
      assert.equal((await rpc(node.url, 'getcontent', [older.hash])).body.result[0].hash, older.hash, 'one hash as a string')
    })

    it('answers [] for any number but 1 in third position, and -32603 for a hash that is not a string', async (t) => {
      const node = await startEmulator(t)
      const hash = (node.dataset.posts[0] as { hash: string }).hash
      assert.equal((await rpc(node.url, 'getcontent', [[hash], '', 1])).body.result.length, 1)
      assert.deepEqual((await rpc(node.url, 'getcontent', [[hash], '', 0])).body.result, [])
      const wrong = await rpc(node.url, 'getcontent', [[42]])
      assert.equal(wrong.status, 500)
      assert.equal(wrong.body.error.code, -32603)
    })
  })

  describe('faults', () => {
    it('answers each fault as a real node or proxy would', async (t) => {
      const node = await startEmulator(t)
      node.setFault({ kind: 'rpc-error', code: -28, message: 'Loading' })
      assert.deepEqual((await rpc(node.url, 'getnodeinfo')).body, { result: null, error: { code: -28, message: 'Loading' }, id: 7 })
      node.setFault({ kind: 'work-queue' })
      assert.deepEqual(await rpc(node.url, 'getnodeinfo'), { status: 500, body: undefined, text: 'Work queue depth exceeded' })
      node.setFault({ kind: 'html', status: 503 })
      const html = await rpc(node.url, 'getnodeinfo')
      assert.equal(html.status, 503)
      assert.match(html.text, /<html>/)
      node.setFault({ kind: 'garbage' })
      const garbage = await rpc(node.url, 'getnodeinfo')
      assert.equal(garbage.status, 200)
      assert.equal(garbage.body, undefined)
      node.setFault({ kind: 'lag', blocks: 5 })
      assert.equal((await rpc(node.url, 'getnodeinfo')).body.result.lastblock.height, node.height - 5)
      node.setFault(null)
      assert.equal((await rpc(node.url, 'getnodeinfo')).body.result.lastblock.height, node.height)
    })

    it('hangs, drops, and slows down', async (t) => {
      const node = await startEmulator(t)
      node.setFault({ kind: 'hang' })
      await assert.rejects(fetch(`${node.url}/public/`, { method: 'POST', body: '{"method":"getnodeinfo"}', signal: AbortSignal.timeout(100) }), { name: 'TimeoutError' })
      node.setFault({ kind: 'drop' })
      await assert.rejects(rpc(node.url, 'getnodeinfo'))
      node.setFault({ kind: 'latency', ms: 120 })
      const started = performance.now()
      assert.equal((await rpc(node.url, 'getnodeinfo')).status, 200)
      assert.ok(performance.now() - started >= 115)
    })

    it('scopes a fault to a method and to a number of calls', async (t) => {
      const node = await startEmulator(t)
      node.setFault({ kind: 'work-queue' }, { method: 'search', times: 2 })
      assert.equal((await rpc(node.url, 'getnodeinfo')).status, 200)
      assert.equal((await rpc(node.url, 'search', ['x', 'posts'])).status, 500)
      assert.equal((await rpc(node.url, 'search', ['x', 'posts'])).status, 500)
      assert.equal((await rpc(node.url, 'search', ['x', 'posts'])).status, 200)
      assert.equal(node.callsTo('search').length, 3)
    })

    it('stops and starts again on the same port', async (t) => {
      const node = await startEmulator(t)
      node.setFault({ kind: 'hang' })
      const hanging = fetch(`${node.url}/public/`, { method: 'POST', body: '{"method":"getnodeinfo"}' })
      await node.stop()
      await assert.rejects(hanging)
      await assert.rejects(rpc(node.url, 'getnodeinfo'))
      await node.start()
      node.setFault(null)
      assert.equal((await rpc(node.url, 'getnodeinfo')).status, 200)
    })
  })

  describe('work queue model', () => {
    it('serves as many as there are workers, queues up to the depth and refuses the rest', async (t) => {
      // Long enough that all ten arrive while the first two are still at work.
      const node = await startEmulator(t, { workQueue: { threads: 2, depth: 3 }, latencyMs: 1000 })
      const agent = freshAgent(t)
      const answers = await Promise.all(Array.from({ length: 10 }, () => post(agent, node.url, 'getnodeinfo')))
      const served = answers.filter(answer => answer.status === 200)
      const refused = answers.filter(answer => answer.status === 500)
      assert.equal(served.length, 5)
      for (const answer of served) assert.ok(JSON.parse(answer.text).result.lastblock)
      assert.equal(refused.length, 5)
      for (const answer of refused) assert.equal(answer.text, 'Work queue depth exceeded')
      assert.deepEqual(node.workQueue(), { active: 0, waiting: 0, maxActive: 2, maxWaiting: 3, rejected: 5, served: 5 })
      node.resetWorkQueueStats()
      assert.deepEqual(node.workQueue(), { active: 0, waiting: 0, maxActive: 0, maxWaiting: 0, rejected: 0, served: 0 })
    })

    it('answers the waiting requests in the order they came', async (t) => {
      const node = await startEmulator(t, { workQueue: { threads: 1, depth: 5 }, latencyMs: 50 })
      const agent = freshAgent(t)
      const order: number[] = []
      const pending: Array<Promise<void>> = []
      for (let i = 0; i < 4; i++) {
        pending.push(post(agent, node.url, 'getnodeinfo').then(answer => {
          assert.equal(answer.status, 200)
          order.push(i)
        }))
        await waitFor(`call ${i} to reach the node`, () => node.calls.length === i + 1)
      }
      await Promise.all(pending)
      assert.deepEqual(order, [0, 1, 2, 3])
      assert.equal(node.workQueue().rejected, 0)
      assert.equal(node.workQueue().maxActive, 1)
    })

    it('frees the worker of a hung request when its client goes', async (t) => {
      const node = await startEmulator(t, { workQueue: { threads: 1 } })
      node.setFault({ kind: 'hang' })
      const abort = new AbortController()
      const hanging = fetch(`${node.url}/public/`, { method: 'POST', body: '{"method":"getnodeinfo"}', signal: abort.signal })
      await waitFor('the hung request to hold the worker', () => node.workQueue().active === 1)
      abort.abort()
      await assert.rejects(hanging, { name: 'AbortError' })
      await waitFor('the worker to be free', () => node.workQueue().active === 0)
      node.setFault(null)
      assert.equal((await rpc(node.url, 'getnodeinfo')).status, 200)
      const stats = node.workQueue()
      assert.equal(stats.rejected, 0)
      assert.equal(stats.served, 2)
      assert.equal(stats.maxActive, 1)
    })

    it('drops a waiting request whose client left', async (t) => {
      const node = await startEmulator(t, { workQueue: { threads: 1, depth: 1 } })
      node.setFault({ kind: 'hang' }, { times: 1 })
      const holder = new AbortController()
      const hanging = fetch(`${node.url}/public/`, { method: 'POST', body: '{"method":"getnodeinfo"}', signal: holder.signal })
      await waitFor('the hung request to hold the worker', () => node.workQueue().active === 1)
      const waiter = new AbortController()
      const waiting = fetch(`${node.url}/public/`, { method: 'POST', body: '{"method":"getnodeinfo"}', signal: waiter.signal })
      await waitFor('a request to wait', () => node.workQueue().waiting === 1)
      waiter.abort()
      await assert.rejects(waiting, { name: 'AbortError' })
      await waitFor('the line to empty', () => node.workQueue().waiting === 0)
      holder.abort()
      await assert.rejects(hanging, { name: 'AbortError' })
      assert.equal((await rpc(node.url, 'getnodeinfo')).status, 200)
      // The request that left never took a worker.
      await waitFor('the last worker to be free', () => node.workQueue().active === 0)
      assert.equal(node.workQueue().served, 2)
    })

    it('serves everything at once without the model', async (t) => {
      const node = await startEmulator(t, { latencyMs: 100 })
      const agent = freshAgent(t)
      const answers = await Promise.all(Array.from({ length: 30 }, () => post(agent, node.url, 'getnodeinfo')))
      assert.deepEqual(answers.map(answer => answer.status), Array(30).fill(200))
      assert.equal(node.workQueue().rejected, 0)
    })

    it('takes a new model at run time', async (t) => {
      const node = await startEmulator(t)
      node.setWorkQueue({ threads: 1, depth: 0 })
      node.setFault({ kind: 'hang' }, { times: 1 })
      const abort = new AbortController()
      const hanging = fetch(`${node.url}/public/`, { method: 'POST', body: '{"method":"getnodeinfo"}', signal: abort.signal })
      await waitFor('the hung request to hold the worker', () => node.workQueue().active === 1)
      assert.deepEqual(await rpc(node.url, 'getnodeinfo'), { status: 500, body: undefined, text: 'Work queue depth exceeded' })
      assert.equal(node.workQueue().rejected, 1)
      node.setWorkQueue(null)
      assert.equal((await rpc(node.url, 'getnodeinfo')).status, 200)
      assert.equal(node.workQueue().rejected, 1)
      abort.abort()
      await assert.rejects(hanging, { name: 'AbortError' })
      assert.throws(() => node.setWorkQueue({ threads: 0 }), RangeError)
    })
  })
})
