/**
 * What a transaction proves about one invoice, decided from chain data alone: how much it pays
 * the receiver, whether its memo is the invoice's, and how deep its block is. Pure: no I/O, no
 * clock; the caller brings the transaction (`readChainTransaction`) and the chain's tip height.
 * The rules, and why each one is there, are in docs/payments.md, "What proves a payment".
 */
import type { ChainTransaction } from './chain-transaction.js'
import { PaymentError } from './errors.js'
import { MAX_MEMO_BYTES, memoByteLength, memoOfScript } from './op-return.js'
import { isSatoshi } from './satoshi.js'

/** What an invoice asks for. */
export interface PaymentExpectation {
  /** The address that must be paid. */
  receiver: string
  /** The price in satoshi, a positive safe integer. */
  amountSat: number
  /** The text the transaction's OP_RETURN output must carry, exactly. */
  memo: string
}

/**
 * How the amount compares: `unpaid` (nothing reached the receiver), `underpaid`, `exact`,
 * `overpaid`.
 */
export type PaymentOutcome = 'unpaid' | 'underpaid' | 'exact' | 'overpaid'

export interface PaymentProof {
  txid: string
  /** What the receiver gained: its outputs less what it spent in the same transaction, never below 0. */
  receivedSat: number
  expectedSat: number
  outcome: PaymentOutcome
  /** How much is missing when `underpaid` or `unpaid`, else 0. */
  shortSat: number
  /** How much more than asked when `overpaid`, else 0. */
  excessSat: number
  /** The transaction's memo, if it has exactly one readable one. */
  memo: string | undefined
  memoMatches: boolean
  /** The receiver spent coins in this transaction: its own change is not a payment to it. */
  fromReceiver: boolean
  /** In a block (not in the mempool, not put back there by a re-org). */
  inBlock: boolean
  height: number | undefined
  blockHash: string | undefined
  /** Blocks from its block to the tip, both counted; 0 when not in a block. */
  confirmations: number
  /**
   * The transaction pays this invoice: the memo matches and the receiver got at least the amount.
   * Whether it settles is for the caller to say, with the confirmations it requires.
   */
  pays: boolean
}

function checkExpectation (expectation: PaymentExpectation): void {
  const { receiver, amountSat, memo } = expectation
  if (typeof receiver !== 'string' || receiver === '') throw new PaymentError('PAYMENT_ERR_EXPECTATION', 'the receiver is not an address')
  if (!isSatoshi(amountSat) || amountSat === 0) throw new PaymentError('PAYMENT_ERR_EXPECTATION', `the amount is not a positive whole number of satoshi: ${String(amountSat)}`)
  if (typeof memo !== 'string' || memo === '' || memoByteLength(memo) > MAX_MEMO_BYTES) {
    throw new PaymentError('PAYMENT_ERR_EXPECTATION', `the memo is not 1 to ${MAX_MEMO_BYTES} bytes of text`)
  }
}

/** The memo of the transaction's one OP_RETURN output; none when it has none or several. */
function memoOf (transaction: ChainTransaction): string | undefined {
  const opReturns = transaction.outputs.filter(output => output.scriptHex.startsWith('6a'))
  return opReturns.length === 1 ? memoOfScript((opReturns[0] as { scriptHex: string }).scriptHex) : undefined
}

/**
 * What `transaction` proves about the invoice `expectation` describes, with the chain's tip at
 * `tipHeight`.
 *
 * - Paid: the sum of the outputs whose only address is the receiver (as the host's checkout
 *   counts them), less the inputs the receiver spent, so that a transaction the receiver sent
 *   itself, whose change comes back to it, pays it nothing.
 * - Memo: the one OP_RETURN output's single push, as UTF-8, equal to the expected memo.
 * - Confirmations: `tipHeight − height + 1`, at least 1 once in a block (a tip read before the
 *   block arrived is older, not a reason to doubt the block).
 * @throws PaymentError `PAYMENT_ERR_EXPECTATION` for an expectation without a receiver, a
 *   positive amount or a memo, or a tip that is not a block height.
 * @example proveInvoicePayment(readChainTransaction(answer), { receiver, amountSat: 150_000_000, memo: 'inv_…' }, tip)
 */
export function proveInvoicePayment (transaction: ChainTransaction, expectation: PaymentExpectation, tipHeight: number): PaymentProof {
  checkExpectation(expectation)
  if (!isSatoshi(tipHeight)) throw new PaymentError('PAYMENT_ERR_EXPECTATION', `the tip height is not a block height: ${String(tipHeight)}`)
  const { receiver, amountSat } = expectation
  let toReceiver = 0
  for (const output of transaction.outputs) {
    if (output.addresses.length === 1 && output.addresses[0] === receiver) toReceiver += output.satoshi
  }
  let fromReceiver = 0
  for (const input of transaction.inputs) {
    if (input.address === receiver) fromReceiver += input.satoshi
  }
  const receivedSat = Math.max(0, toReceiver - fromReceiver)
  const outcome: PaymentOutcome = receivedSat === 0 ? 'unpaid' : receivedSat < amountSat ? 'underpaid' : receivedSat === amountSat ? 'exact' : 'overpaid'
  const memo = memoOf(transaction)
  const memoMatches = memo === expectation.memo
  const inBlock = transaction.height !== undefined
  const confirmations = transaction.height === undefined ? 0 : Math.max(1, tipHeight - transaction.height + 1)
  return {
    txid: transaction.txid,
    receivedSat,
    expectedSat: amountSat,
    outcome,
    shortSat: Math.max(0, amountSat - receivedSat),
    excessSat: Math.max(0, receivedSat - amountSat),
    memo,
    memoMatches,
    fromReceiver: fromReceiver > 0,
    inBlock,
    height: transaction.height,
    blockHash: transaction.blockHash,
    confirmations,
    pays: memoMatches && receivedSat >= amountSat,
  }
}
