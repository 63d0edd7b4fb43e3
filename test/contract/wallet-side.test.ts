/**
 * The wallet side on the real node and on the emulator alike: the same kinds of payments, signed
 * by the tests' own signer (test/helpers/pocketnet-signer.ts) for a fresh key on each, sent to each
 * one's write path, must get the same answers (the txid, or the same code and text), and txunspent
 * and estimatesmartfee the same fields and rules. The facts are in docs/pocketnet-node.md, "The
 * wallet side"; the emulator's own tests are test/devnode/wallet.test.ts.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { createEmulator, type Emulator } from '../../devnode/server.js'
import { keyFromSecret, memoScript, sign, txidOf, unsigned, type Pay, type Spend, type TestKey } from '../helpers/pocketnet-signer.js'
import { contractNode, payFromWallet, privateRpc, stakeBlock, type RpcAnswer } from './contract-node.js'

type Outcome = string | [number, string]

/** One node as the test drives it: the real one or the emulator. */
interface Side {
  name: string
  payer: TestKey
  receiver: TestKey
  url: string
  fund (satoshi: number): Promise<{ txid: string, vout: number }>
  mine (): Promise<void>
  disconnect (): Promise<void>
}

async function call (url: string, path: '/public/' | '/post/', method: string, params: unknown[]): Promise<RpcAnswer & { status: number }> {
  const response = await fetch(`${url}${path}`, { method: 'POST', body: JSON.stringify({ method, params }), headers: { 'content-type': 'application/json' } })
  return { status: response.status, ...await response.json() as RpcAnswer }
}

/** The txid, or the code and text with the transaction's size written as SIZE (the signatures' lengths differ by a byte between the two). */
async function send (side: Side, hex: string, method = 'sendrawtransaction'): Promise<Outcome> {
  const answer = await call(side.url, '/post/', method, [hex, {}])
  if (answer.error === null) return answer.result === txidOf(hex) ? 'its txid' : `another txid: ${String(answer.result)}`
  return [answer.error.code, answer.error.message.replace(` < ${hex.length / 2}`, ' < SIZE')]
}

const unspent = async (side: Side, address: string): Promise<any[]> => (await call(side.url, '/public/', 'txunspent', [[address]])).result

