/**
 * A fixed window per client: `max` requests, then denied until the client's window (which
 * starts at its first request) ends. Framework-free, so that the Fastify hook
 * (plugins/app/rate-limit.ts) and the fast path (fast-path.ts) count every request once, in
 * one place.
 *
 * The windows are kept in an LRU: memory stays bounded however many addresses clients use;
 * a client pushed out by that many newer ones starts a new window.
 */
import type { IncomingMessage } from 'node:http'
import { LRUCache } from 'lru-cache'

export interface RateDecision {
  allowed: boolean
  /** The client's requests left in its window. */
  remaining: number
  /** Whole seconds until its window ends (at least 1). */
  resetSeconds: number
}

interface Window {
  count: number
  endsAt: number
}

const MAX_TRACKED_CLIENTS = 100_000
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, second: 1000, seconds: 1000, m: 60_000, minute: 60_000, minutes: 60_000, h: 3_600_000, hour: 3_600_000, hours: 3_600_000 }

/** `"1 minute"`, `"30s"`, `"500 ms"` or plain milliseconds (`"60000"`), as RATE_LIMIT_WINDOW takes them. */
export function parseWindow (text: string): number {
  const match = /^(\d+) ?([a-z]*)$/.exec(text.trim())
  const unit = match?.[2] === '' ? 1 : UNIT_MS[match?.[2] ?? '']
  if (match === null || unit === undefined) throw new TypeError(`not a duration: ${JSON.stringify(text)}`)
  return Number(match[1]) * unit
}

/** Where a request's decision is kept, so that a request handed from the fast path to Fastify is not counted twice. */
const decided = Symbol('rate decision')
type Decided = IncomingMessage & { [decided]?: RateDecision }

export class RateLimiter {
  readonly #windows = new LRUCache<string, Window>({ max: MAX_TRACKED_CLIENTS })

  constructor (readonly max: number, readonly windowMs: number, private readonly now: () => number = Date.now) {}

  /** Counts one request of `client`. */
  take (client: string): RateDecision {
    const now = this.now()
    let window = this.#windows.get(client)
    if (window === undefined || now >= window.endsAt) {
      window = { count: 0, endsAt: now + this.windowMs }
      this.#windows.set(client, window)
    }
    window.count++
    return {
      allowed: window.count <= this.max,
      remaining: Math.max(0, this.max - window.count),
      resetSeconds: Math.max(1, Math.ceil((window.endsAt - now) / 1000)),
    }
  }

  /** Counts `request` of `client` once, however many layers ask. */
  decide (request: IncomingMessage, client: string): RateDecision {
    return (request as Decided)[decided] ?? this.take(client)
  }

  /** Keeps the decision on the request, for a layer that hands it on to another. */
  static remember (request: IncomingMessage, decision: RateDecision): void {
    (request as Decided)[decided] = decision
  }
}
