/**
 * The connection to the Redis that several instances share, kept off the critical path: every
 * operation has a time budget and answers `undefined` instead of failing, so that a caller goes on
 * alone (its own cache, the nodes) whenever Redis is away, slow or refusing.
 *
 * - Commands are not queued while the connection is down: they are skipped at once.
 * - After a failed or timed-out operation, operations are skipped for `retryAfterMs`; then the next
 *   one tries again. A slow Redis costs one budget per `retryAfterMs`, not one per request.
 * - The connection comes back by itself (ioredis reconnects, and subscribes again).
 * - A second connection carries subscriptions (a subscribed connection can send nothing else).
 */
import { Redis } from 'ioredis'
import { backoffDelayMs, type BackoffOptions } from '../backoff.js'

export type RedisOutcome = 'ok' | 'error' | 'timeout' | 'skipped'

export interface RedisOperationEvent {
  /** What the caller named the operation (`lookup`, `store`, `rate`…), for metrics. */
  operation: string
  outcome: RedisOutcome
  /** Zero when skipped. */
  seconds: number
}

export interface RedisLinkOptions {
  /** `redis://[user:password@]host[:port][/db]`, or `rediss://` for TLS. */
  url: string
  /** Time budget of one operation, in milliseconds. Default 100. */
  timeoutMs?: number
  /** After a failed operation, operations are skipped for this long. Default 1000. */
  retryAfterMs?: number
  /** Prefix of every key and channel, so that several services can share one Redis. Default `pocketnet:`. */
  keyPrefix?: string
  /** Milliseconds on a monotonic clock, for `retryAfterMs`. Default performance.now. */
  clock?: () => number
  /** Called after every operation, for metrics. Must not throw. */
  onOperation?: (event: RedisOperationEvent) => void
  /** Called when the connection becomes ready or is lost, for logs. Must not throw. */
  onStateChange?: (state: 'ready' | 'down', err?: Error) => void
}

/**
 * A Lua script run on Redis with its keys and arguments; `undefined` when Redis could not answer.
 * `evenWhileBackingOff`: tried whenever connected, for a write that must not be left out.
 */
export type RedisScript<T> = (keys: string[], args: Array<string | number>, evenWhileBackingOff?: boolean) => Promise<T | undefined>

const DEFAULT_TIMEOUT_MS = 100
const DEFAULT_RETRY_AFTER_MS = 1000
/** Reconnection delay after the n-th failed attempt: quick at first (100 ms more each time), then every two seconds. */
export const REDIS_RECONNECT_BACKOFF: BackoffOptions = { minMs: 100, maxMs: 2000, growth: 'linear', jitter: 'none' }

export class RedisLink {
  readonly keyPrefix: string
  readonly #commands: Redis
  readonly #subscriber: Redis
  readonly #clock: () => number
  readonly #retryAfterMs: number
  readonly #timeoutMs: number
  readonly #onOperation: RedisLinkOptions['onOperation']
  readonly #handlers = new Map<string, Set<(message: string) => void>>()
  #skipUntil = 0
  #scripts = 0
  #closed = false

