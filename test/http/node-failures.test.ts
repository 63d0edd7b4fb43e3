/** A node's failures as clients see them (issue #24): in our words, and saying when they are temporary. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { startApp } from '../helpers/build-app.js'
import { startEmulator } from '../helpers/start-emulator.js'

describe('a node\'s failures, as clients see them', () => {
  it('never passes on what a node wrote: no URL, no secret, no length it chose', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { CACHE_TTL_SEARCH_MS: '0' } })
    const message = `upstream http://10.1.2.3:38081/?password=hunter2 said ${'x'.repeat(200_000)}`
    node.setFault({ kind: 'rpc-error', code: -8, message, status: 500 }, { method: 'search' })
    const { status, body, headers } = await service.get('/api/search?keyword=bitcoin')
    assert.equal(status, 500)
    assert.equal(body.message, 'Search operation failed')
    assert.equal(body.error, 'Pocketnet node rejected search (node 1): invalid parameter (RPC error -8)')
    assert.equal(headers.get('retry-after'), null, 'an answer about the request is not worth retrying')
    const ready = await service.get('/readyz')
    assert.doesNotMatch(JSON.stringify(ready.body), /password|10\.1\.2\.3/)
  })

  it('says when the failure is temporary: no node reachable, with a code and Retry-After', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { CACHE_TTL_SEARCH_MS: '0' } })
    assert.equal((await service.get('/api/search?keyword=bitcoin')).status, 200)
    await node.stop()
    const { status, body, headers } = await service.get('/api/search?keyword=music')
    assert.equal(status, 500, 'the spec\'s status for a failed route')
    assert.equal(body.message, 'Search operation failed')
    assert.equal(body.code, 'RPC_ERR_UNAVAILABLE')
    assert.equal(headers.get('retry-after'), '2')
  })
})
