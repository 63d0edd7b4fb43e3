import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { startApp } from '../helpers/build-app.js'
import { startEmulator } from '../helpers/start-emulator.js'

describe('GET /api/post/:hash', () => {
  // docs:post-test:start
  it('answers the post for its hash, asking the node once', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    const post = node.dataset.posts[0]
    assert.ok(post)
    const { status, body, headers } = await service.get(`/api/post/${post.hash}`)
    assert.equal(status, 200)
    assert.equal(body.message, 'Post retrieved successfully')
    assert.equal(body.data.hash, post.hash)
    assert.equal(body.data.c, post.caption)
    assert.equal(headers.get('cache-control'), 'public, max-age=60, stale-while-revalidate=60')
    // The hash goes in a list, and the third position is left out (docs/pocketnet-node.md).
    assert.deepEqual(node.callsTo('getcontent').map(call => call.params), [[[post.hash]]])
    await service.get(`/api/post/${post.hash}`)
    assert.equal(node.callsTo('getcontent').length, 1, 'the repeat came from the cache')
  })

  it('answers 404 for a hash that is no post', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    const hash = 'f'.repeat(64)
    const { status, body } = await service.get(`/api/post/${hash}`)
    assert.equal(status, 404)
    assert.deepEqual(body, { message: 'Post not found', error: `No post has the hash ${hash}` })
  })

  it('answers 400 for a malformed hash without calling the node', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    for (const hash of ['abc', 'F'.repeat(64), `${'a'.repeat(63)}g`]) {
      const { status, body } = await service.get(`/api/post/${hash}`)
      assert.equal(status, 400, hash)
      assert.deepEqual(body, { message: 'Invalid path parameter: hash', error: `hash must be 64 lowercase hexadecimal characters (a transaction hash) (got ${JSON.stringify(hash)})` })
    }
    assert.equal(node.callsTo('getcontent').length, 0)
  })

  it('answers 500 with its failure message when the node fails', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    node.setFault({ kind: 'rpc-error', code: -32603, message: 'SQLiteDatabase: database is locked' }, { method: 'getcontent' })
    const { status, body } = await service.get(`/api/post/${'a'.repeat(64)}`)
    assert.equal(status, 500)
    assert.equal(body.message, 'Failed to retrieve post')
    assert.match(body.error, /No Pocketnet node could answer getcontent: .*internal error \(RPC error -32603\)/)
    assert.doesNotMatch(body.error, /SQLiteDatabase/, 'the node\'s own words stay in the log')
  })
  // docs:post-test:end
})
