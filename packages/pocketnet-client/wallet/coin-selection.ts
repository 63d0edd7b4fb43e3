/**
 * Which coins a payment spends. The rule: only coins locked to the wallet's own address and
 * mature (confirmed at least `minConfirmations` times, 10 for outputs of social transactions and
 * 100 for coinbase outputs, as the node's consensus requires), largest first (ties: more
 * confirmations, then txid and vout), adding coins until the amounts and the fee are covered.
 * Largest-first spends the fewest inputs, so the transaction is the smallest and cheapest and its
 * size is bounded; the same coins in any order give the same choice, so a payment built twice
 * from the same answer is the same transaction.
 */
import type { Coin } from './coin.js'

/** Confirmations a coinbase output needs before it is spent (consensus, COINBASE_MATURITY). */
export const COINBASE_MATURITY = 100
/** Confirmations an output of a Pocketnet social transaction needs (consensus, POCKETNET_MATURITY). */
export const POCKET_TX_MATURITY = 10

/** The coins `address` may spend now, in the order they are chosen. */
export function spendableCoins (coins: readonly Coin[], address: string, minConfirmations: number): Coin[] {
  return coins
    .filter(coin => coin.address === address && coin.confirmations >= Math.max(
      minConfirmations,
      coin.coinbase ? COINBASE_MATURITY : 0,
      coin.pocketTx ? POCKET_TX_MATURITY : 0
    ))
    .sort((a, b) => b.amountSat - a.amountSat || b.confirmations - a.confirmations || (a.txid < b.txid ? -1 : a.txid > b.txid ? 1 : a.vout - b.vout))
}
