/**
 * What happened on the chain, as the node event source (packages/pocketnet-client/events/) reports
 * it: the node's WebSocket messages and catch-up answers normalised, so that consumers never see
 * the node's mixed units (amounts as decimal strings, times as strings) or its field spellings.
 *
 * Every event names the block it came from (`height`, `blockHash`): a consumer that keeps events
 * can drop the ones of a block a `reorg` event says is gone.
 */

/**
 * A block by its height and hash: where a reader of the chain stands, or resumes from. The one
 * type for it, here and in the service (the last block heard, the watcher's cursor, the block a
 * new ingest holder resumes from).
 */
export interface BlockPosition {
  height: number
  /** The block's hash, lowercase hex. */
  blockHash: string
}

/** A block was connected to the chain the source reports. */
export interface BlockEvent extends BlockPosition {
  kind: 'block'
  /** The block's time, seconds since the epoch. */
  time: number
}

/**
 * The chain the source reports changed below its tip: the blocks from `height` up, as last
 * reported, are no longer on it (their hashes changed). The new blocks follow as `block` events.
 */
export interface ReorgEvent {
  kind: 'reorg'
  /** The lowest height whose block changed. */
  height: number
  /** The hash that height had before. */
  oldBlockHash: string
  /** The hash it has now, when known. */
  newBlockHash?: string
}

/**
 * An output of a transaction in a block pays `address`. As the node reports it: one per distinct
 * output address, the first output to it. A sender's change output reports too: whether it is an
 * incoming payment is for the consumer to check from the inputs.
 */
export interface TransactionEvent {
  kind: 'transaction'
  address: string
  txid: string
  /** Index of the output. */
  nout: number
  /** Integer satoshi (1 PKOIN = 100,000,000). */
  amount: number
  height: number
  blockHash: string
  /** Seconds since the epoch. */
  time: number
  /** The social transaction type, when the transaction is one (its OP_RETURN names a known type). */
  type?: string
}

/**
 * A social event for `address` (the node's `mesType`: comment, upvoteShare, subscribe …), such
 * as a comment on one of its posts. `data` keeps the node's other fields (posttxid, commentid,
 * addrFrom …) with amounts in integer satoshi.
 */
export interface NotificationEvent {
  kind: 'notification'
  /** Who the event is for. */
  address: string
  /** The node's `mesType`. */
  type: string
  txid: string
  height: number
  blockHash: string
  /** Seconds since the epoch. */
  time: number
  data: Record<string, unknown>
}

export type ChainEvent = BlockEvent | ReorgEvent | TransactionEvent | NotificationEvent
