/**
 * The answer cache's second level, in Redis, shared by every instance: an answer one instance
 * fetched serves the others until its time to live ends, and identical calls in flight on several
 * instances make one upstream call.
 *
 * How a call that missed the in-process cache goes (one round trip, a script, so that no two
 * instances can both see "no answer" and "no lease"):
 * 1. the answer is in Redis: use it, for what is left of its time to live;
 * 2. else take the call's lease (SET NX with an expiry): this instance fetches, stores the answer
 *    (if it fits) and publishes that it is there, or publishes that it failed (a failure is never
 *    shared as an answer);
 * 3. else another instance holds the lease: follow it, waiting for its notification (pub/sub), looking again at least
 *    every POLL_MS in case a message was lost, and no longer than the call's deadline allows for
 *    a fetch of its own. If the holder dies, its lease expires and a waiter takes it over.
 * Whenever Redis cannot answer within its budget, the call simply goes to the nodes.
 */
import { createHash, randomUUID } from 'node:crypto'
import type { Loaded } from '../cache.js'
import type { RedisLink, RedisScript } from './redis-link.js'

/** How the second level served a call, for metrics. */
export type SharedOutcome = 'hit' | 'miss' | 'joined' | 'unshared'

/** One call that missed the in-process cache. */
export interface SharedCall {
  method: string
  /** The in-process cache's key: method and canonical params. */
  key: string
  /** The method's time to live, in milliseconds. */
  ttlMs: number
  /** For answers that depend on the chain tip: the best height known, part of the key. */
  height?: number | undefined
  /** Asked once the answer is in: false when it must not be kept (a new block came meanwhile). */
  keep: () => boolean
}

/** What the second level gives: the answer, and how long it stays fresh if it came from Redis. */
export type SharedLoaded<T> = Loaded<T> & { freshForMs?: number }

/** Fetches the answer upstream, within `deadlineMs` when given (what is left of the call's). */
export type Fetch<T> = (deadlineMs?: number) => Promise<Loaded<T>>

export interface SharedAnswersOptions {
  link: RedisLink
  /** The call's deadline, in milliseconds: no wait for another instance outlasts it; also the lease's length. */
  deadlineMs: number
  /** What a fetch of its own needs at least; a waiter stops waiting when only this is left. */
  fetchReserveMs: number
  /** Largest answer shared, in bytes of JSON; larger ones stay in-process. Default 1 MiB. */
  maxValueBytes?: number
  clock?: () => number
  onLookup?: ((method: string, outcome: SharedOutcome) => void) | undefined
}

/** Longest a waiter goes without looking at Redis again. */
const POLL_MS = 250
const CHANNEL = 'answers'
/** Said on the channel when the lease holder could not (or would not) store an answer. */
const NOT_STORED = '!'

/**
 * The answer, or the lease: keys (answerKey, leaseKey), arguments (leaseToken, leaseMs). Replies
 * {FOUND, answer, its time to live}, {LEASED} (this call is the lease holder), or {HELD, the
 * lease's time to live} (another instance holds it: follow).
 */
const LOOKUP = `
local answerKey, leaseKey = KEYS[1], KEYS[2]
local leaseToken, leaseMs = ARGV[1], ARGV[2]
local answer = redis.call('GET', answerKey)
if answer then return {1, answer, redis.call('PTTL', answerKey)} end
if redis.call('SET', leaseKey, leaseToken, 'NX', 'PX', leaseMs) then return {2} end
return {0, redis.call('PTTL', leaseKey)}`

/**
 * The lease holder's last step: keys (answerKey, leaseKey), arguments (answer or '' for none,
 * ttlMs, leaseToken, channel, notification). Stores the answer, releases the lease if it is still
 * this holder's, and notifies the followers.
 */
const SETTLE = `
local answerKey, leaseKey = KEYS[1], KEYS[2]
local answer, ttlMs, leaseToken, channel, notification = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
if answer ~= '' then redis.call('SET', answerKey, answer, 'PX', ttlMs) end
if redis.call('GET', leaseKey) == leaseToken then redis.call('DEL', leaseKey) end
redis.call('PUBLISH', channel, notification)
return 1`

