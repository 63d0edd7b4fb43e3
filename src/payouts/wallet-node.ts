/**
 * What the payouts ask of the Pocketnet nodes, in the payouts' words: the wallet's outputs, a fee
 * rate, a broadcast, where a transaction is, the tip, and whether enough nodes agree that a
 * transaction is in a block. payout-node.ts answers it over the shared client; nothing here knows
 * RPC names.
 */
import type { WalletCoin } from './payout-store.js'

/**
 * What a node said of a broadcast: it took it (`accepted`), it had it already, in its mempool or a
 * block (`known`: the same bytes sent again, which is a success), an output it spends is spent
 * by another transaction or unknown (`conflict`), or it refused it for another reason
 * (`rejected`, with the node's code for logs). A node that could not be asked throws.
 */
export type BroadcastOutcome =
  | { outcome: 'accepted' | 'known' }
  | { outcome: 'conflict' | 'rejected', code: string }

/** Where a node has a transaction: in a block, in its mempool (no block), or nowhere (null). */
export type Whereabouts = { height: number, blockHash: string } | { height: undefined } | null

export interface WalletNode {
  /** The address's confirmed outputs not spent in the node's mempool. */
  coins (address: string): Promise<WalletCoin[]>
  /** Satoshi per 1000 bytes for a transaction in the next few blocks, at least the floor. */
  feeRate (): Promise<number>
  broadcast (hex: string): Promise<BroadcastOutcome>
  whereabouts (txid: string): Promise<Whereabouts>
  tipHeight (): Promise<number>
  /** Whether `nodesRequired` nodes (all, when fewer) show `txid` in this block with `confirmations` by their own tips. */
  backs (txid: string, block: { height: number, blockHash: string }, confirmations: number): Promise<boolean>
  /** Whether any usable node has `txid` (block or mempool): asked before a payout is failed. Throws when none could answer. */
  knownAnywhere (txid: string): Promise<boolean>
  /** The address the first input of `txid` spent from: the payer of a payment; undefined when it has none or the node does not know it. */
  payerOf (txid: string): Promise<string | undefined>
}
