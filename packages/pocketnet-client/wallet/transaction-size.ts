/**
 * A transaction's size before it is signed, to price its fee: every P2PKH input counted at its
 * largest signed size (148 bytes: outpoint 36, script length 1, a 72-byte DER signature with its
 * hash type and a 33-byte key with their two push bytes 107, sequence 4). A low-S signature is 71
 * or 72 bytes with its hash type, so the signed transaction is never larger than the estimate, and
 * its fee rate never below the one asked.
 */
import type { TransactionOutput } from './transaction.js'

export const P2PKH_INPUT_MAX_BYTES = 148
/** An output paying a P2PKH address: amount 8, script length 1, script 25. */
export const P2PKH_OUTPUT_BYTES = 34
/** version, nTime, lock time. */
const FIXED_BYTES = 12

export function compactSizeBytes (count: number): number {
  return count < 0xfd ? 1 : count <= 0xffff ? 3 : 5
}

export function outputBytes (output: TransactionOutput): number {
  return 8 + compactSizeBytes(output.scriptPubKey.length) + output.scriptPubKey.length
}

/** The largest size, in bytes, of a transaction of `inputCount` P2PKH inputs and `outputs`. */
export function signedSizeBound (inputCount: number, outputs: readonly TransactionOutput[]): number {
  return FIXED_BYTES + compactSizeBytes(inputCount) + inputCount * P2PKH_INPUT_MAX_BYTES +
    compactSizeBytes(outputs.length) + outputs.reduce((sum, output) => sum + outputBytes(output), 0)
}

/** The fee of `bytes` at `satPerKb`, rounded up: never under the rate (the node rounds its minimum down). */
export function feeFor (bytes: number, satPerKb: number): number {
  return Math.ceil(bytes * satPerKb / 1000)
}
