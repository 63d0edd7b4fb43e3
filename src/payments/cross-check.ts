/**
 * A payment is confirmed on more than one node's word (docs/payments.md, "Trust: how many nodes
 * confirm"). Whichever node the pool picked answered first; before that answer may confirm an
 * invoice, other nodes are asked by name, one at a time in the order of the node list, until
 * enough of them show the same transaction in the same block, paying as much, as deep as the
 * invoice requires by their own tip. One node that contradicts it (no such transaction, another
 * block or none, another memo, less paid) stops the confirmation: a node that invents a payment
 * is found out by the others, and one that denies a real payment can delay it, not fake it. A node
 * that fails to answer, or is behind, neither backs the answer nor stops it.
 */
import { isUnknownTransactionError, proveInvoicePayment, readChainTransaction, type ChainTransaction, type PaymentProof, type PocketNetProxyApi } from 'pocketnet-client'

/** What the invoice expects of its payment, and how deep the payment must be. */
export interface ConfirmationTerms {
  receiver: string
  amountSat: number
  memo: string
  confirmationsRequired: number
}

/** Why a node's answer contradicts the first one. Our codes, logged with the node's name: never the node's text. */
export type Contradiction = 'UNKNOWN_TRANSACTION' | 'ANOTHER_TRANSACTION' | 'NOT_IN_BLOCK' | 'ANOTHER_BLOCK' | 'MEMO_MISMATCH' | 'PAID_LESS'

/**
 * What one node's answer says of the first: `agrees` (the same payment, as deep as required),
 * `shallow` (the same payment in the same block, which its tip does not yet put deep enough: a
 * node a block behind), or a contradiction.
 */
export type Verdict = 'agrees' | 'shallow' | Contradiction

/**
 * One node's answer against the first one's proof (made once, by the caller), for the invoice's
 * terms; `tipHeight` is that node's own tip. Pure.
 */
export function judgeAnswer (first: PaymentProof, answer: ChainTransaction | null, tipHeight: number, terms: ConfirmationTerms): Verdict {
  if (answer === null) return 'UNKNOWN_TRANSACTION'
  if (answer.txid !== first.txid) return 'ANOTHER_TRANSACTION'
  if (answer.blockHash === undefined) return 'NOT_IN_BLOCK'
  if (answer.blockHash !== first.blockHash || answer.height !== first.height) return 'ANOTHER_BLOCK'
  const expectation = { receiver: terms.receiver, amountSat: terms.amountSat, memo: terms.memo }
  const proof = proveInvoicePayment(answer, expectation, tipHeight)
  if (!proof.memoMatches) return 'MEMO_MISMATCH'
  // Less than the first answer says is less than what would be recorded: the same txid pays the same on every honest node.
  if (proof.receivedSat < first.receivedSat) return 'PAID_LESS'
  return proof.confirmations >= terms.confirmationsRequired ? 'agrees' : 'shallow'
}

export interface CrossCheckLog {
  warn (fields: object, message: string): void
  debug (fields: object, message: string): void
}

export interface CrossCheckOptions {
  /** How many nodes must back an answer, asked by name. At least 2: with 1, the first answer decides and nothing is cross-checked. */
  nodesRequired: number
  log: CrossCheckLog
}

/** What a named node said of a txid: its answer (null: it does not know it) and its tip. */
interface NodeRead {
  transaction: ChainTransaction | null
  tipHeight: number
}

export class PaymentCrossCheck {
  readonly nodesRequired: number
  readonly #log: CrossCheckLog
  #disagreements = 0

  constructor (options: CrossCheckOptions) {
    if (!Number.isSafeInteger(options.nodesRequired) || options.nodesRequired < 2) throw new TypeError('option nodesRequired must be a whole number from 2')
    this.nodesRequired = options.nodesRequired
    this.#log = options.log
  }

  /** Answers of a node that contradicted another's payment, since the start (`payments_confirmation_disagreements_total`). */
  get disagreements (): number {
    return this.#disagreements
  }

  /**
   * Whether {@link nodesRequired} usable nodes back `first`, the proof of an answer that would
   * confirm the invoice: each shows it in the same block, paying as much, with the required confirmations by
   * its own tip (all of the client's nodes, when it has fewer). Stops at the first contradiction
   * (logged and counted), and says false when too few nodes could back it now: the next block or
   * hint asks again.
   */
  async backs (api: PocketNetProxyApi, first: PaymentProof, terms: ConfirmationTerms, invoiceId: string): Promise<boolean> {
    const nodes = api.nodes()
    const required = Math.min(this.nodesRequired, nodes.length)
    let backing = 0
    for (const node of nodes) {
      if (backing >= required) break
      if (!node.usable) continue
      const read = await this.#readFrom(api, node.name, first.txid)
      if (read === undefined) continue
      const verdict = judgeAnswer(first, read.transaction, read.tipHeight, terms)
      if (verdict === 'agrees') backing++
      else if (verdict !== 'shallow') {
        this.#disagreements++
        this.#log.warn({ node: node.name, txid: first.txid, invoiceId, contradiction: verdict },
          'Payments: a node contradicts the payment another node showed; the invoice is not confirmed while it does (a node that lies, or one on another chain)')
        return false
      }
    }
    return backing >= required
  }

  /** What the named node says of `txid`, and its tip after; undefined when it could not say (it failed, it is not usable). */
  async #readFrom (api: PocketNetProxyApi, node: string, txid: string): Promise<NodeRead | undefined> {
    try {
      let transaction: ChainTransaction | null
      try {
        transaction = readChainTransaction(await api.rpc.getrawtransaction({ txid }, { node })) ?? null
      } catch (err) {
        if (!isUnknownTransactionError(err)) throw err
        transaction = null
      }
      if (transaction?.blockHash === undefined) return { transaction, tipHeight: 0 }
      // Read after the transaction, so that its block is at or below the tip counted from.
      const info = await api.rpc.getnodeinfo({ node })
      return { transaction, tipHeight: info.lastblock.height }
    } catch (err) {
      this.#log.debug({ node, txid, err: { code: (err as { code?: unknown } | null)?.code } }, 'Payments: a node could not be asked to back a payment; another is asked')
      return undefined
    }
  }
}
