/**
 * The fast path: a repeat of a GET whose answer is still fresh in the client's cache is
 * answered here, in front of Fastify, by replaying the response Fastify sent for it — same body,
 * same headers — with only the per-request parts made anew: request id, rate-limit counts, Date.
 * It costs about half of what the Fastify pipeline does (and about 1.3–1.4× a bare node:http
 * server sending the same body: see README, "Benchmarks").
 *
 * What keeps it honest:
 * - Only responses a route marked replayable (success-envelope.ts: a body that is a function of
 *   the cached answer alone) with status 200 to a GET, without Set-Cookie, are recorded, by the
 *   plugin in plugins/app/fast-path.ts, after Fastify sent them (an answer's second send, not its
 *   first): every header a hook added (CORS, security, caching) is in the recording.
 * - A recording serves only the same URL, and only requests whose headers named in its Vary
 *   equal those of the request recorded (so CORS answers per Origin stay right).
 * - It serves only while the client says its answer is the fresh cached one (expiry, eviction,
 *   a new block all end it); then the request goes to Fastify, which records the new answer.
 * - Rate limiting counts the request in the same limiter as Fastify; a limited client is handed
 *   to Fastify for its 429. If-None-Match gets the same 304 as from the http-cache plugin.
 * - Everything else (other methods, unknown URLs, debug logging; every request once the server
 *   is closing) goes to Fastify.
 *
 * Recordings are bounded like the answer cache, by count and by body bytes; they hold their
 * answer weakly, so the cache alone decides how long an answer lives.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { LRUCache } from 'lru-cache'
import { ifNoneMatchHas } from './etag.js'
import { RateLimiter } from './rate-limiter.js'

export interface Recording {
  /** Counts an answer in the metrics of the route. */
  count: (status: 200 | 304, seconds: number) => void
  /** The cached answer the body renders. */
  answer: WeakRef<object>
  body: Buffer
  etag: string
  /** Name, value, name, value…: the headers that are the same for every request (but Content-Length, which a 304 leaves out). */
  headers: string[]
  /** Request headers named in the response's Vary, and their values when recorded. */
  vary: Array<[string, string | string[] | undefined]>
}

/** Headers made anew per request, or per status (Content-Length), or that must never be replayed. */
export const PER_REQUEST_HEADERS = new Set(['content-length', 'x-request-id', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after', 'date', 'connection', 'keep-alive', 'transfer-encoding'])

export interface FastPathOptions {
  maxEntries: number
  maxBytes: number
  /** The client's word on whether an answer is still its fresh cached one (counts a hit). */
  isFreshAnswer: (answer: object) => boolean
  limiter: RateLimiter
  clientAddress: (request: IncomingMessage) => string
  requestId: (request: IncomingMessage) => string
}

export class FastPath {
  /** Off while successes are logged: each must go through Fastify. */
  enabled = true
  /** Where an unexpected failure of serve() is reported (the app's log). */
  onError: (err: unknown) => void = () => {}
  readonly #recordings: LRUCache<string, Recording>
  readonly #options: FastPathOptions
  readonly #limit: string

  constructor (options: FastPathOptions) {
    this.#options = options
    this.#limit = String(options.limiter.max)
    this.#recordings = new LRUCache({ max: options.maxEntries, maxSize: options.maxBytes, sizeCalculation: recording => Math.max(1, recording.body.length) })
  }

  record (url: string, recording: Recording): void {
    if (recording.body.length <= this.#options.maxBytes) this.#recordings.set(url, recording)
  }

  get size (): number {
    return this.#recordings.size
  }

  /** Answers `request` from a recording and returns true, or returns false for Fastify to answer it. */
  serve (request: IncomingMessage, response: ServerResponse): boolean {
    if (!this.enabled || request.method !== 'GET') return false
    const url = request.url as string
    const recording = this.#recordings.get(url)
    if (recording === undefined) return false
    if (recording.vary.length > 0 && !recording.vary.every(([name, value]) => request.headers[name] === value)) return false
    const started = performance.now()
    const { limiter, clientAddress } = this.#options
    const decision = limiter.decide(request, clientAddress(request))
    // Counted here: should Fastify answer after all, it reads this decision rather than count again.
    RateLimiter.remember(request, decision)
    if (!decision.allowed) return false
    const answer = recording.answer.deref()
    if (answer === undefined || !this.#options.isFreshAnswer(answer)) {
      this.#recordings.delete(url)
      return false
    }
    const headers = [
      ...recording.headers,
      'x-request-id', this.#options.requestId(request),
      'x-ratelimit-limit', this.#limit,
      'x-ratelimit-remaining', String(decision.remaining),
      'x-ratelimit-reset', String(decision.resetSeconds),
    ]
    if (ifNoneMatchHas(request.headers['if-none-match'], recording.etag)) {
      response.writeHead(304, headers)
      response.end()
      recording.count(304, (performance.now() - started) / 1000)
    } else {
      headers.push('content-length', String(recording.body.length))
      response.writeHead(200, headers)
      response.end(recording.body)
      recording.count(200, (performance.now() - started) / 1000)
    }
    return true
  }
}
