/**
 * A payment from the app's wallet, built and signed here: the receivers' outputs in the order
 * given, then the memo's OP_RETURN output if any, then the change back to the wallet. Nothing is
 * asked of a node: the coins, the fee rate and the time come in, so the same inputs give the same
 * bytes (signatures are deterministic), which is what lets a caller store a payment before it is
 * sent and send the very same transaction again after a crash.
 */
import { addressRule, isPocketnetAddress } from '../address.js'
import type { Coin } from './coin.js'
import { spendableCoins } from './coin-selection.js'
import { WalletError } from './errors.js'
import { MIN_RELAY_FEE_SAT_PER_KB } from './fee-rate.js'
import { memoScript, p2pkhScript } from './scripts.js'
import { signP2pkhInputs } from './sign.js'
import { encodeTransaction, FINAL_SEQUENCE, transactionId, type Transaction, type TransactionOutput } from './transaction.js'
import { feeFor, signedSizeBound } from './transaction-size.js'
import type { WalletKey } from './wallet-key.js'
import { bytesToHex } from '@noble/hashes/utils.js'

/**
 * The smallest output the node relays to a P2PKH address: below it an output is "dust" (it would
 * cost more to spend than it holds). 546 sat: (34 + 148) bytes at the node's dust relay fee of
 * 3,000 sat/kB.
 */
export const DUST_THRESHOLD_SAT = 546
/** The most receivers one payment pays: far under the node's 100 kB standard size with its inputs. */
export const MAX_PAYMENT_OUTPUTS = 100
/** The most inputs one payment spends; with 100 outputs it stays under the 100,000 bytes the node relays. */
export const MAX_PAYMENT_INPUTS = 600
/** A fee rate above this is refused as a mistake (a node's bogus estimate): Bitcoin's default -maxfeerate, 0.1 per kB. */
export const MAX_FEE_RATE_SAT_PER_KB = 10_000_000
/** The version the node's own wallet writes (createrawtransaction); the node accepts 1 as well. */
export const TRANSACTION_VERSION = 2

export interface PaymentOutput {
  address: string
  amountSat: number
}

export interface PaymentRequest {
  /** The wallet's unspent coins (see coinsOfUnspent); only the key's own and mature ones are spent. */
  coins: readonly Coin[]
  outputs: readonly PaymentOutput[]
  /** UTF-8, 1 to 80 bytes, written as one OP_RETURN output. */
  memo?: string | undefined
  /** Integer satoshi per kB, at least the node's minimum relay fee (see feeRateOf). */
  feeRateSatPerKb: number
  /** Unix seconds for the transaction's nTime: the caller's clock. */
  nTime: number
  /** Where the change goes; the key's own address by default. */
  changeAddress?: string | undefined
  /** Confirmations a coin needs to be spent; 1 by default (0 would chain on mempool coins a re-org can drop). */
  minConfirmations?: number | undefined
}

export interface BuiltPayment {
  hex: string
  txid: string
  feeSat: number
  /** The coins the transaction spends, in input order. */
  spent: Coin[]
  /** 0 when the change was below dust and went to the fee. */
  changeSat: number
  /** The signed size in bytes (no witness, so size and virtual size are one). */
  vsize: number
  transaction: Transaction
}

/**
 * Builds and signs a payment.
 * @throws WalletError: `WALLET_ERR_ADDRESS`, `WALLET_ERR_AMOUNT` (not whole satoshi, below
 *   dust), `WALLET_ERR_MEMO`, `WALLET_ERR_OUTPUTS`, `WALLET_ERR_FEE_RATE`, `WALLET_ERR_TRANSACTION`
 *   (nTime), `WALLET_ERR_FUNDS` saying how much is missing.
 */
