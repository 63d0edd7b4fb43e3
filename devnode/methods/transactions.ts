/**
 * Transactions from the chain history: `getrawtransaction [txid]` and `gettransactions [txids]`,
 * in the node's explorer form (a real 0.22.7 node's, docs/pocketnet-node.md, "Transactions"):
 * amounts in PKOIN as JSON numbers, an OP_RETURN output with the address `""`, and no `height`
 * or `blockHash` while the transaction waits in the mempool. An unknown txid is an error (-32603),
 * not an empty answer.
 */
import { createHash } from 'node:crypto'
import bs58check from 'bs58check'
import type { ChainHistory, ChainTransaction, ChainBlock } from '../chain.js'
import { RpcError, typeCheck } from './common.js'

const SATOSHI_PER_PKOIN = 100_000_000

/** PKOIN as the node writes it: a JSON number (its own formatting of satoshi / 1e8). */
export const pkoin = (satoshi: number): number => Number((satoshi / SATOSHI_PER_PKOIN).toFixed(8))

/** A pay-to-public-key-hash script for `address`: what the node shows as an ordinary output's `hex`. */
export function scriptOf (address: string): string {
  let hash: string
  try {
    hash = Buffer.from(bs58check.decode(address).subarray(1)).toString('hex')
  } catch {
    hash = createHash('sha256').update(address).digest('hex').slice(0, 40)
  }
  return `76a914${hash}88ac`
}

/** An OP_RETURN script holding `memo` (hex): the push of its bytes. */
function memoScript (memo: string): string {
  const length = memo.length / 2
  const push = length < 0x4c ? length.toString(16).padStart(2, '0') : `4c${length.toString(16).padStart(2, '0')}`
  return `6a${push}${memo}`
}

function explorerForm (transaction: ChainTransaction, block: ChainBlock | undefined): Record<string, unknown> {
  return {
    txid: transaction.txid,
    type: transaction.txType,
    ...(block === undefined ? {} : { height: block.height, blockHash: block.hash }),
    nTime: transaction.time,
    vin: transaction.inputs.map((input, index) => ({
      txid: input.txid ?? createHash('sha256').update(`${transaction.txid}:${index}`).digest('hex'),
      vout: input.vout ?? 0,
      address: input.address,
      value: pkoin(input.amount),
    })),
    vout: transaction.outputs.map((output, n) => ({
      n,
      value: pkoin(output.amount),
      scriptPubKey: output.script !== undefined
        ? { addresses: [''], hex: output.script }
        : output.memo === undefined
          ? { addresses: [output.address ?? ''], hex: scriptOf(output.address ?? '') }
          : { addresses: [''], hex: memoScript(output.memo) },
    })),
  }
}

function found (chain: ChainHistory, txid: string): Record<string, unknown> {
  const where = chain.findTransaction(txid)
  if (where === undefined) throw new RpcError(-32603, `Transaction::List reconstruct failed - no return data for ${txid} tx`)
  return explorerForm(where.transaction, where.block)
}

/** `getrawtransaction [txid]`: only the first param is read, and it must be a string. */
export function getRawTransaction (chain: ChainHistory, params: unknown[]): Record<string, unknown> {
  if (params.length === 0) throw new RpcError(-32603, 'JSON value is not a string as expected')
  typeCheck(params[0], 'string')
  return found(chain, params[0] as string)
}

/** `gettransactions [txid | txids]`: each known, else the whole call fails as for one. */
export function getTransactions (chain: ChainHistory, params: unknown[]): unknown[] {
  const [txids] = params
  const list = typeof txids === 'string' ? [txids] : Array.isArray(txids) ? txids : undefined
  if (list === undefined) throw new RpcError(-32602, 'Invalid inputs params')
  if (list.some(txid => typeof txid !== 'string')) throw new RpcError(-32603, 'JSON value is not a string as expected')
  return (list as string[]).map(txid => found(chain, txid))
}
