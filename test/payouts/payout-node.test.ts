/**
 * What the payouts ask of several nodes (src/payouts/payout-node.ts), through the service's own
 * client over two emulators on one chain: a payout's block is backed only when every node asked
 * shows the transaction in that block, deep enough by its own tip; one node that denies it (an
 * unknown transaction, or another chain) stops the confirmation; one that cannot answer neither
 * backs nor stops it. Before a payout may fail, every node is asked whether it has the
 * transaction, and no answer at all is not "no".
 */
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { describe, it } from 'node:test'
import { ChainHistory, type Emulator } from '../../devnode/server.js'
import { PayoutNode } from '../../src/payouts/payout-node.js'
import { startApp } from '../helpers/build-app.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { freshDataDir } from '../payments/databases.js'

type WithAfter = { after (fn: () => unknown): void }

const UNKNOWN = { kind: 'rpc-error', code: -32603, message: 'Transaction::List reconstruct failed - no return data for tx' } as const
const quiet = { debug () {}, warn () {} }

async function twoNodes (t: WithAfter, second: 'same chain' | 'another chain'): Promise<{ nodes: [Emulator, Emulator], payout: PayoutNode }> {
  const chain = new ChainHistory({ height: 1000 })
  const first = await startEmulator(t, { chain })
  const other = await startEmulator(t, second === 'same chain' ? { chain } : { chain: new ChainHistory({ height: 1000 }) })
  const dataDir = await freshDataDir()
  t.after(() => rmSync(dataDir, { recursive: true, force: true }))
  const app = await startApp(t, { nodes: [first.url, other.url], env: { DATA_DIR: dataDir } })
  const api = await app.app.pocketnet.get()
  return { nodes: [first, other], payout: new PayoutNode(async () => api, { feeFloorSatPerKb: 1000, nodesRequired: 2, log: quiet }) }
}

describe('payouts asking several nodes', () => {
  it('backs a block only when both nodes show the transaction in it, deep enough by their own tips', async (t) => {
    const { nodes: [first, second], payout } = await twoNodes(t, 'same chain')
    const [payer, receiver] = first.dataset.users.map(user => user.address) as [string, string]
    const sent = first.addTransaction({ inputs: [{ address: payer, amount: 200_000_000 }], outputs: [{ address: receiver, amount: 100_000_000 }] })
    first.mineBlock()
    const block = { height: first.height, blockHash: first.chain.tip.hash }
    assert.equal(await payout.backs(sent.txid, block, 2), false, 'one confirmation of two')
    first.mineBlock()
    assert.equal(await payout.backs(sent.txid, block, 2), true)
    assert.equal(await payout.backs(sent.txid, { ...block, blockHash: 'ab'.repeat(32) }, 2), false, 'another block')
    second.setFault(UNKNOWN, { method: 'getrawtransaction', times: 1 })
    assert.equal(await payout.backs(sent.txid, block, 2), false, 'a node that denies the transaction stops it')
    assert.equal(await payout.backs(sent.txid, block, 2), true, 'and backs it once it shows it')
    second.setFault({ kind: 'drop' }, { method: 'getrawtransaction' })
    assert.equal(await payout.backs(sent.txid, block, 2), false, 'a node that cannot answer does not back it')
  })

  it('stops at a node on another chain', async (t) => {
    const { nodes: [first], payout } = await twoNodes(t, 'another chain')
    const [payer, receiver] = first.dataset.users.map(user => user.address) as [string, string]
    const sent = first.addTransaction({ inputs: [{ address: payer, amount: 200_000_000 }], outputs: [{ address: receiver, amount: 100_000_000 }] })
    first.mineBlock()
    first.mineBlock()
    assert.equal(await payout.backs(sent.txid, { height: first.height - 1, blockHash: (first.chain.block(first.height - 1) as { hash: string }).hash }, 2), false)
  })

  it('says a transaction is known when any node has it, unknown when every node that answers says so, and nothing when none answers', async (t) => {
    const { nodes: [first, second], payout } = await twoNodes(t, 'same chain')
    const [payer, receiver] = first.dataset.users.map(user => user.address) as [string, string]
    const sent = first.addTransaction({ inputs: [{ address: payer, amount: 200_000_000 }], outputs: [{ address: receiver, amount: 100_000_000 }] })
    first.setFault(UNKNOWN, { method: 'getrawtransaction' })
    assert.equal(await payout.knownAnywhere(sent.txid), true, 'the second node has it in its mempool')
    assert.equal(await payout.knownAnywhere('cd'.repeat(32)), false)
    first.setFault({ kind: 'drop' }, { method: 'getrawtransaction' })
    second.setFault({ kind: 'drop' }, { method: 'getrawtransaction' })
    await assert.rejects(payout.knownAnywhere(sent.txid), /no node could say/)
  })
})
