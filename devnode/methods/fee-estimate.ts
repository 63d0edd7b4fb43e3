/**
 * `estimatesmartfee [conf_target, estimate_mode]` with the node's parameter rules and a fee rate
 * the emulator is told (there is no fee market to estimate from). With a rate: `{feerate, blocks}`,
 * the rate in PKOIN per 1,000 bytes; without one: `{errors: ["Insufficient data or no feerate
 * found"], blocks: 0}`, as a node that has seen too few blocks answers.
 */
import { RpcError, getInt, getStr, typeCheck } from './common.js'
import { pkoin } from './transactions.js'

/** The node's longest target tracked. */
const MAX_TARGET = 1008
/** Conservative estimates never answer for fewer than 2 blocks. */
const MIN_ANSWERED_TARGET = 2
const MODES = new Set(['unset', 'economical', 'conservative'])

/**
 * What the emulator answers by default: 70 satoshi per 1,000 bytes, below the node's minimum relay
 * fee (1,000), as a real node's estimate can be: a wallet must raise it to that floor.
 */
export const DEFAULT_FEE_RATE_PER_KB = 70

/** `feeRatePerKb`: satoshi per 1,000 bytes, or null for no estimate. */
export function estimateSmartFee (params: unknown[], feeRatePerKb: number | null): Record<string, unknown> {
  if (params.length === 0) throw new RpcError(-3, 'Expected type number, got null')
  typeCheck(params[0], 'number')
  if (params.length > 1 && params[1] !== null) typeCheck(params[1], 'string')
  const target = getInt(params[0])
  if (target < 1 || target > MAX_TARGET) throw new RpcError(-8, `Invalid conf_target, must be between 1 and ${MAX_TARGET}`)
  if (params.length > 1 && params[1] !== null && !MODES.has(getStr(params[1]).toLowerCase())) {
    throw new RpcError(-8, 'Invalid estimate_mode parameter, must be one of: "unset", "economical", "conservative"')
  }
  if (feeRatePerKb === null) return { errors: ['Insufficient data or no feerate found'], blocks: 0 }
  return { feerate: pkoin(feeRatePerKb), blocks: Math.max(target, MIN_ANSWERED_TARGET) }
}
