/**
 * The fee rate to pay, from the node's `estimatesmartfee [blocks]` answer: `{feerate, blocks}`
 * with `feerate` in PKOIN per kB, or `{errors: [...], blocks: 0}` when the node has no estimate
 * (too few blocks seen). The node relays nothing below its minimum relay fee (1,000 sat/kB by
 * default), and its estimates can be far below it (7 sat/kB on the regtest chain), so the caller's
 * floor is the rate whenever the estimate is lower or missing.
 */
import { SATOSHI_PER_PKOIN } from '../payments/satoshi.js'
import { WalletError } from './errors.js'

/** The node's default -minrelaytxfee: a transaction paying less per kB is not accepted. */
export const MIN_RELAY_FEE_SAT_PER_KB = 1000

/**
 * Integer sat/kB: the estimate rounded up, at least `floorSatPerKb`.
 * @throws WalletError `WALLET_ERR_FEE_ESTIMATE` for an answer that is neither an estimate nor a "no estimate";
 *   `WALLET_ERR_FEE_RATE` for a floor that is not a whole number of sat/kB.
 */
export function feeRateOf (answer: unknown, floorSatPerKb: number = MIN_RELAY_FEE_SAT_PER_KB): number {
  if (!Number.isSafeInteger(floorSatPerKb) || floorSatPerKb < 0) throw new WalletError('WALLET_ERR_FEE_RATE', `the floor ${floorSatPerKb} is not a whole number of sat/kB`)
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) throw new WalletError('WALLET_ERR_FEE_ESTIMATE', 'an estimatesmartfee answer is an object')
  const { feerate, errors } = answer as { feerate?: unknown, errors?: unknown }
  if (feerate === undefined) {
    if (Array.isArray(errors)) return floorSatPerKb
    throw new WalletError('WALLET_ERR_FEE_ESTIMATE', 'an estimatesmartfee answer has a feerate or errors')
  }
  if (typeof feerate !== 'number' || !Number.isFinite(feerate) || feerate < 0 || feerate > 1) throw new WalletError('WALLET_ERR_FEE_ESTIMATE', `the estimated feerate ${String(feerate)} is not a number of PKOIN per kB between 0 and 1`)
  return Math.max(floorSatPerKb, satoshiRoundedUp(feerate))
}

/** PKOIN to satoshi, up to the next whole satoshi, without a float's last-digit noise (0.00000007 × 10⁸ = 7.000000000000001). */
function satoshiRoundedUp (pkoin: number): number {
  const scaled = pkoin * SATOSHI_PER_PKOIN
  const nearest = Math.round(scaled)
  return Math.abs(scaled - nearest) < 1e-6 ? nearest : Math.ceil(scaled)
}
