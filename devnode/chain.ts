/**
 * The emulator's chain: a block per height (hash, time), each with its transactions and the social
 * notifications it carries, a mempool of what the next block will hold, and a tip that can be
 * disconnected (a re-org), then replaced by a block with another hash or connected again.
 *
 * Blocks below the height the chain starts at hold nothing; their hashes are derived from the
 * chain's seed, so two emulators given the same chain (a node switch) agree on every block.
 * What the node derives from these blocks (WebSocket messages, catch-up answers) lives in
 * websocket.ts and methods/events.ts.
 */
import { createHash, randomBytes } from 'node:crypto'

/** One output: to an address, or an OP_RETURN carrying `memo` (hex) and no address. */
export interface ChainOutput {
  address?: string
  /** Satoshi. */
  amount: number
  memo?: string
  /** The output's script (hex) when it is neither P2PKH nor a one-push OP_RETURN's `memo`, e.g. an OP_RETURN of several pushes sent with sendrawtransaction. */
  script?: string
}

/** Where a transaction the node knows is: a block of the chain, the mempool, or a block a re-org disconnected. */
export type TransactionPlace = 'block' | 'mempool' | 'dropped'

/** An output with what it is part of. */
export interface ChainCoin {
  transaction: ChainTransaction
  vout: number
  output: ChainOutput
  /** The block holding it; undefined in the mempool. */
  block?: ChainBlock
}

export interface ChainInput {
  address: string
  /** Satoshi. */
  amount: number
  /** The output it spends; made up when left out. */
  txid?: string
  vout?: number
}

export interface ChainTransaction {
  txid: string
  /** Seconds since the epoch. */
  time: number
  /** The Pocketnet transaction type: 1 a plain payment, 200 a post, 204 a comment, 300 a score … */
  txType: number
  /** The social type the node names in `transaction` messages (`share`, `comment`, `upvoteShare` …), when the OP_RETURN is one. */
  socialType?: string
  inputs: ChainInput[]
  outputs: ChainOutput[]
}

/** The `mesType`s of the node's social events the emulator produces. */
export type SocialEventType =
  | 'comment' | 'commentEdit' | 'commentDelete'
  | 'upvoteShare' | 'cScore'
  | 'subscribe' | 'subscribePrivate' | 'unsubscribe'
  | 'contentBoost' | 'reshare' | 'postfromprivate'

/** A social event for `address`, as the node tells the address's socket. */
export interface ChainNotification {
  /** Who it is for. */
  address: string
  mesType: SocialEventType
  /** The transaction that caused it (for a comment, the comment's first version). */
  txid: string
  /** Seconds since the epoch. */
  time: number
  addrFrom: string
  nameFrom: string
  avatarFrom?: string
  /** The post concerned (comments, post scores, boosts, reposts). */
  posttxid?: string
  /** Comments: `post` (on the address's post) or `answer` (to the address's comment). */
  reason?: 'post' | 'answer'
  parentid?: string
  answerid?: string
  /** Comment scores: the comment scored. */
  commentid?: string
  /** Scores: 1 to 5 for posts, -1 or 1 for comments. */
  upvoteVal?: number
  /** A comment that paid the post's author: satoshi. */
  donation?: number
  /** Boosts: satoshi. */
  boostAmount?: number
}

export interface ChainBlock {
  height: number
  /** Lowercase hex, 64 characters. */
  hash: string
  /** Seconds since the epoch. */
  time: number
  transactions: readonly ChainTransaction[]
  notifications: readonly ChainNotification[]
}

export interface NewTransaction extends Partial<Omit<ChainTransaction, 'outputs'>> {
  outputs: ChainOutput[]
}

export type NewNotification = Omit<ChainNotification, 'txid' | 'time' | 'nameFrom'> & Partial<Pick<ChainNotification, 'txid' | 'time' | 'nameFrom'>>

export interface ChainListener {
  connected? (block: ChainBlock): void
  disconnected? (block: ChainBlock): void
}

export interface ChainHistoryOptions {
  /** The height of the tip at the start. */
  height: number
  /** Seconds since the epoch of the tip at the start. Default: now. */
  time?: number
  /** Derives the hashes of the blocks below the start. Default: random. */
  seed?: string
}

/** Seconds between blocks below the start. */
const BLOCK_SPACING_S = 60

function coinOf (transaction: ChainTransaction, vout: number, block?: ChainBlock): ChainCoin | undefined {
  const output = transaction.outputs[vout]
  if (output === undefined) return undefined
  return { transaction, vout, output, ...(block === undefined ? {} : { block }) }
}

function hex32 (): string {
  return randomBytes(32).toString('hex')
}

