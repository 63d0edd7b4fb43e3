/**
 * Every route of the service against the real node, with data from the chain's dataset: what a
 * mini-app developer gets with POCKETNET_NETWORK=regtest and a node of their own.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sdkSign } from '../../devnode/bastyon-host.js'
import { startApp, type TestApp } from '../helpers/build-app.js'
import { APP_ID, bearer, newChallenge, postJson } from '../helpers/sign-in.js'
import { contractNode, keyOfWif, publicRpc, stakeBlock } from './contract-node.js'

const { dataset } = contractNode
const REGTEST = 111

function service (t: { after (fn: () => unknown): void }, env: Record<string, string> = {}): Promise<TestApp> {
  return startApp(t, { nodes: [contractNode.url], env: { POCKETNET_NETWORK: 'regtest', BASTYON_APP_ID: APP_ID, ...env } })
}

describe('the service against a real node', () => {
  it('GET /api/nodeinfo answers the node\'s own chain', async (t) => {
    const { get } = await service(t)
    const { status, body } = await get('/api/nodeinfo')
    assert.equal(status, 200)
    assert.equal(body.message, 'Node information retrieved successfully')
    const own = await publicRpc('getnodeinfo')
    assert.equal(body.data.chain, 'regtest')
    assert.equal(body.data.version, own.result.version)
    assert.ok(body.data.lastblock.height >= dataset.height)
  })

  it('GET /api/user/{address} answers each account\'s profile, and 404 for an address with none', async (t) => {
    const { get } = await service(t)
    for (const account of dataset.accounts) {
      const { status, body } = await get(`/api/user/${account.address}`)
      assert.equal(status, 200, `${account.name}: ${JSON.stringify(body)}`)
      assert.equal(body.message, 'User profile retrieved successfully')
      assert.deepEqual([body.data.address, body.data.name], [account.address, account.name])
    }
    const nobody = await get(`/api/user/${dataset.miner}`)
    assert.deepEqual([nobody.status, nobody.body.message], [404, 'User profile not found'])
    const mainnet = await get('/api/user/P8bbRWJknHBXJRBTDSS88uQJSFvX67iN88')
    assert.equal(mainnet.status, 400)
  })

  for (const keyword of ['bitcoin', 'music', 'café', 'кофе']) {
    it(`GET /api/search finds "${keyword}": the node's own posts, in its order, paged`, async (t) => {
      const { get } = await service(t)
      const own = await publicRpc('search', [keyword, 'posts', 0, 0, 50])
      const expected = (own.result.posts?.data ?? []).map((item: { hash: string }) => item.hash)
      assert.ok(expected.length >= 2, `the chain has posts with "${keyword}"`)
      const first = await get(`/api/search?keyword=${encodeURIComponent(keyword)}&page=0&pageSize=1`)
      assert.equal(first.status, 200)
      assert.equal(first.body.message, 'Search completed successfully')
      assert.deepEqual(first.body.data.results.map((item: { hash: string }) => item.hash), expected.slice(0, 1))
      assert.equal(first.body.data.hasMore, true)
      const all = await get(`/api/search?keyword=${encodeURIComponent(keyword)}&pageSize=50`)
      assert.deepEqual(all.body.data.results.map((item: { hash: string }) => item.hash), expected)
      assert.equal(all.body.data.total, expected.length)
    })
  }

  it('GET /api/content/{hash} and /api/post/{hash} answer each post; a comment\'s hash is 404', async (t) => {
    const { get } = await service(t)
    for (const account of dataset.accounts.filter(account => account.posts.length > 0)) {
      for (const hash of account.posts) {
        const content = await get(`/api/content/${hash}`)
        assert.equal(content.status, 200, `${hash}: ${JSON.stringify(content.body)}`)
        assert.deepEqual([content.body.data.hash, content.body.data.address], [hash, account.address])
        const post = await get(`/api/post/${hash}`)
        assert.equal(post.status, 200)
        assert.equal(post.body.data.hash, hash)
      }
    }
    const comment = dataset.accounts.find(account => account.comments.length > 0)!.comments[0]!
    assert.equal((await get(`/api/content/${comment}`)).status, 404)
    assert.equal((await get(`/api/content/${'0'.repeat(64)}`)).status, 404)
  })

  it('GET /api/content/{hash}/comments answers the comments the node has, newest first', async (t) => {
    const { get } = await service(t)
    let seen = 0
    for (const hash of dataset.accounts.flatMap(account => account.posts)) {
      const own = await publicRpc('getcomments', [hash])
      const { status, body } = await get(`/api/content/${hash}/comments?pageSize=100`)
      assert.equal(status, 200)
      assert.equal(body.data.total, own.result.length)
      assert.deepEqual(new Set(body.data.results.map((comment: { id: string }) => comment.id)), new Set(own.result.map((comment: { id: string }) => comment.id)))
      const times = body.data.results.map((comment: { time: string | number }) => Number(comment.time))
      assert.deepEqual(times, [...times].sort((a: number, b: number) => b - a))
      seen += body.data.total
    }
    assert.ok(seen > 0, 'the chain has comments')
  })

  it('GET /api/tags answers the chain\'s tags per language', async (t) => {
    const { get } = await service(t)
    const { status, body } = await get('/api/tags?lang=en')
    assert.equal(status, 200)
    const tags = JSON.stringify(body.data)
    for (const tag of ['music', 'bitcoin']) assert.ok(tags.includes(`"${tag}"`), `${tag} in ${tags}`)
  })

  it('an unknown route is 404', async (t) => {
    const { get } = await service(t)
    assert.equal((await get('/api/nothing-here')).status, 404)
  })

  it('signs in a dataset account with its own key, and /api/me answers its profile', async (t) => {
    const app = await service(t)
    const account = dataset.accounts[0]!
    const challenge = await newChallenge(app)
    const signature = sdkSign(challenge, APP_ID, { key: keyOfWif(account.privkey), issued: Date.now(), version: REGTEST })
    assert.equal(signature.address, account.address, 'the host would sign with the account\'s address')
    const session = await postJson(app, '/api/auth/session', { signature })
    assert.equal(session.status, 200, JSON.stringify(session.body))
    const me = await app.get('/api/me', bearer(session.body.data.token))
    assert.equal(me.status, 200)
    assert.deepEqual([me.body.data.address, me.body.data.profile?.name], [account.address, account.name])
  })

  it('a block made live moves /api/nodeinfo\'s height at the next probe, long before its cached answer expires', async (t) => {
    const probeIntervalMs = 200
    const { get } = await service(t, { POCKETNET_PROBE_INTERVAL_MS: String(probeIntervalMs), CACHE_TTL_NODEINFO_MS: '60000' })
    const before = (await get('/api/nodeinfo')).body.data.lastblock.height as number
    const height = await stakeBlock()
    assert.ok(height > before)
    // A probe comes within 1.2 intervals (±20 % jitter); the new block drops the cached answer.
    const started = performance.now()
    let seen = before
    while (seen < height && performance.now() - started < 30 * probeIntervalMs) {
      await new Promise(resolve => setTimeout(resolve, probeIntervalMs / 10))
      seen = (await get('/api/nodeinfo')).body.data.lastblock.height
    }
    assert.equal(seen, height)
  })
})
