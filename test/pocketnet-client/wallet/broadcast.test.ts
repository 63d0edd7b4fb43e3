import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer } from 'node:http'
import { describe, it, type TestContext } from 'node:test'
import { PocketNetProxyApi, type BroadcastError } from '../../../packages/pocketnet-client/index.js'
import { NODE_SIGNED } from './vectors.js'

const NODE_INFO = JSON.stringify({ result: { version: '0.22.7', lastblock: { height: 1095, hash: 'ab'.repeat(32), time: 1 }, chain: 'regtest' }, error: null })

/** A node that answers sendrawtransaction with `answer` (as a 0.22.7 node answers), and records the paths and params of the calls. */
async function nodeAnswering (t: TestContext, answer: () => { status: number, body: unknown }): Promise<{ url: string, calls: Array<{ path: string, params: unknown }> }> {
  const calls: Array<{ path: string, params: unknown }> = []
  const server = createServer((request, response) => {
    let body = ''
    request.setEncoding('utf8').on('data', (chunk: string) => { body += chunk })
    request.on('end', () => {
      const { method, params } = JSON.parse(body) as { method: string, params: unknown }
      if (method === 'getnodeinfo') return response.writeHead(200, { 'content-type': 'application/json' }).end(NODE_INFO)
      calls.push({ path: request.url ?? '', params })
      const { status, body: sent } = answer()
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(sent))
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.after(() => server.close())
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, calls }
}

async function client (t: TestContext, urls: string[]): Promise<PocketNetProxyApi> {
  const api = await PocketNetProxyApi.create({ nodes: urls, hedging: false })
  t.after(() => api.close())
  return api
}

const rpcError = (code: number, message: string) => ({ status: 500, body: { result: null, error: { code, message }, id: null } })

describe('broadcastTransaction', () => {
  it('posts [hex, {}] to /post/ and answers the txid', async (t) => {
    const node = await nodeAnswering(t, () => ({ status: 200, body: { result: NODE_SIGNED.txid, error: null, id: null } }))
    const api = await client(t, [node.url])
    assert.deepEqual(await api.broadcastTransaction(NODE_SIGNED.hex), { txid: NODE_SIGNED.txid, alreadyConfirmed: false })
    assert.deepEqual(node.calls, [{ path: '/post/', params: [NODE_SIGNED.hex, {}] }])
  })

  it('takes "already in block chain" as success', async (t) => {
    const node = await nodeAnswering(t, () => rpcError(-27, 'transaction already in block chain'))
    const api = await client(t, [node.url])
    assert.deepEqual(await api.broadcastTransaction(NODE_SIGNED.hex), { txid: NODE_SIGNED.txid, alreadyConfirmed: true })
  })

  const refusals: Array<[number, string, string]> = [
    [-26, 'txn-mempool-conflict', 'BROADCAST_ERR_CONFLICT'],
    [-26, 'bad-txns-inputs-missingorspent', 'BROADCAST_ERR_INPUTS_SPENT'],
    [-32602, 'Invalid address', 'BROADCAST_ERR_INPUTS_SPENT'],
    [-26, 'min relay fee not met, 0 < 230', 'BROADCAST_ERR_REJECTED'],
    [-26, 'multi-op-return', 'BROADCAST_ERR_REJECTED'],
    [-22, 'TX decode failed', 'BROADCAST_ERR_REJECTED'],
    [261, 'bad-txns-premature-spend-of-pocketnet', 'BROADCAST_ERR_REJECTED'],
  ]
  for (const [rpcCode, rpcMessage, code] of refusals) {
    it(`classifies ${rpcCode} ${rpcMessage} as ${code}, asking no other node, the node's text kept out of the message`, async (t) => {
      const first = await nodeAnswering(t, () => rpcError(rpcCode, rpcMessage))
      const second = await nodeAnswering(t, () => ({ status: 200, body: { result: NODE_SIGNED.txid, error: null } }))
      const api = await client(t, [first.url, second.url])
      await assert.rejects(api.broadcastTransaction(NODE_SIGNED.hex, { node: 'node 1' }), (err: BroadcastError) => {
        assert.deepEqual([err.name, err.code, err.txid, err.rpcCode, err.rpcMessage], ['BroadcastError', code, NODE_SIGNED.txid, rpcCode, rpcMessage])
        assert.ok(!err.message.includes(rpcMessage))
        return true
      })
      assert.equal(second.calls.length, 0)
    })
  }

  it('asks the next node when one is unwell, and says unavailable when none answered', async (t) => {
    const sick = await nodeAnswering(t, () => rpcError(-32603, 'internal'))
    const well = await nodeAnswering(t, () => ({ status: 200, body: { result: NODE_SIGNED.txid, error: null } }))
    const api = await client(t, [sick.url, well.url])
    assert.equal((await api.broadcastTransaction(NODE_SIGNED.hex)).txid, NODE_SIGNED.txid)
    const alone = await client(t, [sick.url])
    await assert.rejects(alone.broadcastTransaction(NODE_SIGNED.hex), { code: 'BROADCAST_ERR_UNAVAILABLE' })
  })

  it('refuses a node that answers another txid, and text that is not a transaction, before sending', async (t) => {
    const node = await nodeAnswering(t, () => ({ status: 200, body: { result: 'cd'.repeat(32), error: null } }))
    const api = await client(t, [node.url])
    await assert.rejects(api.broadcastTransaction(NODE_SIGNED.hex), { code: 'BROADCAST_ERR_REJECTED' })
    await assert.rejects(api.broadcastTransaction('xyz'), { code: 'WALLET_ERR_TRANSACTION' })
    assert.equal(node.calls.length, 1)
  })
})
