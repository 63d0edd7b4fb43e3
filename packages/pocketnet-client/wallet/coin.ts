/**
 * A coin: an unspent output the wallet may spend, as the node's `txunspent` lists it (only
 * outputs in blocks: a transaction in the mempool lists none of its outputs), read strictly. A node's answer is checked field by field; one malformed entry refuses the whole
 * answer, since a list that is wrong in one place may be wrong in others that look right.
 */
import { isSatoshi, pkoinToSatoshi } from '../payments/satoshi.js'
import { WalletError } from './errors.js'

export interface Coin {
  txid: string
  vout: number
  address: string
  amountSat: number
  /**
   * Blocks from the coin's block to the best block, both counted (1 in the tip block), as the rest
   * of this code counts confirmations. The node's `confirmations` counts one less (0 in the tip
   * block): one is added here.
   */
  confirmations: number
  /** The block that holds it. */
  height: number
  /** An output of a coinbase or coinstake transaction: spendable after 100 confirmations. */
  coinbase: boolean
  /** An output of a Pocketnet social transaction: spendable after 10 confirmations. */
  pocketTx: boolean
}

const TXID = /^[0-9a-f]{64}$/

/**
 * The coins of a `txunspent` answer (`[{txid, vout, address, amount, amountSat, scriptPubKey,
 * coinbase, pockettx, confirmations, height}]`).
 * @throws WalletError `WALLET_ERR_UNSPENT` naming the entry and field that is not as a node sends it.
 */
export function coinsOfUnspent (answer: unknown): Coin[] {
  if (!Array.isArray(answer)) throw new WalletError('WALLET_ERR_UNSPENT', `a txunspent answer is a list, not ${answer === null ? 'null' : typeof answer}`)
  const seen = new Set<string>()
  return answer.map((entry: unknown, index) => {
    const fail = (why: string): never => { throw new WalletError('WALLET_ERR_UNSPENT', `txunspent entry ${index}: ${why}`) }
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return fail('not an object')
    const item = entry as Record<string, unknown>
    const { txid, vout, address, amountSat, amount, confirmations, height, coinbase, pockettx } = item
    if (typeof txid !== 'string' || !TXID.test(txid)) fail('txid is not 64 lowercase hex digits')
    if (!Number.isInteger(vout) || (vout as number) < 0 || (vout as number) > 0xffffffff) fail('vout is not an output index')
    if (typeof address !== 'string' || address.length === 0) fail('address is not a non-empty string')
    if (!isSatoshi(amountSat)) fail('amountSat is not a whole number of satoshi')
    // Both forms are sent; they must say the same, or neither is believed.
    if (amount !== undefined && (typeof amount !== 'number' || !agrees(amount, amountSat as number))) fail('amount and amountSat disagree')
    if (!Number.isSafeInteger(confirmations) || (confirmations as number) < 0) fail('confirmations is not a non-negative integer')
    if (!Number.isSafeInteger(height) || (height as number) < 0) fail('height is not a non-negative integer')
    if (coinbase !== undefined && typeof coinbase !== 'boolean') fail('coinbase is not a boolean')
    if (pockettx !== undefined && typeof pockettx !== 'boolean') fail('pockettx is not a boolean')
    const outpoint = `${txid as string}:${vout as number}`
    if (seen.has(outpoint)) fail(`${outpoint} is listed twice`)
    seen.add(outpoint)
    return {
      txid: txid as string,
      vout: vout as number,
      address: address as string,
      amountSat: amountSat as number,
      confirmations: (confirmations as number) + 1,
      height: height as number,
      coinbase: coinbase === true,
      pocketTx: pockettx === true,
    }
  })
}

function agrees (pkoin: number, satoshi: number): boolean {
  try {
    return pkoinToSatoshi(pkoin) === satoshi
  } catch {
    return false
  }
}
