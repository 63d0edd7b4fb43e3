/**
 * `app.notifications` (docs/notifications.md): the users' opt-in to a channel, and `send`, which
 * decides every recipient in one transaction (notification-store.ts), queues a delivery per
 * accepted one in the outbox, wakes the push sender and waits a bounded time for first outcomes.
 *
 * What a recipient's status means once `send` resolves:
 * - `sent`: its push was delivered to the proxy (HTTP 200, `result: success`).
 * - `queued`: accepted and stored, not delivered yet when the wait ended (a retry is scheduled,
 *   or another instance holds it): it will be delivered or given up later, without another send.
 * - `failed`: accepted, then given up within the wait (the proxy refused it on every attempt).
 * - `not_registered`, `duplicate`, `rate_limited`: nothing was queued for this recipient.
 *
 * Delivery is the outbox's (src/outbox/outbox-consumer.ts): at least once, across crashes and
 * instances. The proxy has no idempotency key, so a crash between its 200 and our acknowledgement
 * pushes that one notification again once the claim's lease lapses.
 *
 * The database opens on the first call, or at start when it exists already (a delivery left
 * pending by a crash can only be in a database that exists): the push sender starts with it.
 */
import { setMaxListeners } from 'node:events'
import { REAL_TIMERS, type PocketnetNetwork, type Timers } from 'pocketnet-client'
import type { Database } from '../db/database.js'
import { OutboxConsumer } from '../outbox/outbox-consumer.js'
import { RetryPolicy, type RetryDecision, type RetrySchedule } from '../outbox/retry-policy.js'
import { proxiesToTry, pushThroughFirstProxy } from './bastyon-push.js'
import { NotificationError } from './notification-errors.js'
import { checkNotification, proxyOrigin, type NotificationInput } from './notification-rules.js'
import { NotificationStore, type Channel, type DeliveryBacklog, type DeliveryRow, type DeliveryStatus, type NotificationLimits } from './notification-store.js'

/** A recipient's outcome of one send. */
export type SendStatus = 'sent' | 'queued' | 'failed' | 'not_registered' | 'duplicate' | 'rate_limited'
export const SEND_STATUSES: readonly SendStatus[] = ['sent', 'queued', 'failed', 'not_registered', 'duplicate', 'rate_limited']

export interface SendResult {
  /** One per address of `to`, in its order. */
  results: Array<{ address: string, status: SendStatus }>
}

/** A user's channel as the API shows it. */
export interface ChannelView {
  channel: 'bastyon'
  /** The proxy's origin. */
  proxy: string
  /** When the user opted in (ISO 8601). */
  since: string
}

/** The Bastyon push channel's consumer of the outbox. */
export const BASTYON_CHANNEL = 'bastyon'

/** The push retries: 5 s, then doubling to 10 min at most, given up after the 8th failed attempt (about 21 min in all). */
export const PUSH_RETRY: RetrySchedule = { firstDelayMs: 5000, maxDelayMs: 600_000, jitter: 0.2, maxAttempts: 8 }

/** What a claim's lease adds to the push's timeout. */
export const LEASE_MARGIN_MS = 5000

/** The logger's part the service uses (pino's signature). */
export interface NotificationsLog {
  info (fields: object, message: string): void
  warn (fields: object, message: string): void
  error (fields: object, message: string): void
}

export interface NotificationsServiceOptions {
  /** The mini-app's id (BASTYON_APP_ID): the proxy finds the user's token by it. */
  appId: string
  network: PocketnetNetwork
  /** The proxies' origins a user may name (NOTIFY_BASTYON_PROXIES). */
  proxies: string[]
  limits?: Partial<NotificationLimits>
  /** How long `send` waits for first outcomes before answering `queued`. Default 2000 ms; 0 does not wait. */
  waitMs?: number
  /** How long one push may take. Default 10 s. */
  timeoutMs?: number
  /** Default {@link PUSH_RETRY}. */
  retry?: Partial<RetrySchedule>
  /** Deliveries pushed at once. Default 50. */
  batchSize?: number
  /** The longest the sender sleeps between looks at the outbox. Default 60 s. */
  pollMs?: number
  /** Milliseconds since the epoch. Default Date.now. */
  now?: () => number
  timers?: Timers
  /** In [0, 1), the retries' jitter. Default Math.random. */
  random?: () => number
  log: NotificationsLog
}

/** What this instance did since it started: the metrics read it. */
export interface NotificationCounts {
  /** Recipients of `send` by status. */
  results: Record<SendStatus, number>
  /** Push attempts by outcome. */
  delivered: number
  failed: number
  givenUp: number
}

type Outcome = 'delivered' | 'given_up'

interface Running {
  store: NotificationStore
  consumer: OutboxConsumer<DeliveryRow>
}

