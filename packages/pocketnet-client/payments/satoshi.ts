/**
 * PKOIN amounts as integer satoshi. The node writes PKOIN as JSON floats (`getrawtransaction`'s
 * `value`), satoshi as integers or decimal strings elsewhere; everything past the edge is a safe
 * integer of satoshi, and a float is turned into one exactly, from its decimal text, never by
 * multiplying it (`1.15 * 1e8` is `114999999.99999999`). See docs/payments.md, "Amounts".
 */
import { PaymentError } from './errors.js'

/** 1 PKOIN = 100,000,000 satoshi. */
export const SATOSHI_PER_PKOIN = 100_000_000
const DECIMALS = 8
/**
 * The largest PKOIN amount read from a float. Below 2^25 the gap between neighbouring doubles is
 * under 1e-8, so every amount with 8 decimals has a double of its own and its shortest decimal
 * text (what `String()` gives) is the amount the node wrote. Far above any supply of PKOIN.
 */
export const MAX_FLOAT_PKOIN = 2 ** 25

const DECIMAL_TEXT = /^(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/

function refuse (what: string, value: unknown, why: string): never {
  throw new PaymentError('PAYMENT_ERR_AMOUNT', `${what} ${why}: ${JSON.stringify(String(value))}`)
}

/** Integer satoshi from a non-negative decimal text with an optional exponent ("1.5", "1e-8"). */
function satoshiOfDecimalText (text: string, what: string, original: unknown): number {
  const match = DECIMAL_TEXT.exec(text)
  if (match === null) refuse(what, original, 'is not a non-negative decimal number')
  const [, whole = '', fraction = '', exponent = '0'] = match
  const digits = `${whole}${fraction}`.replace(/^0+(?=\d)/, '')
  // The value is digits × 10^shift PKOIN, so digits × 10^(shift + 8) satoshi.
  const shift = Number(exponent) - fraction.length + DECIMALS
  let satoshiText: string
  if (shift >= 0) {
    satoshiText = digits === '0' ? '0' : digits + '0'.repeat(shift)
  } else {
    const dropped = digits.slice(Math.max(0, digits.length + shift))
    if (/[^0]/.test(dropped)) refuse(what, original, 'is not a whole number of satoshi (more than 8 decimals)')
    satoshiText = digits.slice(0, Math.max(0, digits.length + shift)) || '0'
  }
  const satoshi = Number(satoshiText)
  if (!Number.isSafeInteger(satoshi)) refuse(what, original, 'is too large')
  return satoshi
}

/**
 * A PKOIN amount, as the node's JSON float or as decimal text ("1.5"), in integer satoshi.
 * @throws PaymentError `PAYMENT_ERR_AMOUNT` for a negative amount, one finer than a satoshi
 *   (`0.1 + 0.2` is `0.30000000000000004`), a float of {@link MAX_FLOAT_PKOIN} or more, or not a number.
 * @example pkoinToSatoshi(48.499) // 4849900000
 */
export function pkoinToSatoshi (value: number | string, what = 'an amount'): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) refuse(what, value, 'is not a non-negative finite number')
    if (value >= MAX_FLOAT_PKOIN) refuse(what, value, `is ${MAX_FLOAT_PKOIN} PKOIN or more, where a float cannot be exact`)
    return satoshiOfDecimalText(String(value), what, value)
  }
  if (typeof value !== 'string' || /e/i.test(value)) refuse(what, value, 'is not a decimal number')
  return satoshiOfDecimalText(value, what, value)
}

/**
 * A satoshi amount the node writes as a decimal string (the WebSocket `transaction` event's
 * `amount`): digits only, no sign, no leading zero, a safe integer.
 * @throws PaymentError `PAYMENT_ERR_AMOUNT`
 */
export function satoshiFromString (text: string, what = 'an amount'): number {
  if (typeof text !== 'string' || !/^(0|[1-9]\d*)$/.test(text)) refuse(what, text, 'is not a whole number of satoshi')
  const satoshi = Number(text)
  if (!Number.isSafeInteger(satoshi)) refuse(what, text, 'is too large')
  return satoshi
}

/** True for a non-negative safe integer: a satoshi amount this code can hold exactly. */
export function isSatoshi (value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
}

/**
 * Satoshi as PKOIN decimal text, with no trailing zeros: `150000000` → `"1.5"`, `1` → `"0.00000001"`.
 * @throws PaymentError `PAYMENT_ERR_AMOUNT` when `satoshi` is not a non-negative safe integer.
 */
export function formatPkoin (satoshi: number): string {
  if (!isSatoshi(satoshi)) refuse('an amount', satoshi, 'is not a whole number of satoshi')
  const whole = Math.floor(satoshi / SATOSHI_PER_PKOIN)
  const fraction = String(satoshi % SATOSHI_PER_PKOIN).padStart(DECIMALS, '0').replace(/0+$/, '')
  return fraction === '' ? String(whole) : `${whole}.${fraction}`
}

/**
 * Satoshi as the PKOIN number a host call takes (`sdk.payment`'s `amount`): the double nearest the
 * exact decimal, which {@link pkoinToSatoshi} reads back to the same satoshi.
 * @throws PaymentError `PAYMENT_ERR_AMOUNT` for an amount of {@link MAX_FLOAT_PKOIN} PKOIN or more.
 */
export function satoshiToPkoinNumber (satoshi: number): number {
  const pkoin = Number(formatPkoin(satoshi))
  if (pkoin >= MAX_FLOAT_PKOIN) refuse('an amount', satoshi, `is ${MAX_FLOAT_PKOIN} PKOIN or more, where a float cannot be exact`)
  return pkoin
}
