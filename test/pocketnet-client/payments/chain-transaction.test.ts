import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { once } from 'node:events'
import { readFile } from 'node:fs/promises'
import { describe, it } from 'node:test'
import { PocketNetProxyApi } from '../../../packages/pocketnet-client/index.js'
import { isUnknownTransactionError, readChainTransaction } from '../../../packages/pocketnet-client/payments/chain-transaction.js'

const MERCHANT = 'mwtvjM7XYJ59cbotx8ZerEJtnzmeshwH9G'

async function recorded (name: string): Promise<{ result: unknown, error: { code: number, message: string } | null }> {
  return JSON.parse(await readFile(new URL(`../../fixtures/payments/getrawtransaction-${name}.json`, import.meta.url), 'utf8'))
}

describe('reading getrawtransaction answers', () => {
  it('reads a real payment: amounts in satoshi, the block, the memo output', async () => {
    const tx = readChainTransaction((await recorded('inv-demo-exact')).result)
    assert.deepEqual(tx, {
      txid: '01ec6ec53d90043504945901b3e43f1de1646795c5cb4c1ba573c94995684cf8',
      height: 1087,
      blockHash: '5dede899b30c9647943980fde6bcf1c53138ea5253c6aeabe94a2396487b8e7a',
      inputs: [{ address: 'mvmQvHFvYB1a1CtkTrYaZdELk15d2sB86z', satoshi: 5_000_000_000 }],
      outputs: [
        { n: 0, addresses: [MERCHANT], satoshi: 150_000_000, scriptHex: '76a914b3a9dbb433dbb00f2d73dbe79c4375402bfa60fe88ac' },
        { n: 1, addresses: [''], satoshi: 0, scriptHex: '6a0e696e765f64656d6f5f6578616374' },
        { n: 2, addresses: ['mvmQvHFvYB1a1CtkTrYaZdELk15d2sB86z'], satoshi: 4_849_900_000, scriptHex: '76a914a745ef71503819d1de191e25b80e55920ba4110988ac' },
      ],
    })
  })

  it('reads a transaction in the mempool, or put back there by a re-org, as in no block', async () => {
    for (const name of ['long-memo-mempool', 'long-memo-reorged']) {
      const tx = readChainTransaction((await recorded(name)).result)
      assert.equal(tx?.height, undefined, name)
      assert.equal(tx?.blockHash, undefined, name)
      assert.equal(tx?.outputs[0]?.satoshi, 70_000_000)
    }
    assert.equal(readChainTransaction((await recorded('long-memo-in-block')).result)?.height, 1096)
  })

  it('reads {} as a transaction the node does not know', () => {
    assert.equal(readChainTransaction({}), undefined)
  })

  it('refuses answers without the fields and types of a transaction', () => {
    const good = { txid: 'ab'.repeat(32), vin: [], vout: [] }
    const bad: unknown[] = [
      null, [], 'x',
      { ...good, txid: 'xyz' },
      { ...good, vin: {} },
      { ...good, vout: null },
      { ...good, height: 5 },
      { ...good, height: -1, blockHash: 'ab'.repeat(32) },
      { ...good, height: 5, blockHash: 'nothex' },
      { ...good, vin: [7] },
      { ...good, vin: [{ address: 5, value: 1 }] },
      { ...good, vin: [{ address: 'a', value: '1' }] },
      { ...good, vout: [7] },
      { ...good, vout: [{ value: 1, scriptPubKey: { hex: '' } }] },
      { ...good, vout: [{ n: 0, value: '1', scriptPubKey: { hex: '' } }] },
      { ...good, vout: [{ n: 0, value: 1, scriptPubKey: {} }] },
      { ...good, vout: [{ n: 0, value: 1, scriptPubKey: { hex: '', addresses: [1] } }] },
      { ...good, vout: [{ n: 0, value: 0.1 + 0.2, scriptPubKey: { hex: '' } }] },
    ]
    for (const answer of bad) assert.throws(() => readChainTransaction(answer), { code: 'PAYMENT_ERR_MALFORMED_TRANSACTION' }, JSON.stringify(answer))
    assert.deepEqual(readChainTransaction({ ...good, vin: [{ coinbase: '03' }], vout: [{ n: 0, value: 1, scriptPubKey: { hex: '51' } }] }), {
      txid: good.txid, inputs: [{ satoshi: 0 }], outputs: [{ n: 0, addresses: [], satoshi: 100_000_000, scriptHex: '51' }],
    })
  })
})

describe('a txid the node does not know', () => {
  it('is told from other failures, as the client raises the real node\'s answer', async (t) => {
    const unknown = await readFile(new URL('../../fixtures/payments/getrawtransaction-unknown-txid.json', import.meta.url))
    const nodeInfo = await readFile(new URL('../../fixtures/payments/getnodeinfo.json', import.meta.url))
    const server = createServer((request, response) => {
      let body = ''
      request.setEncoding('utf8').on('data', (chunk: string) => { body += chunk })
      request.on('end', () => {
        const { method } = JSON.parse(body) as { method: string }
        response.writeHead(200, { 'content-type': 'application/json' }).end(method === 'getnodeinfo' ? nodeInfo : unknown)
      })
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    t.after(() => server.close())
    const { port } = server.address() as { port: number }
    const api = await PocketNetProxyApi.create({ nodes: [`http://127.0.0.1:${port}`] })
    t.after(() => api.close())
    const error = await api.rpc.getrawtransaction({ txid: '5a7f3c1e9b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a1c3e5b7d9f2a4c6e8b0d1f3a' }).then(() => undefined, (err: unknown) => err)
    assert.ok(error instanceof Error)
    assert.equal(isUnknownTransactionError(error), true)
  })

  it('is not any other node error, nor a failure of only some nodes', () => {
    const unknown = { code: 'RPC_ERR_NODE', rpcCode: -32603, rpcMessage: 'Transaction::List reconstruct failed - no return data for ab tx' }
    assert.equal(isUnknownTransactionError(unknown), true)
    assert.equal(isUnknownTransactionError({ ...unknown, rpcMessage: 'out of memory' }), false)
    assert.equal(isUnknownTransactionError({ ...unknown, rpcCode: -1 }), false)
    assert.equal(isUnknownTransactionError({ code: 'RPC_ERR_UNAVAILABLE', cause: new AggregateError([unknown, unknown]) }), true)
    assert.equal(isUnknownTransactionError({ code: 'RPC_ERR_UNAVAILABLE', cause: new AggregateError([unknown, { code: 'RPC_ERR_TIMEOUT' }]) }), false)
    assert.equal(isUnknownTransactionError({ code: 'RPC_ERR_UNAVAILABLE', cause: new AggregateError([]) }), false)
    assert.equal(isUnknownTransactionError({ code: 'RPC_ERR_TIMEOUT' }), false)
    assert.equal(isUnknownTransactionError(undefined), false)
  })
})
