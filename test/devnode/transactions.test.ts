/**
 * The emulator's transactions, as a node's explorer gives them (getrawtransaction,
 * gettransactions): from the mempool to a block, back to the mempool when the block is
 * disconnected, and an error for a txid it never saw. Their structure is checked against a real
 * node by the contract suite (test/contract/emulator-parity.test.ts).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { startEmulator } from '../helpers/start-emulator.js'

async function rpc (url: string, method: string, params: unknown[]): Promise<{ result: any, error: { code: number, message: string } | null }> {
  const response = await fetch(`${url}/public/`, { method: 'POST', body: JSON.stringify({ method, params }) })
  return await response.json() as { result: any, error: { code: number, message: string } | null }
}

const MEMO = Buffer.from('inv_0001').toString('hex')

describe('the emulator\'s transactions', () => {
  it('gives a payment from the mempool without a block, then with its block, without one after a disconnect (never mined again), and with it once the block is connected again', async (t) => {
    const node = await startEmulator(t)
    const [payer, receiver] = node.dataset.users.map(user => user.address) as [string, string]
    const paid = node.addTransaction({
      inputs: [{ address: payer, amount: 300_000_000 }],
      // 0.1 + 0.2 PKOIN: the node writes 0.3, not 0.30000000000000004.
      outputs: [{ address: receiver, amount: 30_000_000 }, { memo: MEMO, amount: 0 }, { address: payer, amount: 269_990_000 }],
    })
    const pending = (await rpc(node.url, 'getrawtransaction', [paid.txid])).result
    assert.equal(pending.height, undefined)
    assert.equal(pending.blockHash, undefined)
    assert.deepEqual(pending.vout.map((output: any) => [output.n, output.value, output.scriptPubKey.addresses]), [[0, 0.3, [receiver]], [1, 0, ['']], [2, 2.6999, [payer]]])
    assert.equal(pending.vout[1].scriptPubKey.hex, `6a08${MEMO}`)
    assert.match(pending.vout[0].scriptPubKey.hex, /^76a914[0-9a-f]{40}88ac$/)
    assert.deepEqual(pending.vin.map((input: any) => [input.address, input.value]), [[payer, 3]])

    node.mineBlock()
    const mined = (await rpc(node.url, 'getrawtransaction', [paid.txid])).result
    assert.deepEqual([mined.height, mined.blockHash], [node.height, node.chain.tip.hash])
    assert.deepEqual((await rpc(node.url, 'gettransactions', [[paid.txid]])).result, [mined])

    node.disconnectBlock()
    const out = (await rpc(node.url, 'getrawtransaction', [paid.txid])).result
    assert.deepEqual([out.height, out.blockHash], [undefined, undefined], 'answered without a block, as a 0.22.7 node does')
    // The node does not mine it again in the block that takes its height.
    node.mineBlock()
    assert.equal((await rpc(node.url, 'getrawtransaction', [paid.txid])).result.height, undefined)
    assert.deepEqual(node.chain.tip.transactions, [])
    // Only its own block coming back brings it back, and only while that block still fits.
    assert.throws(() => node.reconnectBlock(), /another block took its height/)
  })

  it('connects a disconnected block again with its hash and what it held', async (t) => {
    const node = await startEmulator(t)
    const [payer, receiver] = node.dataset.users.map(user => user.address) as [string, string]
    const paid = node.addTransaction({ inputs: [{ address: payer, amount: 2 }], outputs: [{ address: receiver, amount: 1 }] })
    const block = node.chain.mine()
    assert.deepEqual(node.disconnectBlock(), block)
    assert.deepEqual(node.reconnectBlock(), block)
    const back = (await rpc(node.url, 'getrawtransaction', [paid.txid])).result
    assert.deepEqual([back.height, back.blockHash, node.height], [block.height, block.hash, block.height])
    assert.throws(() => node.reconnectBlock(), /No disconnected block/)
  })

  it('fails for a txid it never saw, and for params of the wrong type, as the node does', async (t) => {
    const node = await startEmulator(t)
    const unknown = 'ab'.repeat(32)
    assert.deepEqual((await rpc(node.url, 'getrawtransaction', [unknown])).error, { code: -32603, message: `Transaction::List reconstruct failed - no return data for ${unknown} tx` })
    assert.equal((await rpc(node.url, 'getrawtransaction', [1])).error?.code, -3)
    assert.equal((await rpc(node.url, 'gettransactions', [1])).error?.code, -32602)
    assert.equal((await rpc(node.url, 'gettransactions', [[1]])).error?.code, -32603)
  })

  it('writes a long memo with a one-byte length push', async (t) => {
    const node = await startEmulator(t)
    const memo = Buffer.from('m'.repeat(80)).toString('hex')
    const paid = node.addTransaction({ outputs: [{ memo, amount: 0 }] })
    assert.equal((await rpc(node.url, 'getrawtransaction', [paid.txid])).result.vout[0].scriptPubKey.hex, `6a4c50${memo}`)
  })
})
