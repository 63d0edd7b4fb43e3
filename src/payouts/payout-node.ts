/**
 * The payouts' questions to the Pocketnet nodes (wallet-node.ts), over the shared client: the
 * wallet's outputs (`txunspent`), the fee rate (`estimatesmartfee`, at least the floor), the
 * broadcast (`sendrawtransaction` on a node's write path), where a transaction is
 * (`getrawtransaction`, asked fresh: a re-org moves it), the tip, and the cross-check.
 *
 * A node can lie. One node's word never confirms a payout (up to `nodesRequired` nodes are asked
 * by name, as invoices are: payments/cross-check.ts) and never fails one (`knownAnywhere` asks
 * every usable node before a payout is given up): a node that invents a block only delays a
 * confirmation, and a node that hides a transaction cannot make the service pay twice.
 */
import { BroadcastError, coinsOfUnspent, feeRateOf, isUnknownTransactionError, readChainTransaction, type ChainTransaction, type Coin, type PocketNetProxyApi } from 'pocketnet-client'
import type { BroadcastOutcome, WalletNode, Whereabouts } from './wallet-node.js'

/** Blocks the fee estimate targets: a payout in the next few blocks, not the very next. */
const FEE_TARGET_BLOCKS = 6

export interface PayoutNodeOptions {
  feeFloorSatPerKb: number
  /** Nodes that must show a payout's transaction in its block, deep enough, before it is confirmed (at most the nodes configured). */
  nodesRequired: number
  log: { debug (fields: object, message: string): void, warn (fields: object, message: string): void }
}

export class PayoutNode implements WalletNode {
  readonly #api: () => Promise<PocketNetProxyApi>
  readonly #options: PayoutNodeOptions

  constructor (api: () => Promise<PocketNetProxyApi>, options: PayoutNodeOptions) {
    this.#api = api
    this.#options = options
  }

  async coins (address: string): Promise<Coin[]> {
    const api = await this.#api()
    return coinsOfUnspent(await api.rpc.txunspent({ addresses: [address] }, { fresh: true }))
  }

  async feeRate (): Promise<number> {
    const api = await this.#api()
    return feeRateOf(await api.rpc.estimatesmartfee({ conf_target: FEE_TARGET_BLOCKS }, { fresh: true }), this.#options.feeFloorSatPerKb)
  }

  async broadcast (hex: string): Promise<BroadcastOutcome> {
    const api = await this.#api()
    try {
      const result = await api.broadcastTransaction(hex)
      return { outcome: result.alreadyConfirmed ? 'known' : 'accepted' }
    } catch (err) {
      if (!(err instanceof BroadcastError) || err.code === 'BROADCAST_ERR_UNAVAILABLE') throw err
      this.#options.log.debug({ txid: err.txid, code: err.code, rpcCode: err.rpcCode, rpcMessage: err.rpcMessage }, 'Payouts: a node refused a broadcast')
      return { outcome: err.code === 'BROADCAST_ERR_REJECTED' ? 'rejected' : 'conflict', code: err.code }
    }
  }

  async whereabouts (txid: string): Promise<Whereabouts> {
    return whereaboutsOf(await this.#read(await this.#api(), txid))
  }

  async tipHeight (): Promise<number> {
    const api = await this.#api()
    return (await api.rpc.getnodeinfo({ fresh: true })).lastblock.height
  }

  async backs (txid: string, block: { height: number, blockHash: string }, confirmations: number): Promise<boolean> {
    const api = await this.#api()
    const nodes = api.nodes()
    const required = Math.min(this.#options.nodesRequired, nodes.length)
    // One node configured: the answer that found the block is the only word there is.
    if (required <= 1) return true
    let backing = 0
    for (const node of nodes) {
      if (backing >= required) break
      if (!node.usable) continue
      try {
        const where = whereaboutsOf(await this.#read(api, txid, node.name))
        if (where === null || where.height === undefined || where.blockHash !== block.blockHash || where.height !== block.height) {
          this.#options.log.warn({ node: node.name, txid }, 'Payouts: a node does not show the payout\'s transaction in the block another node showed; it is not confirmed while it does not')
          return false
        }
        const tip = (await api.rpc.getnodeinfo({ node: node.name })).lastblock.height
        if (tip - block.height + 1 >= confirmations) backing++
      } catch (err) {
        this.#options.log.debug({ node: node.name, txid, err: { code: (err as { code?: unknown } | null)?.code } }, 'Payouts: a node could not be asked to back a payout; another is asked')
      }
    }
    return backing >= required
  }

  /** Whether any usable node has `txid`, in a block or its mempool; asked before a payout is failed. Throws when no node could answer. */
  async knownAnywhere (txid: string): Promise<boolean> {
    const api = await this.#api()
    let answered = 0
    for (const node of api.nodes()) {
      if (!node.usable) continue
      try {
        if (await this.#read(api, txid, node.name) !== null) return true
        answered++
      } catch {
        // It said nothing: neither for nor against.
      }
    }
    if (answered === 0) throw new Error('no node could say whether it has the transaction')
    return false
  }

  async payerOf (txid: string): Promise<string | undefined> {
    const transaction = await this.#read(await this.#api(), txid)
    return transaction?.inputs[0]?.address
  }

  /** The node's answer for `txid`, null when it does not know it. */
  async #read (api: PocketNetProxyApi, txid: string, node?: string): Promise<ChainTransaction | null> {
    try {
      return readChainTransaction(await api.rpc.getrawtransaction({ txid }, node === undefined ? { fresh: true } : { node })) ?? null
    } catch (err) {
      if (isUnknownTransactionError(err)) return null
      throw err
    }
  }
}

function whereaboutsOf (transaction: ChainTransaction | null): Whereabouts {
  if (transaction === null) return null
  return transaction.height === undefined || transaction.blockHash === undefined ? { height: undefined } : { height: transaction.height, blockHash: transaction.blockHash }
}