  /**
   * Connects in the background: until the connection is ready, operations are skipped.
   * @throws TypeError when `url` is not a redis:// or rediss:// URL
   */
  constructor (options: RedisLinkOptions) {
    const url = parseRedisUrl(options.url)
    this.keyPrefix = options.keyPrefix ?? 'pocketnet:'
    this.#clock = options.clock ?? (() => performance.now())
    this.#retryAfterMs = options.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS
    this.#onOperation = options.onOperation
    const timeoutMs = this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
    this.#commands = new Redis(url.href, {
      // The budget is run()'s; this only frees commands a stalled server never answers.
      commandTimeout: Math.max(10 * timeoutMs, 1000),
      connectTimeout: Math.max(timeoutMs, 1000),
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: (attempt: number) => backoffDelayMs(attempt, REDIS_RECONNECT_BACKOFF),
      ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
    })
    // Subscriptions wait for the connection (they are not on any request's path).
    this.#subscriber = this.#commands.duplicate({ commandTimeout: undefined, enableOfflineQueue: true, maxRetriesPerRequest: null })
    const onState = options.onStateChange
    this.#commands.on('ready', () => onState?.('ready'))
    this.#commands.on('error', (err: Error) => onState?.('down', err))
    // Errors are reported once by the command connection; the subscriber's are the same news.
    this.#subscriber.on('error', () => {})
    this.#subscriber.on('message', (channel: string, message: string) => {
      for (const handler of this.#handlers.get(channel) ?? []) handler(message)
    })
  }

  /** Whether operations are being tried: connected, and not backing off after a failure. */
  get available (): boolean {
    return !this.#closed && this.#commands.status === 'ready' && this.#clock() >= this.#skipUntil
  }

  /** Whether messages published on subscribed channels are arriving. */
  get listening (): boolean {
    return !this.#closed && this.#subscriber.status === 'ready'
  }

  /** `ok`, or `degraded` while operations are skipped (for readiness checks). */
  get state (): 'ok' | 'degraded' {
    return this.available ? 'ok' : 'degraded'
  }

  /**
   * Runs `call` within the time budget; `undefined` if Redis is away, failed or was too slow.
   * `evenWhileBackingOff`: tried whenever connected, for a write that must not be left out.
   */
  async run<T> (operation: string, call: (redis: Redis) => Promise<T>, evenWhileBackingOff = false): Promise<T | undefined> {
    const connected = !this.#closed && this.#commands.status === 'ready'
    if (evenWhileBackingOff ? !connected : !this.available) {
      this.#onOperation?.({ operation, outcome: 'skipped', seconds: 0 })
      return undefined
    }
    const started = performance.now()
    const outcome = await withinBudget(call(this.#commands), this.#timeoutMs)
    this.#onOperation?.({ operation, outcome: outcome.kind, seconds: (performance.now() - started) / 1000 })
    if (outcome.kind === 'ok') return outcome.value
    this.#skipUntil = this.#clock() + this.#retryAfterMs
    return undefined
  }

  /** A Lua script, sent once and then run by its digest (ioredis's defineCommand). */
  script<T> (operation: string, numberOfKeys: number, lua: string): RedisScript<T> {
    const name = `pocketnetScript${this.#scripts++}`
    this.#commands.defineCommand(name, { numberOfKeys, lua })
    return (keys, args, evenWhileBackingOff) => this.run(operation, redis => {
      const command = (redis as unknown as Record<string, (...items: Array<string | number>) => Promise<T>>)[name] as (...items: Array<string | number>) => Promise<T>
      return command.call(redis, ...keys, ...args)
    }, evenWhileBackingOff)
  }

  /** Calls `handler` with each message published on `channel` (prefixed), from now on; returns what stops it. */
  subscribe (channel: string, handler: (message: string) => void): () => void {
    const name = this.keyPrefix + channel
    let handlers = this.#handlers.get(name)
    if (handlers === undefined) {
      this.#handlers.set(name, handlers = new Set())
      this.#subscriber.subscribe(name).catch(() => {})
    }
    handlers.add(handler)
    return () => { handlers.delete(handler) }
  }

  async close (): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    this.#handlers.clear()
    await Promise.all([this.#commands, this.#subscriber].map(connection =>
      connection.quit().catch(() => connection.disconnect())))
  }
}

type Outcome<T> = { kind: 'ok', value: T } | { kind: 'error' | 'timeout' }

/**
 * `promise`'s outcome, or a timeout once `budgetMs` has passed. When the timer fires, the answer
 * is given one more turn of the event loop before the operation counts as timed out: on a busy
 * process the timer can fire late, in the same turn as the reply it would otherwise overtake,
 * which is the process's lag and not Redis's. setImmediate runs after the turn's I/O is read.
 */
function withinBudget<T> (promise: Promise<T>, budgetMs: number): Promise<Outcome<T>> {
  return new Promise(resolve => {
    let settled = false
    const settle = (outcome: Outcome<T>): void => {
      if (!settled) resolve(outcome)
      settled = true
    }
    const timer = setTimeout(() => setImmediate(() => settle({ kind: 'timeout' })), budgetMs)
    promise.then(value => {
      clearTimeout(timer)
      settle({ kind: 'ok', value })
    }, (err: unknown) => {
      clearTimeout(timer)
      settle({ kind: err instanceof Error && /timed out/i.test(err.message) ? 'timeout' : 'error' })
    })
  })
}

/**
 * `value` as a Redis URL: `redis://` or `rediss://`, a host, an optional port, and an optional
 * database number as the path.
 * @throws TypeError otherwise, without repeating the value (it may hold a password)
 */
export function parseRedisUrl (value: string): URL {
  let url: URL | undefined
  try {
    url = new URL(value)
  } catch {}
  if (url === undefined || (url.protocol !== 'redis:' && url.protocol !== 'rediss:') || url.hostname === '' ||
    !/^(\/\d{0,2})?$/.test(url.pathname) || url.search !== '' || url.hash !== '') {
    throw new TypeError('Redis URL must be redis://[user:password@]host[:port][/db] or rediss://… for TLS')
  }
  return url
}
