/**
 * `startDevnode()`: the repository's Pocketnet node emulator (devnode/server.ts) on free loopback
 * ports, with what a mini-app's test does to a chain (mine, pay, re-org) as plain calls into the
 * same process rather than over the emulator's HTTP controls.
 */
import { parsePaymentOrder, paymentTransaction } from '../../../devnode/controls.js'
import { createEmulator, DEVNODE_WALLET, PAYMENT_FEE_SAT, type ChainBlock, type Dataset, type Emulator } from '../../../devnode/server.js'

export interface DevnodeOptions {
  /** Default 127.0.0.1. */
  host?: string
  /** The RPC port. Default 0: a free port. */
  port?: number
  /** The node's WebSocket port (getnodeinfo's `ports.wss`). Default 0: a free port. */
  wsPort?: number
  /** The tip's height at the start. Default 3100000, the height the dataset was made for. */
  height?: number
  /** Reported by getnodeinfo. Default 0.22.7. */
  version?: string
  /** Added before every RPC answer. Default 0. */
  latencyMs?: number
  /** Mines a block every N ms as well. Default: only when `mine()` is called. */
  blockIntervalMs?: number
  /**
   * The emulator's controls over HTTP (`POST <url>/devnode/pay`, `/mine`, `/disconnect`,
   * `/reconnect`), for an app under test that runs in another process, as `npx bastyon-devnode`
   * has them; loopback clients that are not browsers only (`{ remote: true }`: any client).
   * Default true.
   */
  controls?: boolean | { remote?: boolean }
}

export interface DevnodePayment {
  /** The receiver: a mainnet address (`P…`). */
  to: string
  /** Satoshi (1 PKOIN = 100000000) that reach the receiver (with `feemode: 'include'`, the fee comes out of it). */
  amountSat: number
  /** The payment's memo, 1 to 80 bytes of UTF-8, as one OP_RETURN output: how the service matches an invoice. */
  memo?: string
  /** The payer. Default: the devnode's own wallet (`devnode.wallet`). */
  from?: string
  /** `exclude` (default): the fee on top of the amount; `include`: out of it. */
  feemode?: 'exclude' | 'include'
}

export interface MinedBlock {
  height: number
  hash: string
  /** The transactions the block holds: those paid since the block before. */
  txids: string[]
}

export interface TransactionStatus {
  txid: string
  /** 0 while it waits for a block (or after a re-org left it out), else blocks from its own to the tip, both counted. */
  confirmations: number
  /** The block holding it, while it is in one. */
  height?: number
  blockHash?: string
}

export interface Devnode {
  /** The node's RPC base URL, e.g. http://127.0.0.1:40123: what POCKETNET_NODES takes. */
  readonly url: string
  /** The node's WebSocket, e.g. ws://127.0.0.1:40124/ws (getnodeinfo reports its port). */
  readonly webSocketUrl: string
  /** The tip's height. */
  readonly height: number
  /** The address that pays when a payment names no `from`. */
  readonly wallet: string
  /** What each payment pays the miner, in satoshi. */
  readonly feeSat: number
  /** The accounts, posts and comments the node serves, the same on every run: `dataset.users[0].address` is a live account with posts. */
  readonly dataset: Dataset
  /** Mines `blocks` blocks (default 1), the first holding every payment made since the last one. */
  mine (blocks?: number): MinedBlock[]
  /** Pays as the host's wallet does, into the next block; the node then answers `getrawtransaction` for the txid. */
  pay (payment: DevnodePayment): { txid: string }
  /** Where a transaction stands, or undefined for a txid the node never saw. */
  transaction (txid: string): TransactionStatus | undefined
  /**
   * Disconnects the tip (a re-org): the height goes down by one and what the block held is left
   * out of the chain (the node answers it without a block, and never mines it again unless
   * `reconnectBlock()` brings the block back). The next `mine()` puts a block with another hash there.
   */
  disconnectBlock (): MinedBlock
  /** Connects the block disconnected last again, while nothing was mined in its place. */
  reconnectBlock (): MinedBlock
  /** The emulator underneath, for what this object does not cover: injected faults, the calls it got, its WebSocket's controls. */
  readonly emulator: Emulator
  /** Stops the node (RPC and WebSocket). Calling it again does nothing more. */
  close (): Promise<void>
}

function minedBlock (block: ChainBlock): MinedBlock {
  return { height: block.height, hash: block.hash, txids: block.transactions.map(transaction => transaction.txid) }
}

export async function startDevnode (options: DevnodeOptions = {}): Promise<Devnode> {
  const emulator = await createEmulator({
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    wsPort: options.wsPort ?? 0,
    controls: options.controls ?? true,
    ...(options.height === undefined ? {} : { height: options.height }),
    ...(options.version === undefined ? {} : { version: options.version }),
    ...(options.latencyMs === undefined ? {} : { latencyMs: options.latencyMs }),
    ...(options.blockIntervalMs === undefined ? {} : { blockIntervalMs: options.blockIntervalMs }),
  })
  const chain = emulator.chain
  let closing: Promise<void> | undefined

  return {
    url: emulator.url,
    webSocketUrl: emulator.webSocket.url,
    get height () {
      return emulator.height
    },
    wallet: DEVNODE_WALLET,
    feeSat: PAYMENT_FEE_SAT,
    dataset: emulator.dataset,
    mine (blocks = 1) {
      if (!Number.isSafeInteger(blocks) || blocks < 0) throw new RangeError(`mine() takes a whole number of blocks from 0, not ${blocks}`)
      return Array.from({ length: blocks }, () => minedBlock(chain.mine()))
    },
    pay (payment) {
      // Checked as the HTTP control checks it, so that a payment refused here is refused there too.
      return { txid: chain.addTransaction(paymentTransaction(parsePaymentOrder({ ...payment }))).txid }
    },
    transaction (txid) {
      const found = chain.findTransaction(txid)
      if (found === undefined) return undefined
      const { block } = found
      if (block === undefined) return { txid, confirmations: 0 }
      return { txid, confirmations: chain.height - block.height + 1, height: block.height, blockHash: block.hash }
    },
    disconnectBlock: () => minedBlock(emulator.disconnectBlock()),
    reconnectBlock: () => minedBlock(emulator.reconnectBlock()),
    emulator,
    close () {
      closing ??= emulator.close()
      return closing
    },
  }
}
