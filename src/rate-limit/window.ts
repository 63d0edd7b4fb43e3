/** The rate limit's window as configured. */
import { parse } from '@lukeed/ms'

/**
 * RATE_LIMIT_WINDOW in milliseconds: plain milliseconds (`"60000"`) or a duration as
 * @fastify/rate-limit reads one (`"1 minute"`, `"30s"`, `"500 ms"`), parsed by the same library
 * (@lukeed/ms), so that the two never disagree. A whole number of milliseconds from 1.
 */
export function parseWindow (text: string): number {
  const ms = parse(text.trim())
  if (ms === undefined || !Number.isInteger(ms) || ms < 1) throw new TypeError(`not a duration: ${JSON.stringify(text)}`)
  return ms
}
