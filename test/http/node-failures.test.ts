/** A node's failures as clients see them (issue #24): in our words, and saying when they are temporary. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MAX_MESSAGE_LENGTH } from '../../packages/pocketnet-client/errors.js'
import { startApp } from '../helpers/build-app.js'
import { startEmulator } from '../helpers/start-emulator.js'

/** What a hostile or careless node may put in its error text: an internal URL, a password, 200 KB. */
const NODE_TEXT = `upstream http://10.1.2.3:38081/?password=secret said ${'x'.repeat(200_000)}`
const LEAKS = /10\.1\.2\.3|password|secret|xxxxxxxxxx/

describe('a node\'s failures, as clients see them', () => {
  it('never passes on what a node wrote: no URL, no secret, no length it chose', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { CACHE_TTL_SEARCH_MS: '0' } })
    node.setFault({ kind: 'rpc-error', code: -8, message: NODE_TEXT, status: 500 }, { method: 'search' })
    const { status, body, headers } = await service.get('/api/search?keyword=bitcoin')
    assert.equal(status, 500)
    assert.deepEqual(body, {
      message: 'Search operation failed',
      error: 'Pocketnet node rejected search (node 1): invalid parameter (RPC error -8)',
    }, 'the spec\'s message, our words, and no code: an answer about the request')
    assert.equal(headers.get('retry-after'), null, 'an answer about the request is not worth retrying')
    const ready = await service.get('/readyz')
    assert.doesNotMatch(JSON.stringify(ready.body), LEAKS)
  })

  it('keeps a node\'s words for the log when every node failed, and says the failure is temporary', async (t) => {
    const node = await startEmulator(t)
    const lines: Array<Record<string, any>> = []
    const service = await startApp(t, {
      nodes: [node.url],
      env: { CACHE_TTL_SEARCH_MS: '0', LOG_LEVEL: 'warn' },
      logStream: { write: line => lines.push(JSON.parse(line)) },
    })
    // -32603 says the node is unwell: tried elsewhere, and with no node left the call is unavailable.
    node.setFault({ kind: 'rpc-error', code: -32603, message: NODE_TEXT, status: 500 }, { method: 'search' })
    const response = await fetch(`${service.url}/api/search?keyword=bitcoin`)
    const text = await response.text()
    assert.equal(response.status, 500)
    assert.doesNotMatch(text, LEAKS)
    assert.ok(text.length < MAX_MESSAGE_LENGTH + 200, `bounded: ${text.length} characters`)
    const body = JSON.parse(text)
    assert.equal(body.message, 'Search operation failed')
    assert.equal(body.code, 'RPC_ERR_UNAVAILABLE')
    assert.match(body.error, /^No Pocketnet node could answer search: Pocketnet node rejected search \(node 1\): internal error \(RPC error -32603\)/)
    assert.equal(response.headers.get('retry-after'), '2')
    const logged = lines.find(line => line.msg === 'Search operation failed')
    assert.ok(logged, 'the failure is logged')
    assert.equal(logged.code, 'RPC_ERR_UNAVAILABLE')
    assert.equal(logged.attempts[0].node, node.url, 'the log has the node\'s URL')
    assert.ok(logged.attempts[0].rpcMessage.startsWith('upstream http://10.1.2.3:38081/?password=secret said x'), 'and its own words')
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
    assert.match(body.error, /^No Pocketnet node could answer search: node 1 failed: connection refused/)
    assert.equal(headers.get('retry-after'), '2')
  })

  it('says when the failure is temporary: the only node hangs, and no node answered in time', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { CACHE_TTL_SEARCH_MS: '0', RPC_TIMEOUT_MS: '200', RPC_DEADLINE_MS: '1000' } })
    node.setFault({ kind: 'hang' }, { method: 'search' })
    const { status, body, headers } = await service.get('/api/search?keyword=music')
    assert.equal(status, 500, 'the spec\'s status for a failed route')
    assert.equal(body.message, 'Search operation failed')
    assert.equal(body.code, 'RPC_ERR_TIMEOUT')
    assert.match(body.error, /^No Pocketnet node answered search in time: node 1 did not answer search within 200 ms/)
    assert.equal(headers.get('retry-after'), '2')
  })
})
