/** Transactions in the shape `readChainTransaction` gives, for the store's tests. */
import type { ChainTransaction } from '../../packages/pocketnet-client/payments/chain-transaction.js'
import { memoScriptHex } from '../../packages/pocketnet-client/payments/op-return.js'

export const MERCHANT = 'mwtvjM7XYJ59cbotx8ZerEJtnzmeshwH9G'
export const PAYER = 'mvmQvHFvYB1a1CtkTrYaZdELk15d2sB86z'

/** A txid made from a number: 64 hex digits. */
export function txid (n: number): string {
  return n.toString(16).padStart(64, '0')
}

export interface PaymentShape {
  txid: string
  amountSat: number
  memo?: string
  receiver?: string
  /** In a block at this height (its hash made from it); absent: in the mempool. */
  height?: number
}

/** A payment from PAYER to `receiver` (MERCHANT) with `memo` as its OP_RETURN, and change back to PAYER. */
export function paymentTransaction (shape: PaymentShape): ChainTransaction {
  return {
    txid: shape.txid,
    ...(shape.height === undefined ? {} : { height: shape.height, blockHash: shape.height.toString(16).padStart(64, 'b') }),
    inputs: [{ address: PAYER, satoshi: 5_000_000_000 }],
    outputs: [
      { n: 0, addresses: [shape.receiver ?? MERCHANT], satoshi: shape.amountSat, scriptHex: '76a914b3a9dbb433dbb00f2d73dbe79c4375402bfa60fe88ac' },
      ...(shape.memo === undefined ? [] : [{ n: 1, addresses: [''], satoshi: 0, scriptHex: memoScriptHex(shape.memo) }]),
      { n: 2, addresses: [PAYER], satoshi: 5_000_000_000 - shape.amountSat - 100_000, scriptHex: '76a914a745ef71503819d1de191e25b80e55920ba4110988ac' },
    ],
  }
}