export class NotificationsService {
  readonly counts: NotificationCounts = { results: { sent: 0, queued: 0, failed: 0, not_registered: 0, duplicate: 0, rate_limited: 0 }, delivered: 0, failed: 0, givenUp: 0 }
  readonly proxies: readonly string[]
  readonly #open: () => Promise<Database>
  readonly #options: NotificationsServiceOptions
  readonly #timers: Timers
  readonly #waitMs: number
  readonly #log: NotificationsLog
  /** Sends waiting for the outcome of a delivery of this instance's. */
  readonly #waiters = new Map<number, (outcome: Outcome) => void>()
  #running: Promise<Running> | undefined
  #closed = false

  constructor (open: () => Promise<Database>, options: NotificationsServiceOptions) {
    this.#open = open
    this.#options = options
    this.proxies = [...options.proxies]
    this.#timers = options.timers ?? REAL_TIMERS
    this.#waitMs = options.waitMs ?? 2000
    this.#log = options.log
  }

  /**
   * Records that `address` registered for notifications with the host: one of {@link proxies} holds
   * the user's token. The host does not say which, so pushes try `proxy` (default: the first of
   * them) first, then the others (bastyon-push.ts). NotificationError NOTIFY_ERR_PROXY_NOT_ALLOWED
   * unless `proxy` is one of {@link proxies}.
   */
  async register (address: string, proxy: string | undefined = this.proxies[0]): Promise<ChannelView> {
    const origin = proxy === undefined ? undefined : proxyOrigin(proxy)
    if (origin === undefined || !this.proxies.includes(origin)) {
      if (proxy === undefined) throw new NotificationError('NOTIFY_ERR_PROXY_NOT_ALLOWED', 'no proxy is configured to send to (NOTIFY_BASTYON_PROXIES)')
      throw new NotificationError('NOTIFY_ERR_PROXY_NOT_ALLOWED', `proxy must be one of the proxies this service sends to (${this.proxies.join(', ') || 'none configured'}), got ${JSON.stringify(proxy.slice(0, 100))}`)
    }
    return view(await (await this.#start()).store.register(address, BASTYON_CHANNEL, origin))
  }

  /** The user opts out: false when they had not opted in. What waits to reach them is dropped. */
  async unregister (address: string): Promise<boolean> {
    return await (await this.#start()).store.unregister(address, BASTYON_CHANNEL)
  }

  async channels (address: string): Promise<ChannelView[]> {
    return (await (await this.#start()).store.channels(address)).filter(channel => channel.channel === BASTYON_CHANNEL).map(view)
  }

  /** The user leaves (DELETE /api/me): every channel, key and pending delivery of theirs goes. */
  async deleteUser (address: string): Promise<{ channels: number }> {
    return await (await this.#start()).store.deleteUser(address)
  }

  /**
   * Sends one notification to each address of `to` that opted in (see the statuses above).
   * NotificationError (400) when the input breaks a rule: nothing is sent then.
   */
  async send (input: NotificationInput, options: { waitMs?: number } = {}): Promise<SendResult> {
    const notification = checkNotification(input, this.#options.network)
    const { store, consumer } = await this.#start()
    const decisions = await store.enqueue(notification)
    const ids = decisions.flatMap(decision => decision.status === 'accepted' ? decision.deliveryIds : [])
    const outcomes = this.#await(ids)
    if (ids.length > 0) consumer.wake()
    const known = await this.#settle(store, ids, outcomes, options.waitMs ?? this.#waitMs)
    const results = decisions.map(decision => {
      if (decision.status !== 'accepted') {
        this.#log.info({ notificationId: notification.id, address: decision.address, status: decision.status, ...(decision.reason === undefined ? {} : { reason: decision.reason }) }, 'Notifications: a recipient was refused')
        return { address: decision.address, status: decision.status }
      }
      return { address: decision.address, status: statusOf(decision.deliveryIds.map(id => known.get(id))) }
    })
    for (const { status } of results) this.counts.results[status]++
    return { results }
  }

  async backlog (): Promise<DeliveryBacklog | undefined> {
    if (this.#running === undefined) return undefined
    return await (await this.#running).store.backlog(BASTYON_CHANNEL)
  }

  /** Opens the database and starts the push sender, once; every call waits for it. */
  async start (): Promise<void> {
    await this.#start()
  }

  /** Resolves once the push sender has nothing in hand (tests). */
  async whenIdle (): Promise<void> {
    if (this.#running !== undefined) await (await this.#running).consumer.whenIdle()
  }

  /** Stops the sender: pushes in flight are aborted and their deliveries put back, due at once. */
  async close (): Promise<void> {
    this.#closed = true
    const running = await this.#running?.catch(() => undefined)
    await running?.consumer.close()
  }

  #start (): Promise<Running> {
    if (this.#closed) return Promise.reject(new Error('notifications are closed: the app is closing'))
    this.#running ??= this.#open().then(db => this.#run(db)).catch((err: unknown) => {
      // The next call tries again (a server that was down may be up).
      this.#running = undefined
      throw err
    })
    return this.#running
  }

  #run (db: Database): Running {
    const options = this.#options
    const store = new NotificationStore(db, { now: options.now, limits: options.limits })
    const timeoutMs = options.timeoutMs ?? 10_000
    const batchSize = options.batchSize ?? 50
    const consumer = new OutboxConsumer<DeliveryRow>({
      consumer: BASTYON_CHANNEL,
      outbox: store,
      handle: async (row, shutdown) => {
        // Each push of a batch listens for the shutdown at once: more than Node's warning threshold.
        setMaxListeners(batchSize + 10, shutdown)
        try {
          const took = await pushThroughFirstProxy(row, proxiesToTry(row.target, this.proxies), shutdown, { appId: options.appId, timeoutMs, timers: this.#timers })
          // The user's token is there: the next pushes go there first.
          if (took !== row.target) await store.retarget(row.address, BASTYON_CHANNEL, row.target, took).catch(() => {})
        } catch (err) {
          if (!shutdown.aborted) await store.noteError(row.id, describe(err)).catch(() => {})
          throw err
        }
      },
      retry: new RetryPolicy({ ...PUSH_RETRY, ...options.retry }, options.random ?? Math.random),
      batchSize,
      // Each push is its own POST, to its user's proxy.
      inParallel: true,
      // Longer than an attempt (through every proxy, at worst) and its acknowledgement (one
      // UPDATE): no other instance pushes it meanwhile, and a push in hand when the process died
      // goes out again soon after.
      leaseMs: timeoutMs * Math.max(1, this.proxies.length) + LEASE_MARGIN_MS,
      pollMs: options.pollMs ?? 60_000,
      ...(options.now === undefined ? {} : { now: options.now }),
      timers: this.#timers,
      onDelivered: row => {
        this.counts.delivered++
        this.#waiters.get(row.id)?.('delivered')
      },
      onFailed: (row, err, decision) => { this.#failed(row, err, decision) },
      onPutBack: row => { this.#log.info(logged(row), 'Notifications: a push was cut short by the shutdown; it is sent again at the next start') },
      onOutboxError: (err, row) => {
        this.#log.warn({ ...(row === undefined ? {} : logged(row)), err: { message: describe(err) } }, 'Notifications: the outbox could not be read or written; it is tried again later')
      },
    })
    consumer.wake()
    return { store, consumer }
  }

  #failed (row: DeliveryRow, err: unknown, decision: RetryDecision): void {
    this.counts.failed++
    if (decision.giveUp) {
      this.counts.givenUp++
      this.#log.error({ ...logged(row), error: describe(err) }, 'Notifications: a push was given up after its last attempt')
      this.#waiters.get(row.id)?.('given_up')
      return
    }
    this.#log.warn({ ...logged(row), error: describe(err), retryInMs: decision.retryInMs }, 'Notifications: a push failed; it is tried again later')
  }

  /** A promise per delivery of its outcome here, registered before the sender can report it. */
  #await (ids: number[]): Map<number, Promise<Outcome>> {
    return new Map(ids.map(id => [id, new Promise<Outcome>(resolve => {
      this.#waiters.set(id, outcome => {
        this.#waiters.delete(id)
        resolve(outcome)
      })
    })]))
  }

  /** Waits up to `waitMs` for every outcome, then reads what is still unknown (another instance's work) from the database. */
  async #settle (store: NotificationStore, ids: number[], outcomes: Map<number, Promise<Outcome>>, waitMs: number): Promise<Map<number, DeliveryStatus>> {
    const known = new Map<number, DeliveryStatus>()
    for (const [id, outcome] of outcomes) outcome.then(value => { known.set(id, value) }, () => {})
    if (ids.length > 0 && waitMs > 0) {
      let timer
      await Promise.race([
        Promise.all(outcomes.values()),
        new Promise<void>(resolve => { timer = this.#timers.setTimeout(resolve, waitMs) }),
      ])
      this.#timers.clearTimeout(timer)
      // Outcomes reported in the same turn as the deadline.
      await Promise.resolve()
    }
    for (const id of ids) this.#waiters.delete(id)
    const unknown = ids.filter(id => !known.has(id))
    if (unknown.length > 0) for (const [id, status] of await store.statuses(unknown)) known.set(id, status)
    return known
  }
}

/** A recipient's status from its deliveries' (one per channel): delivered anywhere is sent, given up everywhere is failed. */
function statusOf (statuses: Array<DeliveryStatus | undefined>): SendStatus {
  if (statuses.includes('delivered')) return 'sent'
  if (statuses.length > 0 && statuses.every(status => status === 'given_up')) return 'failed'
  return 'queued'
}

function view (channel: Channel): ChannelView {
  return { channel: 'bastyon', proxy: channel.target, since: new Date(channel.createdAtMs).toISOString() }
}

/** What a log line says of a delivery: never its header (the app's text to the user). */
function logged (row: DeliveryRow): object {
  return { deliveryId: row.id, notificationId: row.notificationId, address: row.address, proxy: row.target, attempt: row.attempts }
}

function describe (err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
