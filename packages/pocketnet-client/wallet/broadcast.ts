/**
 * What a node's `sendrawtransaction` answer means for a transaction the app signed. A node takes
 * transactions only on its write path (`POST /post/`, params `[hex, {}]`: the empty object is the
 * Pocketnet payload a plain transfer does not have), and answers, as a 0.22.7 node was seen to:
 * - the txid, for a new transaction and again for one already in its mempool (same bytes, same answer);
 * - -27 `transaction already in block chain` once it is confirmed (while one of its outputs is unspent);
 * - -26 `txn-mempool-conflict` when another mempool transaction spends one of its inputs;
 * - -26 `bad-txns-inputs-missingorspent` when the chain has spent an input (a double spend
 *   confirmed, or this very transaction confirmed and all its outputs spent since: ask
 *   getrawtransaction for its txid to tell which);
 * - -32602 `Invalid address` when the node does not know the first input at all;
 * - -26 with the policy's reason (`min relay fee not met`, `dust`, `scriptpubkey`,
 *   `multi-op-return`, `mandatory-script-verify-flag-failed …`), -22 `TX decode failed`, 261 for
 *   an input that is not mature yet, and a positive Pocketnet consensus code: refused as it is.
 */
import { CodedError } from '../coded-error.js'
import type { RpcClientError } from '../errors.js'

export const BROADCAST_ERROR_CODES = {
  BROADCAST_ERR_CONFLICT: 'Another transaction in the node\'s mempool spends one of the inputs.',
  BROADCAST_ERR_INPUTS_SPENT: 'An input is spent in the chain or unknown to the node: a double spend, or this transaction confirmed and its outputs spent since (getrawtransaction of the txid tells).',
  BROADCAST_ERR_REJECTED: 'The node refused the transaction itself (fee, dust, script, size, immature input, malformed bytes): the same bytes will be refused again.',
  BROADCAST_ERR_UNAVAILABLE: 'No node gave an answer about the transaction (down, timed out, overloaded): whether it was taken is unknown; send the same bytes again.',
} as const

export type BroadcastErrorCode = keyof typeof BROADCAST_ERROR_CODES

/** What became of a broadcast the node answered without a txid; the node's own text is `rpcMessage`, for logs. */
export class BroadcastError extends CodedError<BroadcastErrorCode> {
  override name = 'BroadcastError'
  readonly txid: string
  readonly rpcCode: number | undefined
  readonly rpcMessage: string | undefined

  constructor (code: BroadcastErrorCode, txid: string, details: { rpcCode?: number, rpcMessage?: string, cause?: unknown } = {}) {
    const answered = details.rpcCode === undefined ? '' : ` (RPC error ${details.rpcCode})`
    super(code, `transaction ${txid} was not taken: ${BROADCAST_ERROR_CODES[code]}${answered}`, details.cause === undefined ? undefined : { cause: details.cause })
    this.txid = txid
    this.rpcCode = details.rpcCode
    this.rpcMessage = details.rpcMessage
  }
}

export interface BroadcastResult {
  txid: string
  /** True when the node already had it in a block (a second broadcast of a confirmed transaction). */
  alreadyConfirmed: boolean
}

/** The kind of a node's error answer, or undefined when it says nothing final about the transaction (ask another node). */
export function broadcastAnswerKind (rpcCode: number, rpcMessage: string): 'confirmed' | BroadcastErrorCode | undefined {
  if (rpcCode === -27) return 'confirmed'
  if (rpcCode === -26 && /txn-mempool-conflict/.test(rpcMessage)) return 'BROADCAST_ERR_CONFLICT'
  if (rpcCode === -26 && /missingorspent/.test(rpcMessage)) return 'BROADCAST_ERR_INPUTS_SPENT'
  if (rpcCode === -32602 && /^Invalid address/.test(rpcMessage)) return 'BROADCAST_ERR_INPUTS_SPENT'
  if (rpcCode === -26 || rpcCode === -22 || rpcCode === 261 || rpcCode > 0) return 'BROADCAST_ERR_REJECTED'
  return undefined
}

/** A failure of the call itself (no node answered about the transaction) as a BroadcastError. */
export function unavailable (txid: string, err: RpcClientError): BroadcastError {
  return new BroadcastError('BROADCAST_ERR_UNAVAILABLE', txid, { cause: err })
}
