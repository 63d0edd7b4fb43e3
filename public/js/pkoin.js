// PKOIN as people write it, and integer satoshi as the API takes it (1 PKOIN = 100,000,000
// satoshi). Converted by their decimal text, never by float arithmetic: 0.1 + 0.2 is not 0.3 in
// floating point, and "0.3" is exactly 30000000 satoshi here.

const DECIMALS = 8

/**
 * Satoshi for an amount typed in PKOIN ("1", "0.5", ".25", "0,25"), or undefined when the text is
 * not one (a sign, more than 8 decimals, letters, or beyond a safe integer).
 * @param {string} text
 * @returns {number | undefined}
 */
export function parsePkoin (text) {
  const match = /^(\d*)(?:[.,](\d{1,8}))?$/.exec(String(text).trim())
  if (match === null || (match[1] === '' && match[2] === undefined)) return undefined
  const satoshi = Number(`${match[1]}${(match[2] ?? '').padEnd(DECIMALS, '0')}`)
  return Number.isSafeInteger(satoshi) ? satoshi : undefined
}

/**
 * "1.5" for 150000000 satoshi: the decimal text, without trailing zeros.
 * @param {number} satoshi a non-negative integer
 */
export function formatPkoin (satoshi) {
  const digits = String(satoshi).padStart(DECIMALS + 1, '0')
  const whole = digits.slice(0, -DECIMALS)
  const fraction = digits.slice(-DECIMALS).replace(/0+$/, '')
  return fraction === '' ? whole : `${whole}.${fraction}`
}