const FOUND = 1
const LEASED = 2
/** A call's lease in Redis: its keys, this holder's token, and the call's id (the channel's notification). */
interface Lease { answerKey: string, leaseKey: string, token: string, id: string }

type LookupReply = [typeof FOUND, string, number] | [typeof LEASED] | [0, number]
/** What a follower learns from the lease holder: the answer was stored, or not; `none` when nothing came in time. */
type Notification = 'stored' | 'not stored' | 'none'

export class SharedAnswers {
  readonly #link: RedisLink
  readonly #deadlineMs: number
  readonly #fetchReserveMs: number
  readonly #maxValueBytes: number
  readonly #clock: () => number
  readonly #onLookup: SharedAnswersOptions['onLookup']
  readonly #lookup: RedisScript<LookupReply>
  readonly #settle: RedisScript<number>
  /** Followers per call id, woken by the channel. */
  readonly #followers = new Map<string, Set<(notification: Notification) => void>>()
  readonly #channel: string
  readonly #unsubscribe: () => void

  constructor (options: SharedAnswersOptions) {
    this.#link = options.link
    this.#deadlineMs = options.deadlineMs
    this.#fetchReserveMs = Math.min(options.fetchReserveMs, options.deadlineMs)
    this.#maxValueBytes = options.maxValueBytes ?? 1024 * 1024
    this.#clock = options.clock ?? (() => performance.now())
    this.#onLookup = options.onLookup
    this.#lookup = this.#link.script('lookup', 2, LOOKUP)
    this.#settle = this.#link.script('settle', 2, SETTLE)
    this.#channel = this.#link.keyPrefix + CHANNEL
    this.#unsubscribe = this.#link.subscribe(CHANNEL, message => this.#notify(message))
  }

  /** Stops listening (the link stays open: it is its owner's to close). */
  close (): void {
    this.#unsubscribe()
  }