export class ChainHistory {
  /** The block the chain started at and every block connected since, in height order. */
  readonly #blocks: ChainBlock[]
  readonly #seed: string
  readonly #listeners = new Set<ChainListener>()
  #pendingTransactions: ChainTransaction[] = []
  #pendingNotifications: ChainNotification[] = []
  /** Blocks a re-org disconnected, the latest last: what they held is in no block and no mempool. */
  #disconnected: ChainBlock[] = []

  constructor (options: ChainHistoryOptions) {
    if (!Number.isInteger(options.height) || options.height < 1) throw new RangeError(`height must be a whole number from 1, not ${options.height}`)
    this.#seed = options.seed ?? hex32()
    const time = options.time ?? Math.floor(Date.now() / 1000)
    this.#blocks = [{ height: options.height, hash: this.#derivedHash(options.height), time, transactions: [], notifications: [] }]
  }

  get tip (): ChainBlock {
    return this.#blocks.at(-1) as ChainBlock
  }

  get height (): number {
    return this.tip.height
  }

  /** The block at `height` on the chain now, or undefined above the tip or below 1. */
  block (height: number): ChainBlock | undefined {
    const base = this.#blocks[0] as ChainBlock
    if (!Number.isInteger(height) || height < 1 || height > this.height) return undefined
    if (height >= base.height) return this.#blocks[height - base.height]
    return { height, hash: this.#derivedHash(height), time: base.time - (base.height - height) * BLOCK_SPACING_S, transactions: [], notifications: [] }
  }

  /** The block whose hash is `hash`, when it is on the chain now. */
  blockByHash (hash: string): ChainBlock | undefined {
    const found = this.#blocks.find(block => block.hash === hash)
    if (found !== undefined) return found
    // Below the start, a hash names its height only through the seed: look a day back at most.
    const base = this.#blocks[0] as ChainBlock
    for (let height = base.height - 1; height >= Math.max(1, base.height - 1440); height--) {
      if (this.#derivedHash(height) === hash) return this.block(height)
    }
    return undefined
  }

  /** Transactions waiting for the next block (the mempool), in the order they came. */
  get pendingTransactions (): readonly ChainTransaction[] {
    return this.#pendingTransactions
  }

  /**
   * A transaction by its txid, with the block holding it, or undefined. Without a block: in the
   * mempool, or left out of the chain by a re-org (the node answers both alike).
   */
  findTransaction (txid: string): { transaction: ChainTransaction, block?: ChainBlock } | undefined {
    for (const block of this.#blocks) {
      const transaction = block.transactions.find(each => each.txid === txid)
      if (transaction !== undefined) return { transaction, block }
    }
    const pending = this.#pendingTransactions.find(each => each.txid === txid) ??
      this.#disconnected.flatMap(block => block.transactions).find(each => each.txid === txid)
    return pending === undefined ? undefined : { transaction: pending }
  }

  /** Where the transaction `txid` is, or undefined when the node does not know it. */
  placeOf (txid: string): TransactionPlace | undefined {
    if (this.#blocks.some(block => block.transactions.some(each => each.txid === txid))) return 'block'
    if (this.#pendingTransactions.some(each => each.txid === txid)) return 'mempool'
    if (this.#disconnected.some(block => block.transactions.some(each => each.txid === txid))) return 'dropped'
    return undefined
  }

  /** Output `vout` of `txid` when the transaction is in a block of the chain or in the mempool (a dropped one's outputs exist nowhere). */
  coin (txid: string, vout: number): ChainCoin | undefined {
    for (const block of this.#blocks) {
      const transaction = block.transactions.find(each => each.txid === txid)
      if (transaction !== undefined) return coinOf(transaction, vout, block)
    }
    const pending = this.#pendingTransactions.find(each => each.txid === txid)
    return pending === undefined ? undefined : coinOf(pending, vout)
  }

  /** The transaction in `places` spending output `vout` of `txid`, if any. */
  spenderOf (txid: string, vout: number, places: readonly TransactionPlace[]): ChainTransaction | undefined {
    const spends = (transaction: ChainTransaction): boolean => transaction.inputs.some(input => input.txid === txid && (input.vout ?? 0) === vout)
    const lists: ChainTransaction[][] = []
    if (places.includes('block')) lists.push(...this.#blocks.map(block => [...block.transactions]))
    if (places.includes('mempool')) lists.push(this.#pendingTransactions)
    if (places.includes('dropped')) lists.push(...this.#disconnected.map(block => [...block.transactions]))
    for (const list of lists) {
      const found = list.find(spends)
      if (found !== undefined) return found
    }
    return undefined
  }

  /**
   * The outputs to `addresses` in blocks of the chain that no transaction the node knows spends (in
   * a block, in the mempool, or dropped by a re-org: its index keeps every spend it has seen), by
   * height, then in block order.
   */
  unspentOutputs (addresses: ReadonlySet<string>): ChainCoin[] {
    const spent = new Set<string>()
    for (const transaction of [...this.#blocks, ...this.#disconnected].flatMap(block => block.transactions).concat(this.#pendingTransactions)) {
      for (const input of transaction.inputs) if (input.txid !== undefined) spent.add(`${input.txid}:${input.vout ?? 0}`)
    }
    const coins: ChainCoin[] = []
    for (const block of this.#blocks) {
      for (const transaction of block.transactions) {
        transaction.outputs.forEach((output, vout) => {
          if (output.address === undefined || !addresses.has(output.address) || spent.has(`${transaction.txid}:${vout}`)) return
          coins.push({ transaction, vout, output, block })
        })
      }
    }
    return coins
  }

  /** Puts a transaction already checked into the mempool, as it is (a dropped one sent again keeps its txid and time). */
  acceptToMempool (transaction: ChainTransaction): void {
    this.#pendingTransactions.push(transaction)
  }

  /** Puts a transaction into the next block; what is left out is made up (txid, time, a plain payment). */
  addTransaction (spec: NewTransaction): ChainTransaction {
    const transaction: ChainTransaction = {
      txid: spec.txid ?? hex32(),
      time: spec.time ?? Math.floor(Date.now() / 1000),
      txType: spec.txType ?? 1,
      ...(spec.socialType === undefined ? {} : { socialType: spec.socialType }),
      inputs: spec.inputs ?? [],
      outputs: spec.outputs,
    }
    this.#pendingTransactions.push(transaction)
    return transaction
  }

  /** Puts a social event into the next block. */
  addNotification (spec: NewNotification): ChainNotification {
    const notification: ChainNotification = {
      ...spec,
      txid: spec.txid ?? hex32(),
      time: spec.time ?? Math.floor(Date.now() / 1000),
      nameFrom: spec.nameFrom ?? '',
    }
    this.#pendingNotifications.push(notification)
    return notification
  }

  /** Connects a block holding everything pending, with a fresh hash. */
  mine (): ChainBlock {
    const previous = this.tip
    const block: ChainBlock = {
      height: previous.height + 1,
      hash: hex32(),
      time: Math.max(previous.time + 1, Math.floor(Date.now() / 1000)),
      transactions: this.#pendingTransactions,
      notifications: this.#pendingNotifications,
    }
    this.#pendingTransactions = []
    this.#pendingNotifications = []
    this.#blocks.push(block)
    for (const listener of this.#listeners) listener.connected?.(block)
    return block
  }

  /**
   * Disconnects the tip, as a re-org (`invalidateblock`) does on a 0.22.7 node: the height goes
   * down by one, and what the block held is in no block and not in the mempool either: the node
   * still answers its transactions, without a block, but never mines them again, and only the
   * block itself coming back (reconnectTip), or a transaction sent again (acceptToMempool), brings
   * them back. The block the chain started at
   * cannot be disconnected.
   */
  disconnectTip (): ChainBlock {
    if (this.#blocks.length === 1) throw new Error('The block the chain started at cannot be disconnected')
    const block = this.#blocks.pop() as ChainBlock
    this.#disconnected.push(block)
    for (const listener of this.#listeners) listener.disconnected?.(block)
    return block
  }

  /**
   * Connects again the block disconnected last, with its hash and what it held (`reconsiderblock`):
   * only while the tip is still its parent, i.e. before another block took its height.
   */
  reconnectTip (): ChainBlock {
    const block = this.#disconnected.at(-1)
    if (block === undefined) throw new Error('No disconnected block to connect again')
    if (block.height !== this.tip.height + 1) throw new Error(`The disconnected block ${block.height} no longer follows the tip (${this.tip.height}): another block took its height`)
    this.#disconnected.pop()
    // As when any block connects: the mempool lets go of what the block holds, and of what conflicts with it.
    const spentByBlock = new Set(block.transactions.flatMap(each => each.inputs.filter(input => input.txid !== undefined).map(input => `${input.txid}:${input.vout ?? 0}`)))
    this.#pendingTransactions = this.#pendingTransactions.filter(pending =>
      !block.transactions.some(each => each.txid === pending.txid) &&
      !pending.inputs.some(input => input.txid !== undefined && spentByBlock.has(`${input.txid}:${input.vout ?? 0}`)))
    this.#blocks.push(block)
    for (const listener of this.#listeners) listener.connected?.(block)
    return block
  }

  /** Calls `listener` on every block connected or disconnected from now on; returns the way to stop. */
  listen (listener: ChainListener): () => void {
    this.#listeners.add(listener)
    return () => { this.#listeners.delete(listener) }
  }

  #derivedHash (height: number): string {
    return createHash('sha256').update(`${this.#seed}:${height}`).digest('hex')
  }
}
