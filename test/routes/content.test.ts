import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Emulator } from '../../devnode/server.js'
import { NO_CACHE, startApp } from '../helpers/build-app.js'
import { startEmulator } from '../helpers/start-emulator.js'

/** A post of the dataset with at least `count` top-level comments. */
function postWithComments (node: Emulator, count: number): { hash: string, topLevel: Array<{ id: string, time: number | string }> } {
  for (const post of node.dataset.posts) {
    const topLevel = node.dataset.comments.filter(comment => comment.postid === post.hash && comment.parentid === '')
    if (topLevel.length >= count) return { hash: post.hash, topLevel }
  }
  throw new Error(`no post has ${count} top-level comments`)
}

describe('GET /api/content/:hash', () => {
  it('answers the content with its author\'s short profile, asking the node for the list of one hash', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    const post = node.dataset.posts[3]
    assert.ok(post)
    const { status, body, headers } = await service.get(`/api/content/${post.hash}`)
    assert.equal(status, 200)
    assert.equal(body.message, 'Content retrieved successfully')
    assert.equal(body.data.hash, post.hash)
    assert.equal(body.data.userprofile.address, post.address)
    assert.equal(headers.get('cache-control'), 'public, max-age=60, stale-while-revalidate=60')
    assert.deepEqual(node.callsTo('getcontent').map(call => call.params), [[[post.hash]]])
  })

  it('answers 404 for a hash that is no content, 400 for a malformed one, 500 when the node fails', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    const unknown = await service.get(`/api/content/${'f'.repeat(64)}`)
    assert.deepEqual([unknown.status, unknown.body], [404, { message: 'Content not found', error: `No post or video has the hash ${'f'.repeat(64)}` }])
    const malformed = await service.get('/api/content/xyz')
    assert.deepEqual([malformed.status, malformed.body.message], [400, 'Invalid path parameter: hash'])
    assert.equal(node.callsTo('getcontent').length, 1, 'the malformed hash reached no node')
    node.setFault({ kind: 'rpc-error', code: -32603, message: 'Something broke' }, { method: 'getcontent' })
    const failed = await service.get(`/api/content/${'a'.repeat(64)}`)
    assert.equal(failed.status, 500)
    assert.equal(failed.body.message, 'Failed to retrieve content')
    assert.match(failed.body.error, /No Pocketnet node could answer getcontent/)
  })
})

describe('GET /api/content/:hash/comments', () => {
  it('answers the top-level comments newest first, paged, asking by the content\'s root txid', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: NO_CACHE })
    const { hash, topLevel } = postWithComments(node, 3)
    const newest = [...topLevel].sort((a, b) => Number(b.time) - Number(a.time) || String(b.id).localeCompare(String(a.id))).map(comment => comment.id)
    const first = await service.get(`/api/content/${hash}/comments?pageSize=2`)
    assert.equal(first.status, 200, JSON.stringify(first.body))
    assert.equal(first.body.message, 'Comments retrieved successfully')
    assert.deepEqual(first.body.data.results.map((comment: { id: string }) => comment.id), newest.slice(0, 2))
    assert.equal(first.body.data.total, topLevel.length)
    assert.equal(first.body.data.hasMore, topLevel.length > 2)
    const last = await service.get(`/api/content/${hash}/comments?page=${Math.ceil(topLevel.length / 2) - 1}&pageSize=2`)
    assert.equal(last.body.data.hasMore, false)
    assert.deepEqual(last.body.data.results.map((comment: { id: string }) => comment.id), newest.slice((Math.ceil(topLevel.length / 2) - 1) * 2))
    // getcomments takes the root txid alone: no parent, no viewer, no ids.
    assert.deepEqual(node.callsTo('getcomments').at(-1)?.params, [hash])
  })

  it('answers an empty page past the end, 404 for unknown content, 400 for bad paging, 500 when the node fails', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: NO_CACHE })
    const { hash, topLevel } = postWithComments(node, 1)
    const beyond = await service.get(`/api/content/${hash}/comments?page=50&pageSize=100`)
    assert.deepEqual(beyond.body.data, { results: [], total: topLevel.length, hasMore: false })
    const unknown = await service.get(`/api/content/${'e'.repeat(64)}/comments`)
    assert.equal(unknown.status, 404)
    assert.equal(node.callsTo('getcomments').length, 1, 'no getcomments for unknown content')
    for (const query of ['pageSize=0', 'pageSize=Infinity', 'page=Infinity']) {
      const bad = await service.get(`/api/content/${hash}/comments?${query}`)
      assert.deepEqual([bad.status, bad.body.message], [400, `Invalid query parameter: ${query.split('=')[0]}`], query)
    }
    // Another post, whose comments no cache holds yet.
    const other = node.dataset.posts.find(post => post.hash !== hash)
    assert.ok(other)
    node.setFault({ kind: 'rpc-error', code: -32603, message: 'Something broke' }, { method: 'getcomments' })
    const failed = await service.get(`/api/content/${other.hash}/comments`)
    assert.deepEqual([failed.status, failed.body.message], [500, 'Failed to retrieve comments'])
  })
})

describe('GET /api/tags', () => {
  it('answers the popular tags of a language, asking the node with paging as strings', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    const { status, body, headers } = await service.get('/api/tags?lang=ru&pageSize=5')
    assert.equal(status, 200, JSON.stringify(body))
    assert.equal(body.message, 'Tags retrieved successfully')
    assert.ok(body.data.length > 0 && body.data.length <= 5)
    const counts = body.data.map((tag: { count: number }) => tag.count)
    assert.deepEqual(counts, [...counts].sort((a, b) => b - a), 'most used first')
    assert.deepEqual(node.callsTo('gettags').at(-1)?.params, ['0', '5', null, 'ru'])
    assert.equal(headers.get('cache-control'), 'public, max-age=60, stale-while-revalidate=60')
    await service.get('/api/tags')
    assert.deepEqual(node.callsTo('gettags').at(-1)?.params, ['0', '50', null, 'en'])
  })

  it('answers 400 for a bad language or size, 500 when the node fails', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: NO_CACHE })
    for (const query of ['lang=english', 'lang=EN', 'pageSize=101', 'pageSize=0', 'pageSize=Infinity']) {
      const { status, body } = await service.get(`/api/tags?${query}`)
      assert.equal(status, 400, query)
      assert.match(body.message, /^Invalid query parameter: (lang|pageSize)$/)
    }
    assert.equal(node.callsTo('gettags').length, 0)
    node.setFault({ kind: 'rpc-error', code: -32603, message: 'Something broke' }, { method: 'gettags' })
    const failed = await service.get('/api/tags')
    assert.deepEqual([failed.status, failed.body.message], [500, 'Failed to retrieve tags'])
  })
})
