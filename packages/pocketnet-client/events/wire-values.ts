/**
 * The node's numbers as they come: amounts in satoshi as decimal strings (WebSocket messages) or
 * JSON numbers (catch-up answers), times as strings in one message and numbers in the next.
 * Read exactly, never through floating point: "12.5", "1e3", " 7" or 2^53 are refused, not
 * rounded.
 */
import { NodeEventError } from './errors.js'

const DIGITS = /^(0|[1-9]\d*)$/

/** A whole number from 0 up to Number.MAX_SAFE_INTEGER, as a JSON number or a decimal string; undefined otherwise. */
export function wholeNumber (value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined
  if (typeof value !== 'string' || !DIGITS.test(value)) return undefined
  // Digits only, so the integer is exact; beyond the safe range it could not be held as a number.
  const exact = BigInt(value)
  return exact <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(exact) : undefined
}

/**
 * An amount in integer satoshi (1 PKOIN = 100,000,000).
 * @throws EVENTS_ERR_BAD_MESSAGE when `value` is not a whole number of satoshi
 */
export function satoshi (value: unknown, what: string): number {
  const amount = wholeNumber(value)
  if (amount === undefined) throw new NodeEventError('EVENTS_ERR_BAD_MESSAGE', `${what} is not a whole number of satoshi: ${JSON.stringify(value)?.slice(0, 40)}`)
  return amount
}

/** A block's hash: 64 hex digits, lowercased. */
export function blockHash (value: unknown): string | undefined {
  return typeof value === 'string' && /^[0-9a-fA-F]{64}$/.test(value) ? value.toLowerCase() : undefined
}
