/**
 * What the wallet primitives refuse. Match on `err.code`: stable strings, as the rest of the
 * client's errors. Messages say what was seen (an amount, a count, a field), never a key and never
 * a node's own text.
 */
import { CodedError } from '../coded-error.js'

export const WALLET_ERROR_CODES = {
  WALLET_ERR_KEY: 'A private key is not usable: not Base58Check, a bad checksum, another network\'s version byte, an uncompressed key, or a scalar outside the curve\'s range.',
  WALLET_ERR_ADDRESS: 'An address to pay is not a pay-to-public-key-hash address of the wallet\'s network.',
  WALLET_ERR_AMOUNT: 'An amount is not a whole number of satoshi in range, or an output would be below the dust threshold.',
  WALLET_ERR_MEMO: 'A memo is empty or longer than the node relays in one OP_RETURN output.',
  WALLET_ERR_OUTPUTS: 'A payment has no output or more outputs than one transaction may carry.',
  WALLET_ERR_FEE_RATE: 'A fee rate is not a whole number of satoshi per kB at or above the node\'s minimum relay fee.',
  WALLET_ERR_FUNDS: 'The spendable coins do not cover the amounts and the fee; the message says how much is missing.',
  WALLET_ERR_TRANSACTION: 'A transaction\'s bytes are not a Pocketnet transaction, or a transaction to encode or sign has a field out of range.',
  WALLET_ERR_UNSPENT: 'A txunspent answer is not a list of coins with the fields and types a node sends.',
  WALLET_ERR_FEE_ESTIMATE: 'An estimatesmartfee answer is not an object with a feerate or errors.',
} as const

export type WalletErrorCode = keyof typeof WALLET_ERROR_CODES

/** A value refused by the wallet primitives; `code` says which rule, the message says what was seen. */
export class WalletError extends CodedError<WalletErrorCode> {
  override name = 'WalletError'
}
