/**
 * The fast path: a repeat of a GET whose answer is still fresh in the client's cache is
 * answered here, in front of Fastify, by replaying the response Fastify sent for it: same body,
 * same headers, with only the per-request parts made anew (request id, rate-limit counts, Date).
 * It costs about half of what the Fastify pipeline does (bench/results.md).
 *
 * What keeps it safe (docs/fast-path.md has the whole argument):
 * - Only routes whose config asks for `replay` are recorded, and a route that asks for it is
 *   refused at start-up if any hook the fast path does not reproduce would run on it, or if it is
 *   marked `auth` (recorder.ts, hook-ledger.ts). Sending with sendSuccess alone replays nothing.
 * - Only a 200 to a GET is recorded, and only when every header of the response is on the
 *   allow-list of headers that are the same for every request (headers.ts); anything else, a
 *   Set-Cookie or a header some hook set for this request, and the response is not recorded.
 * - A recording serves only the same URL, and only requests whose headers named in its Vary
 *   equal those of the request recorded (CORS answers per Origin).
 * - It serves only while the client says its answer is the fresh cached one (expiry, eviction,
 *   a new block all end it); then Fastify answers, and records the new answer.
 * - The rate limit counts the request in the same store as Fastify's hook, once: a request
 *   handed on to Fastify carries its count (rate-limit/rate-limit.ts). If-None-Match gets the
 *   same 304.
 * - Everything else (other methods, unknown URLs, debug logging, every request once the server
 *   is closing) goes to Fastify.
 *
 * Recordings are bounded like the answer cache, by count and by body bytes; they hold their
 * answer weakly, so the cache alone decides how long an answer lives.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { LRUCache } from 'lru-cache'
import { ifNoneMatchHas } from '../http/etag.js'

export interface Recording {
  /** Counts an answer in the metrics of the route. */
  count: (status: 200 | 304, seconds: number) => void
  /** The cached answer the body renders. */
  answer: WeakRef<object>
  body: Buffer
  etag: string
  /** Name, value, name, value…: the allow-listed headers as recorded (but Content-Length, which a 304 leaves out). */
  headers: string[]
  /** Request headers named in the response's Vary, and their values when recorded. */
  vary: Array<[string, string | string[] | undefined]>
  /** Whether the route counts in the rate limit. */
  rateLimited: boolean
}

/** A request's count in the rate limit, as both paths report it. */
export interface RateDecision {
  allowed: boolean
  limit: number
  /** The client's requests left in its window. */
  remaining: number
  /** Whole seconds until its window ends. */
  resetSeconds: number
}

/** What the fast path needs from the rest of the service, given once the plugins are registered. */
export interface FastPathLinks {
  /** The client's word on whether an answer is still its fresh cached one (counts a hit). */
  isFreshAnswer: (answer: object) => boolean
  /** Counts `request` in the rate limit, and keeps the count on it for Fastify's hook; later when counts are in Redis. */
  countRequest: (request: IncomingMessage) => RateDecision | Promise<RateDecision>
  requestId: (request: IncomingMessage) => string
}

export class FastPath {
  /** Off while successes are logged (each must go through Fastify), and until linked. */
  enabled = false
  /** Where an unexpected failure of serve() is reported (the app's log). */
  onError: (err: unknown) => void = () => {}
  readonly #recordings: LRUCache<string, Recording>
  readonly #maxBytes: number
  #links: FastPathLinks | undefined

  constructor (options: { maxEntries: number, maxBytes: number }) {
    this.#maxBytes = options.maxBytes
    this.#recordings = new LRUCache({ max: options.maxEntries, maxSize: options.maxBytes, sizeCalculation: recording => Math.max(1, recording.body.length) })
  }

  link (links: FastPathLinks): void {
    this.#links = links
  }

  record (url: string, recording: Recording): void {
    if (recording.body.length <= this.#maxBytes) this.#recordings.set(url, recording)
  }

  get size (): number {
    return this.#recordings.size
  }

  /**
   * Answers `request` from a recording and returns true, or returns false for Fastify to answer
   * it; a promise of either while the rate limit's count is on its way from Redis.
   */
  serve (request: IncomingMessage, response: ServerResponse): boolean | Promise<boolean> {
    const links = this.#links
    // Without Host, an HTTP/1.1 request is refused by Fastify (http/unrouted.ts).
    if (!this.enabled || links === undefined || request.method !== 'GET' || request.headers.host === undefined) return false
    const url = request.url as string
    const recording = this.#recordings.get(url)
    if (recording === undefined) return false
    if (recording.vary.length > 0 && !recording.vary.every(([name, value]) => request.headers[name] === value)) return false
    const started = performance.now()
    // Counted first, and kept on the request: should Fastify answer after all (a 429, or an
    // answer that is no longer fresh), its hook reads this count rather than count again.
    const decision = recording.rateLimited ? links.countRequest(request) : undefined
    if (decision instanceof Promise) return decision.then(counted => this.#replay(links, request, response, url, recording, counted, started))
    return this.#replay(links, request, response, url, recording, decision, started)
  }

  #replay (links: FastPathLinks, request: IncomingMessage, response: ServerResponse, url: string, recording: Recording, decision: RateDecision | undefined, started: number): boolean {
    if (decision?.allowed === false) return false
    const answer = recording.answer.deref()
    if (answer === undefined || !links.isFreshAnswer(answer)) {
      this.#recordings.delete(url)
      return false
    }
    const headers = [...recording.headers, 'x-request-id', links.requestId(request)]
    if (decision !== undefined) {
      headers.push(
        'x-ratelimit-limit', String(decision.limit),
        'x-ratelimit-remaining', String(decision.remaining),
        'x-ratelimit-reset', String(decision.resetSeconds))
    }
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