export function buildPayment (key: WalletKey, request: PaymentRequest): BuiltPayment {
  const { coins, outputs, memo, feeRateSatPerKb, nTime } = request
  const changeAddress = request.changeAddress ?? key.address
  const minConfirmations = request.minConfirmations ?? 1
  if (!Number.isSafeInteger(minConfirmations) || minConfirmations < 0) throw new WalletError('WALLET_ERR_AMOUNT', `minConfirmations ${minConfirmations} is not a non-negative integer`)
  if (!Number.isSafeInteger(feeRateSatPerKb) || feeRateSatPerKb < MIN_RELAY_FEE_SAT_PER_KB || feeRateSatPerKb > MAX_FEE_RATE_SAT_PER_KB) {
    throw new WalletError('WALLET_ERR_FEE_RATE', `the fee rate ${feeRateSatPerKb} is not a whole number of sat/kB from ${MIN_RELAY_FEE_SAT_PER_KB} (the node's minimum relay fee) to ${MAX_FEE_RATE_SAT_PER_KB}`)
  }
  if (!Number.isSafeInteger(nTime) || nTime < 0 || nTime > 0xffffffff) throw new WalletError('WALLET_ERR_TRANSACTION', `nTime ${nTime} is not unix seconds in 32 bits`)
  if (!isPocketnetAddress(changeAddress, key.network)) throw new WalletError('WALLET_ERR_ADDRESS', `the change address is not ${addressRule(key.network)}`)
  const paid = payeeOutputs(outputs, key)
  if (memo !== undefined) paid.push({ amountSat: 0, scriptPubKey: memoScript(memo) })
  const amountSat = outputs.reduce((sum, output) => sum + output.amountSat, 0)
  if (!Number.isSafeInteger(amountSat)) throw new WalletError('WALLET_ERR_AMOUNT', 'the amounts add up to more than a safe integer of satoshi')

  const change: TransactionOutput = { amountSat: 0, scriptPubKey: p2pkhScript(changeAddress, key.network) }
  const candidates = spendableCoins(coins, key.address, minConfirmations).slice(0, MAX_PAYMENT_INPUTS)
  let inSat = 0
  for (let count = 1; count <= candidates.length; count++) {
    inSat += (candidates[count - 1] as Coin).amountSat
    const spent = candidates.slice(0, count)
    const feeWithChange = feeFor(signedSizeBound(count, [...paid, change]), feeRateSatPerKb)
    const changeSat = inSat - amountSat - feeWithChange
    if (changeSat >= DUST_THRESHOLD_SAT) return sign(key, spent, [...paid, { ...change, amountSat: changeSat }], nTime, feeWithChange, changeSat)
    const feeAlone = feeFor(signedSizeBound(count, paid), feeRateSatPerKb)
    // What is left over, less than dust, is worth more to the fee than as an output the node would refuse.
    if (inSat - amountSat >= feeAlone) return sign(key, spent, paid, nTime, inSat - amountSat, 0)
  }
  const neededSat = amountSat + feeFor(signedSizeBound(Math.max(1, candidates.length), paid), feeRateSatPerKb)
  throw new WalletError('WALLET_ERR_FUNDS', `the wallet's ${candidates.length} spendable coins hold ${inSat} sat; the payment needs ${neededSat} sat with its fee: ${neededSat - inSat} sat missing`)
}

function payeeOutputs (outputs: readonly PaymentOutput[], key: WalletKey): TransactionOutput[] {
  if (!Array.isArray(outputs) || outputs.length === 0) throw new WalletError('WALLET_ERR_OUTPUTS', 'a payment has at least one receiver')
  if (outputs.length > MAX_PAYMENT_OUTPUTS) throw new WalletError('WALLET_ERR_OUTPUTS', `a payment has at most ${MAX_PAYMENT_OUTPUTS} receivers, not ${outputs.length}`)
  return outputs.map((output, index) => {
    if (!Number.isSafeInteger(output.amountSat) || output.amountSat < 0) throw new WalletError('WALLET_ERR_AMOUNT', `output ${index}'s amount ${String(output.amountSat)} is not a whole number of satoshi`)
    if (output.amountSat < DUST_THRESHOLD_SAT) throw new WalletError('WALLET_ERR_AMOUNT', `output ${index}'s amount ${output.amountSat} sat is below the dust threshold of ${DUST_THRESHOLD_SAT} sat, which the node does not relay`)
    return { amountSat: output.amountSat, scriptPubKey: p2pkhScript(output.address, key.network) }
  })
}

function sign (key: WalletKey, spent: Coin[], outputs: TransactionOutput[], nTime: number, feeSat: number, changeSat: number): BuiltPayment {
  const unsigned: Transaction = {
    version: TRANSACTION_VERSION,
    nTime,
    inputs: spent.map(coin => ({ txid: coin.txid, vout: coin.vout, scriptSig: new Uint8Array(0), sequence: FINAL_SEQUENCE })),
    outputs,
    lockTime: 0,
  }
  const transaction = signP2pkhInputs(unsigned, key)
  const bytes = encodeTransaction(transaction)
  return { hex: bytesToHex(bytes), txid: transactionId(bytes), feeSat, spent, changeSat, vsize: bytes.length, transaction }
}
