import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { startApp } from '../helpers/build-app.js'
import { startEmulator } from '../helpers/start-emulator.js'

describe('GET /api/search', () => {
  it('answers the spec envelope with a page of content', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    const { status, body } = await service.get('/api/search?keyword=bitcoin&page=0&pageSize=5')
    assert.equal(status, 200)
    assert.equal(body.message, 'Search completed successfully')
    assert.deepEqual(Object.keys(body).sort(), ['data', 'message'])
    assert.equal(body.data.results.length, 5)
    assert.equal(body.data.total, 5)
    assert.equal(body.data.hasMore, true)
    for (const item of body.data.results) {
      assert.match(`${item.c} ${item.m}`.toLowerCase(), /bitcoin/)
    }
  })

  it('sends the node positional params with JSON integers: offset, and one item more than the page', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    node.clearCalls()
    await service.get('/api/search?keyword=caf%C3%A9&page=2&pageSize=5')
    const [call] = node.callsTo('search')
    assert.deepEqual(call?.params, ['caf%C3%A9', 'posts', 0, 10, 6])
  })

  it('defaults to page 0 and pageSize 20', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    const { body } = await service.get('/api/search?keyword=bitcoin')
    assert.deepEqual(node.callsTo('search')[0]?.params, ['bitcoin', 'posts', 0, 0, 21])
    assert.equal(body.data.results.length, 20)
  })

  it('sends paging as strings to a node older than 0.22.1', async (t) => {
    const node = await startEmulator(t, { version: '0.21.16' })
    const service = await startApp(t, { nodes: [node.url] })
    const { body } = await service.get('/api/search?keyword=bitcoin&page=1&pageSize=3')
    assert.deepEqual(node.callsTo('search')[0]?.params, ['bitcoin', 'posts', '0', '3', '4'])
    assert.equal(body.data.results.length, 3)
  })

  it('pages through every match with no overlap and no gap, ending with hasMore false', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    const everything = await service.get('/api/search?keyword=music&page=0&pageSize=100')
    assert.equal(everything.body.data.hasMore, false, 'the keyword must have fewer than 100 matches for this test')
    const all = everything.body.data.results.map((item: { hash: string }) => item.hash)
    assert.ok(all.length > 12, `music should match more than 12 posts, got ${all.length}`)
    const paged: string[] = []
    for (let page = 0; ; page++) {
      const { body } = await service.get(`/api/search?keyword=music&page=${page}&pageSize=7`)
      paged.push(...body.data.results.map((item: { hash: string }) => item.hash))
      assert.equal(body.data.total, paged.length)
      if (!body.data.hasMore) break
      assert.equal(body.data.results.length, 7)
    }
    assert.deepEqual(paged, all)
  })

  it('answers an empty page past the end, claiming no matches it has not seen', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    // Issue #24: a high page reported page × pageSize as its total, with no results.
    for (const query of ['page=100000&pageSize=100', 'page=21474835&pageSize=20']) {
      const { status, body } = await service.get(`/api/search?keyword=bitcoin&${query}`)
      assert.equal(status, 200, query)
      assert.deepEqual(body.data, { results: [], total: 0, hasMore: false }, query)
    }
  })

  describe('bad input answers 400 and sends nothing to the node', () => {
    const cases: Array<[string, string, RegExp]> = [
      ['', 'Missing query parameter: keyword', /keyword is required/],
      ['?keyword=', 'Invalid query parameter: keyword', /1 to 200 characters/],
      ['?keyword=%20%20%20', 'Invalid query parameter: keyword', /not only spaces/],
      [`?keyword=${'a'.repeat(201)}`, 'Invalid query parameter: keyword', /1 to 200 characters/],
      ['?keyword=a&keyword=b', 'Invalid query parameter: keyword', /keyword must be/],
      ['?keyword=a&page=-1', 'Invalid query parameter: page', /page must be a whole number from 0/],
      ['?keyword=a&page=1.5', 'Invalid query parameter: page', /whole number/],
      ['?keyword=a&page=abc', 'Invalid query parameter: page', /got "abc"/],
      ['?keyword=a&pageSize=0', 'Invalid query parameter: pageSize', /from 1 to 100/],
      ['?keyword=a&pageSize=101', 'Invalid query parameter: pageSize', /from 1 to 100/],
      ['?keyword=a&pageSize=ten', 'Invalid query parameter: pageSize', /from 1 to 100/],
      ['?keyword=a&page=30000000&pageSize=100', 'Invalid query parameter: page', /32-bit range/],
      // Ajv's coercion turns these into Infinity, which its integer, minimum and maximum checks let through (issue #24).
      ['?keyword=a&pageSize=Infinity', 'Invalid query parameter: pageSize', /^pageSize must be a whole number from 1 to 100 \(got "Infinity"\)$/],
      ['?keyword=a&pageSize=-Infinity', 'Invalid query parameter: pageSize', /from 1 to 100/],
      ['?keyword=a&pageSize=1e400', 'Invalid query parameter: pageSize', /from 1 to 100/],
      ['?keyword=a&page=Infinity', 'Invalid query parameter: page', /^page must be a whole number from 0 \(the page index\) \(got "Infinity"\)$/],
      ['?keyword=a&page=1e300', 'Invalid query parameter: page', /whole number from 0/],
    ]
    for (const [query, message, error] of cases) {
      it(`answers 400 for ${query || 'no query'}`, async (t) => {
        const node = await startEmulator(t)
        const service = await startApp(t, { nodes: [node.url] })
        const { status, body } = await service.get(`/api/search${query}`)
        assert.equal(status, 400)
        assert.equal(body.message, message)
        assert.match(body.error, error)
        assert.equal(node.callsTo('search').length, 0)
      })
    }
  })

  describe('failures answer 500 with the spec message and the error text', () => {
    it('when the node answers an RPC error', async (t) => {
      const node = await startEmulator(t)
      const service = await startApp(t, { nodes: [node.url] })
      node.setFault({ kind: 'rpc-error', code: -32603, message: 'Something broke' }, { method: 'search' })
      const { status, body } = await service.get('/api/search?keyword=bitcoin')
      assert.equal(status, 500)
      assert.equal(body.message, 'Search operation failed')
      assert.match(body.error, /internal error \(RPC error -32603\)/)
      assert.doesNotMatch(body.error, /Something broke/, "the node's own words stay in the log")
    })

    it('when no node is reachable', async (t) => {
      const node = await startEmulator(t)
      const service = await startApp(t, { nodes: [node.url] })
      await service.get('/api/nodeinfo')
      await node.stop()
      const { status, body } = await service.get('/api/search?keyword=bitcoin')
      assert.equal(status, 500)
      assert.equal(body.message, 'Search operation failed')
      assert.match(body.error, /node 1 failed: connection refused/)
      assert.doesNotMatch(body.error, /127\.0\.0\.1/, 'node addresses stay out of client-facing text')
    })

    it('when the node does not answer in time', async (t) => {
      const node = await startEmulator(t)
      const service = await startApp(t, { nodes: [node.url], env: { RPC_TIMEOUT_MS: '300' } })
      node.setFault({ kind: 'hang' }, { method: 'search' })
      const { status, body } = await service.get('/api/search?keyword=bitcoin')
      assert.equal(status, 500)
      assert.equal(body.message, 'Search operation failed')
      assert.match(body.error, /did not answer search within 300 ms/)
    })
  })
})