  /** The answer of `call`: from Redis, from another instance's fetch, or from `fetch`. */
  async load<T> (call: SharedCall, fetch: Fetch<T>): Promise<SharedLoaded<T>> {
    if (!this.#link.available) return this.#fetchUnshared(call, fetch)
    const id = callId(call)
    const answerKey = `${this.#link.keyPrefix}answer:${id}`
    const leaseKey = `${this.#link.keyPrefix}lease:${id}`
    const token = randomUUID()
    const deadline = this.#clock() + this.#deadlineMs
    const left = (): number => Math.max(1, deadline - this.#clock())
    // Following before looking: a notification published between the lookup and the wait is not lost.
    const notifications = this.#follow(id)
    let waited = false
    try {
      for (;;) {
        const reply = await this.#lookup([answerKey, leaseKey], [token, this.#deadlineMs])
        // No answer within the budget: Redis may still run the lookup and give this call the
        // lease, so it settles as a holder would (the release waits behind the lookup).
        if (reply === undefined) return await this.#fetchAsLeaseHolder(call, fetch, { answerKey, leaseKey, token, id }, left(), 'unshared')
        if (reply[0] === FOUND) {
          const loaded = decode<T>(reply[1])
          if (loaded !== undefined) {
            this.#onLookup?.(call.method, waited ? 'joined' : 'hit')
            return { ...loaded, freshForMs: Math.max(0, reply[2]) }
          }
          // Unreadable (another version's format): fetch, and let the next store replace it.
          return this.#fetchUnshared(call, fetch, left())
        }
        if (reply[0] === LEASED) return await this.#fetchAsLeaseHolder(call, fetch, { answerKey, leaseKey, token, id }, left(), 'miss')
        const waitMs = Math.min(reply[1] > 0 ? reply[1] : POLL_MS, POLL_MS, deadline - this.#fetchReserveMs - this.#clock())
        if (waitMs <= 0 || !this.#link.listening) return this.#fetchUnshared(call, fetch, left())
        waited = true
        const notification = await notifications.next(waitMs)
        if (notification === 'not stored') return this.#fetchUnshared(call, fetch, left())
        // 'stored', or nothing yet: look again (the answer, or a lease its holder let lapse).
      }
    } finally {
      notifications.stop()
    }
  }

  /**
   * Fetches as the lease holder: stores the answer, releases the lease and says so. `unshared`:
   * the lookup went unanswered, so this call may hold the lease or not; it settles all the same,
   * even while the link backs off, or the lease would keep the others waiting until it expires.
   */
  async #fetchAsLeaseHolder<T> (call: SharedCall, fetch: Fetch<T>, lease: Lease, deadlineMs: number, outcome: 'miss' | 'unshared'): Promise<SharedLoaded<T>> {
    this.#onLookup?.(call.method, outcome)
    const { token, id } = lease
    const keys = [lease.answerKey, lease.leaseKey]
    const force = outcome === 'unshared'
    let loaded: Loaded<T>
    try {
      loaded = await fetch(deadlineMs)
    } catch (err) {
      await this.#settle(keys, ['', 0, token, this.#channel, NOT_STORED + id], force)
      throw err
    }
    const text = call.keep() ? encode(loaded) : undefined
    const stored = text !== undefined && Buffer.byteLength(text) <= this.#maxValueBytes
    // Awaited (within the budget): once a caller has the answer, every instance can have it too.
    await this.#settle(keys, [stored ? text : '', call.ttlMs, token, this.#channel, stored ? id : NOT_STORED + id], force)
    return loaded
  }

  #fetchUnshared<T> (call: SharedCall, fetch: Fetch<T>, deadlineMs?: number): Promise<SharedLoaded<T>> {
    this.#onLookup?.(call.method, 'unshared')
    return fetch(deadlineMs)
  }

  /** A lease holder's notification, from the channel, to the followers of its call. */
  #notify (message: string): void {
    const notStored = message.startsWith(NOT_STORED)
    const followers = this.#followers.get(notStored ? message.slice(1) : message)
    if (followers !== undefined) for (const wake of followers) wake(notStored ? 'not stored' : 'stored')
  }

  /** Notifications about call `id` from now on: `next(ms)` gives the first one not yet taken, or `none` after `ms`. */
  #follow (id: string): { next: (ms: number) => Promise<Notification>, stop: () => void } {
    let received: Notification | undefined
    let wake: ((notification: Notification) => void) | undefined
    const onNotification = (notification: Notification): void => {
      if (wake !== undefined) wake(notification)
      else received = notification
    }
    let followers = this.#followers.get(id)
    if (followers === undefined) this.#followers.set(id, followers = new Set())
    followers.add(onNotification)
    return {
      next: (ms) => {
        if (received !== undefined) {
          const notification = received
          received = undefined
          return Promise.resolve(notification)
        }
        return new Promise<Notification>(resolve => {
          const timer = setTimeout(() => { wake = undefined; resolve('none') }, ms)
          wake = notification => { clearTimeout(timer); wake = undefined; resolve(notification) }
        })
      },
      stop: () => {
        followers.delete(onNotification)
        if (followers.size === 0) this.#followers.delete(id)
      },
    }
  }
}

/** The call's name in Redis: readable method and height, and a digest of the params (bounded length). */
function callId (call: SharedCall): string {
  const digest = createHash('sha256').update(call.key).digest('base64url')
  return `${call.method}:${call.height ?? ''}:${digest}`
}

/** `bytes`, a newline, then the answer's JSON. */
function encode (loaded: Loaded<unknown>): string | undefined {
  try {
    return `${loaded.bytes}\n${JSON.stringify(loaded.value)}`
  } catch {
    return undefined
  }
}

function decode<T> (text: string): Loaded<T> | undefined {
  const newline = text.indexOf('\n')
  const bytes = Number(text.slice(0, newline))
  if (newline < 1 || !Number.isSafeInteger(bytes)) return undefined
  try {
    return { value: JSON.parse(text.slice(newline + 1)) as T, bytes }
  } catch {
    return undefined
  }
}