describe('the wallet side, on the real node and on the emulator', () => {
  let emulator: Emulator
  const sides: Side[] = []

  before(async () => {
    emulator = await createEmulator({ port: 0 })
    const payerSecret = randomBytes(32)
    const receiverSecret = randomBytes(32)
    sides.push({
      name: 'the node',
      payer: keyFromSecret(payerSecret, 111),
      receiver: keyFromSecret(receiverSecret, 111),
      url: contractNode.url,
      async fund (satoshi) {
        const { txid } = await payFromWallet(this.payer.address, satoshi, 'wallet side')
        await stakeBlock()
        return { txid, vout: 0 }
      },
      async mine () {
        await stakeBlock()
      },
      async disconnect () {
        await privateRpc('invalidateblock', [await privateRpc('getbestblockhash')])
      },
    }, {
      name: 'the emulator',
      payer: keyFromSecret(payerSecret),
      receiver: keyFromSecret(receiverSecret),
      url: emulator.url,
      async fund (satoshi) {
        return emulator.fund(this.payer.address, satoshi)
      },
      async mine () {
        emulator.mineBlock()
      },
      async disconnect () {
        emulator.disconnectBlock()
      },
    })
  })
  after(() => emulator.close())

  it('answers every broadcast alike, from refusals to a dropped payment sent again', async () => {
    const seen: Record<string, Record<string, unknown>> = {}
    const fieldsSeen: string[][] = []
    for (const side of sides) {
      const { payer, receiver } = side
      const outcomes: Record<string, unknown> = {}
      seen[side.name] = outcomes
      const coin = await side.fund(20_000_000)
      const spend: Spend[] = [{ ...coin, key: payer }]
      const paying = (sat: number, change?: number): Pay[] => [{ script: receiver.script, sat }, ...(change === undefined ? [] : [{ script: payer.script, sat: change }])]

      const listed = await unspent(side, payer.address)
      fieldsSeen.push(Object.keys(listed[0] ?? {}))
      outcomes['txunspent after funding'] = listed.map(each => [each.txid === coin.txid, each.vout, each.amountSat, each.confirmations, each.coinbase, each.pockettx])

      const refusals: Record<string, string> = {
        'bad hex': 'zz',
        'an unknown first input': sign([{ txid: '11'.repeat(32), vout: 0, key: payer }], paying(1_000_000)),
        'an output past the last': sign([{ ...coin, vout: 5, key: payer }], paying(1_000_000)),
        dust: sign(spend, paying(545, 19_990_000)),
        'more out than in': sign(spend, paying(30_000_000)),
        'a missing second input': sign([...spend, { txid: '22'.repeat(32), vout: 0, key: payer }], paying(1_000_000)),
        'the wrong key': sign([{ ...coin, key: receiver }], paying(1_000_000, 18_990_000)),
        unsigned: unsigned(spend, paying(1_000_000, 18_990_000)),
        'a fee of 99': sign(spend, paying(19_999_901)),
        'version 3': sign(spend, paying(1_000_000, 18_990_000), { version: 3 }),
        'two OP_RETURN outputs': sign(spend, [{ script: receiver.script, sat: 1_000_000 }, { script: memoScript('a'), sat: 0 }, { script: memoScript('b'), sat: 0 }]),
        'a high S': sign(spend, paying(1_000_000, 18_990_000), { highS: true }),
        'an extra push': sign(spend, paying(1_000_000, 18_990_000), { extraPush: true }),
      }
      for (const [name, hex] of Object.entries(refusals)) outcomes[name] = await send(side, hex)

      const payment = sign(spend, [{ script: receiver.script, sat: 10_000_000 }, { script: memoScript('inv_wallet_side'), sat: 0 }, { script: payer.script, sat: 9_990_000 }])
      const read = await call(side.url, '/public/', 'sendrawtransaction', [payment, {}])
      outcomes['on the read path'] = [read.status, read.error?.code]
      outcomes.accepted = await send(side, payment, 'addtransaction')
      outcomes['the same bytes again'] = await send(side, payment)
      outcomes['a conflicting spend'] = await send(side, sign(spend, paying(2_000_000, 17_990_000)))
      outcomes['txunspent, the payment in the mempool'] = (await unspent(side, payer.address)).length
      outcomes['in the mempool'] = (await call(side.url, '/public/', 'getrawtransaction', [txidOf(payment)])).result?.height === undefined

      await side.mine()
      outcomes['txunspent, the payment mined'] = (await unspent(side, payer.address)).map(each => [each.txid === txidOf(payment), each.vout, each.amountSat, each.confirmations])
      outcomes['the same bytes, mined'] = await send(side, payment)
      outcomes['a spend of the coin, mined'] = await send(side, sign(spend, paying(2_000_000, 17_990_000)))

      await side.disconnect()
      outcomes['txunspent, the payment dropped'] = (await unspent(side, payer.address)).length
      outcomes['the dropped payment, sent again'] = await send(side, payment)
      await side.mine()
      const mined = (await call(side.url, '/public/', 'getrawtransaction', [txidOf(payment)])).result
      outcomes['mined again'] = typeof mined?.height === 'number'
    }
    assert.deepEqual(fieldsSeen[1], fieldsSeen[0])
    assert.deepEqual(seen['the emulator'], seen['the node'])
    // Not vacuous: the node accepted and refused as written in docs/pocketnet-node.md.
    assert.equal(seen['the node']?.accepted, 'its txid')
    assert.deepEqual(seen['the node']?.['the wrong key'], [-26, 'mandatory-script-verify-flag-failed (Script failed an OP_EQUALVERIFY operation)'])
  })

  it('answers estimatesmartfee with the same fields and refuses the same params', async () => {
    const [node, own] = sides as [Side, Side]
    const shape = async (side: Side, params: unknown[]): Promise<unknown> => {
      const answer = await call(side.url, '/public/', 'estimatesmartfee', params)
      return answer.error === null ? Object.keys(answer.result).map(key => [key, typeof answer.result[key]]) : [answer.status, answer.error.code, answer.error.message]
    }
    for (const params of [[2], [6, 'ECONOMICAL'], [0], [1009], ['2'], [2.5], [2, 'bad'], []]) {
      assert.deepEqual(await shape(own, params), await shape(node, params), JSON.stringify(params))
    }
    assert.ok(contractNode.dataset.height > 0)
  })
})
