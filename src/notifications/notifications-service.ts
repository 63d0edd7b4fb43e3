/**
 * `app.notifications` (docs/notifications.md): the users' opt-in to a channel (a push through
 * their Bastyon proxy; a Telegram chat linked through the app's bot, when it has one), and `send`,
 * which decides every recipient in one transaction (notification-store.ts), queues a delivery per
 * accepted one and channel of theirs in the outbox, wakes the senders and waits a bounded time for
 * first outcomes.
 *
 * What a recipient's status means once `send` resolves:
 * - `sent`: a delivery of theirs was made: the push reached the proxy (HTTP 200, `result:
 *   success`), or the message their Telegram chat.
 * - `queued`: accepted and stored, not delivered yet when the wait ended (a retry is scheduled,
 *   or another instance holds it): it will be delivered or given up later, without another send.
 * - `failed`: accepted, then given up within the wait on every channel of theirs.
 * - `not_registered`, `duplicate`, `rate_limited`: nothing was queued for this recipient.
 *
 * Delivery is the outbox's (src/outbox/outbox-consumer.ts), a consumer per channel: at least once,
 * across crashes and instances. Neither the proxy nor Telegram has an idempotency key, so a crash
 * between its answer and our acknowledgement sends that one notification again once the claim's
 * lease lapses.
 *
 * The database opens on the first call, or at start when it exists already (a delivery left
 * pending by a crash can only be in a database that exists): the senders start with it, and the
 * retention (delivery-retention.ts), which deletes settled deliveries past `retentionMs`.
 */
import { setMaxListeners } from 'node:events'
import { REAL_TIMERS, type PocketnetNetwork, type Timers } from 'pocketnet-client'
import type { Database } from '../db/database.js'
import { OutboxConsumer, type OutboxConsumerOptions } from '../outbox/outbox-consumer.js'
import { RetryPolicy, type RetryDecision, type RetrySchedule } from '../outbox/retry-policy.js'
import { proxiesToTry, pushThroughFirstProxy } from './bastyon-push.js'
import { DeliveryRetention } from './delivery-retention.js'
import { NotificationError } from './notification-errors.js'
import { checkNotification, proxyOrigin, type NotificationInput } from './notification-rules.js'
import { NotificationStore, type Channel, type ChannelName, type DeliveryBacklog, type DeliveryRow, type DeliveryStatus, type NotificationLimits } from './notification-store.js'
import { BotApiError } from './telegram/bot-api-errors.js'
import { telegramRetryDecision, type TelegramChannel, type TelegramLink } from './telegram/telegram-channel.js'
import type { WebhookRequest } from './telegram/webhook-update.js'

/** A recipient's outcome of one send. */
export type SendStatus = 'sent' | 'queued' | 'failed' | 'not_registered' | 'duplicate' | 'rate_limited'
export const SEND_STATUSES: readonly SendStatus[] = ['sent', 'queued', 'failed', 'not_registered', 'duplicate', 'rate_limited']

export interface SendResult {
  /** One per address of `to`, in its order. */
  results: Array<{ address: string, status: SendStatus }>
}

/**
 * A user's channel as the API shows it. A Telegram channel does not show its chat's id: the
 * user knows their own chat, and the id (the same for every bot the user talks to) is of no use
 * to the app's page, so it stays on the server like the rest of what the service sends to.
 */
export type ChannelView = BastyonChannelView | TelegramChannelView

export interface BastyonChannelView {
  channel: 'bastyon'
  /** The proxy's origin. */
  proxy: string
  /** When the user opted in (ISO 8601). */
  since: string
}

export interface TelegramChannelView {
  channel: 'telegram'
  /** When the user first linked a chat (ISO 8601). */
  since: string
}

/** The Bastyon push channel's consumer of the outbox. */
export const BASTYON_CHANNEL = 'bastyon'
/** The Telegram channel's consumer of the outbox. */
export const TELEGRAM_CHANNEL = 'telegram'

/** Sends to Telegram at once: about what Telegram lets a bot send in a second, to all chats. */
const TELEGRAM_BATCH_SIZE = 30

/** The push retries: 5 s, then doubling to 10 min at most, given up after the 8th failed attempt (about 21 min in all). */
export const PUSH_RETRY: RetrySchedule = { firstDelayMs: 5000, maxDelayMs: 600_000, jitter: 0.2, maxAttempts: 8 }

/** How long a settled delivery is kept by default: 30 days, as an expired invoice. */
export const DEFAULT_RETENTION_MS = 30 * 86_400_000

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
  /** How long a delivered or given-up delivery is kept (NOTIFY_RETENTION_S). Default 30 days. */
  retentionMs?: number
  /** Between two deletions of what is past the retention. Default 10 minutes. */
  retentionIntervalMs?: number
  /** Milliseconds since the epoch. Default Date.now. */
  now?: () => number
  timers?: Timers
  /** In [0, 1), the retries' jitter. Default Math.random. */
  random?: () => number
  /** The Telegram channel, when the app has a bot (TELEGRAM_BOT_TOKEN). */
  telegram?: TelegramChannel
  log: NotificationsLog
}

/** Delivery attempts of one channel by outcome. */
export interface DeliveryCounts {
  delivered: number
  /** Attempts that failed: retried later unless it was the last. */
  failed: number
  givenUp: number
}

/** What this instance did since it started: the metrics read it. */
export interface NotificationCounts {
  /** Recipients of `send` by status. */
  results: Record<SendStatus, number>
  /** Delivery attempts by channel and outcome. */
  deliveries: Record<ChannelName, DeliveryCounts>
  /** Settled deliveries deleted past the retention. */
  pruned: number
}

/** What became of a Telegram update (POST /api/telegram/webhook): `unauthorized` is a 401, the rest 200. */
export type TelegramUpdateOutcome = 'unauthorized' | 'linked' | 'refused' | 'answered' | 'ignored'

type Outcome = 'delivered' | 'given_up'

interface Running {
  store: NotificationStore
  consumers: Array<OutboxConsumer<DeliveryRow>>
  retention: DeliveryRetention
}

export class NotificationsService {
  readonly counts: NotificationCounts = {
    results: { sent: 0, queued: 0, failed: 0, not_registered: 0, duplicate: 0, rate_limited: 0 },
    deliveries: { bastyon: { delivered: 0, failed: 0, givenUp: 0 }, telegram: { delivered: 0, failed: 0, givenUp: 0 } },
    pruned: 0,
  }

  readonly proxies: readonly string[]
  /** The channels this service delivers through: bastyon, and telegram when the app has a bot. */
  readonly channelNames: readonly ChannelName[]
  readonly #telegram: TelegramChannel | undefined
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
    this.#telegram = options.telegram
    this.channelNames = options.telegram === undefined ? [BASTYON_CHANNEL] : [BASTYON_CHANNEL, TELEGRAM_CHANNEL]
  }

  /** The Telegram channel, while the app has a bot. */
  get telegram (): TelegramChannel | undefined {
    return this.#telegram
  }

  /**
   * Records that `address` registered for notifications with the host: one of {@link proxies} holds
   * the user's token. The host does not say which, so pushes try `proxy` (default: the first of
   * them) first, then the others (bastyon-push.ts). NotificationError NOTIFY_ERR_PROXY_NOT_ALLOWED
   * unless `proxy` is one of {@link proxies}.
   */
  async register (address: string, proxy: string | undefined = this.proxies[0]): Promise<BastyonChannelView> {
    const origin = proxy === undefined ? undefined : proxyOrigin(proxy)
    if (origin === undefined || !this.proxies.includes(origin)) {
      if (proxy === undefined) throw new NotificationError('NOTIFY_ERR_PROXY_NOT_ALLOWED', 'no proxy is configured to send to (NOTIFY_BASTYON_PROXIES)')
      throw new NotificationError('NOTIFY_ERR_PROXY_NOT_ALLOWED', `proxy must be one of the proxies this service sends to (${this.proxies.join(', ') || 'none configured'}), got ${JSON.stringify(proxy.slice(0, 100))}`)
    }
    const channel = await (await this.#start()).store.register(address, BASTYON_CHANNEL, origin)
    return { channel: 'bastyon', proxy: channel.target, since: new Date(channel.createdAtMs).toISOString() }
  }

  /** The user opts out: false when they had not opted in. What waits to reach them is dropped. */
  async unregister (address: string): Promise<boolean> {
    return await (await this.#start()).store.unregister(address, BASTYON_CHANNEL)
  }

  async channels (address: string): Promise<ChannelView[]> {
    return (await (await this.#start()).store.channels(address)).filter(channel => this.channelNames.includes(channel.channel)).map(view)
  }

  /**
   * A deep link that links the Telegram chat it is opened in to `address` (once, before it
   * expires). Throws when the app has no bot.
   */
  telegramLink (address: string): TelegramLink {
    return this.#telegramChannel().link(address, (this.#options.now ?? Date.now)())
  }

  /** The user unlinks their Telegram chat: false when none was linked. What waits to reach it is dropped. */
  async unlinkTelegram (address: string): Promise<boolean> {
    this.#telegramChannel()
    return await (await this.#start()).store.unregister(address, TELEGRAM_CHANNEL)
  }

  /**
   * A request to the bot's webhook: `unauthorized` unless its secret header is the webhook's.
   * `/start <token>` in a private chat links the chat when the token is valid and unused (its
   * nonce recorded with the link, in one transaction), and the bot answers the chat either way;
   * another message gets how to link; the rest is ignored. Throws only when the database failed:
   * the route answers 500 and Telegram sends the update again.
   */
  async receiveTelegramUpdate (request: WebhookRequest): Promise<TelegramUpdateOutcome> {
    const telegram = this.#telegramChannel()
    const update = telegram.read(request)
    if (update.kind === 'unauthorized' || update.kind === 'ignored') return update.kind
    if (update.kind === 'other') {
      await this.#reply(update.chatId, telegram.howToLinkText())
      return 'answered'
    }
    const verified = telegram.verify(update.token, (this.#options.now ?? Date.now)())
    if (!verified.ok) {
      this.#log.info({ chatId: update.chatId, reason: verified.reason }, 'Notifications: a Telegram link was refused')
      await this.#reply(update.chatId, telegram.refusedText(verified.reason))
      return 'refused'
    }
    const { store } = await this.#start()
    const outcome = await store.linkTelegram({ address: verified.address, chatId: update.chatId, nonce: verified.nonce, expiresAtMs: verified.expiresAt })
    if (!outcome.linked) {
      this.#log.info({ chatId: update.chatId, address: verified.address, reason: outcome.reason }, 'Notifications: a Telegram link was refused')
      await this.#reply(update.chatId, telegram.refusedText(outcome.reason))
      return 'refused'
    }
    this.#log.info({ chatId: update.chatId, address: verified.address }, 'Notifications: a Telegram chat was linked')
    await this.#reply(update.chatId, telegram.linkedText())
    return 'linked'
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
    const { store, consumers } = await this.#start()
    const decisions = await store.enqueue(notification)
    const ids = decisions.flatMap(decision => decision.status === 'accepted' ? decision.deliveryIds : [])
    const outcomes = this.#await(ids)
    if (ids.length > 0) for (const consumer of consumers) consumer.wake()
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

  /** Deliveries not made, per channel this service delivers through; undefined until the database is open. */
  async backlog (): Promise<Map<ChannelName, DeliveryBacklog> | undefined> {
    if (this.#running === undefined) return undefined
    const { store } = await this.#running
    return new Map(await Promise.all(this.channelNames.map(async channel => [channel, await store.backlog(channel)] as const)))
  }

  /** Opens the database and starts the push sender, once; every call waits for it. */
  async start (): Promise<void> {
    await this.#start()
  }

  /** Resolves once the push sender has nothing in hand and no retention run is going on (tests). */
  async whenIdle (): Promise<void> {
    if (this.#running === undefined) return
    const { consumers, retention } = await this.#running
    for (const consumer of consumers) await consumer.whenIdle()
    await retention.whenIdle()
  }

  /** Stops the sender: pushes in flight are aborted and their deliveries put back, due at once. */
  async close (): Promise<void> {
    this.#closed = true
    const running = await this.#running?.catch(() => undefined)
    await Promise.all([...running?.consumers.map(consumer => consumer.close()) ?? [], running?.retention.close()])
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
    const store = new NotificationStore(db, { now: options.now, limits: options.limits, channels: this.channelNames })
    const consumers = [this.#bastyonConsumer(store)]
    if (this.#telegram !== undefined) consumers.push(this.#telegramConsumer(store, this.#telegram))
    for (const consumer of consumers) consumer.wake()
    const retention = new DeliveryRetention({
      store,
      retentionMs: options.retentionMs ?? DEFAULT_RETENTION_MS,
      ...(options.retentionIntervalMs === undefined ? {} : { intervalMs: options.retentionIntervalMs }),
      ...(options.now === undefined ? {} : { now: options.now }),
      timers: this.#timers,
      onPruned: deleted => {
        this.counts.pruned += deleted
        this.#log.info({ deleted }, 'Notifications: deliveries past the retention (NOTIFY_RETENTION_S) were deleted')
      },
      onError: err => { this.#log.warn({ err: { message: describe(err) } }, 'Notifications: deliveries past the retention could not be deleted; it is tried again at the next run') },
    })
    retention.start()
    return { store, consumers, retention }
  }

  #bastyonConsumer (store: NotificationStore): OutboxConsumer<DeliveryRow> {
    const options = this.#options
    const timeoutMs = options.timeoutMs ?? 10_000
    const batchSize = options.batchSize ?? 50
    return this.#consumer(store, BASTYON_CHANNEL, {
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
      batchSize,
      // Longer than an attempt (through every proxy, at worst) and its acknowledgement (one
      // UPDATE): no other instance pushes it meanwhile, and a push in hand when the process died
      // goes out again soon after.
      leaseMs: timeoutMs * Math.max(1, this.proxies.length) + LEASE_MARGIN_MS,
    })
  }

  #telegramConsumer (store: NotificationStore, telegram: TelegramChannel): OutboxConsumer<DeliveryRow> {
    const batchSize = Math.min(this.#options.batchSize ?? TELEGRAM_BATCH_SIZE, TELEGRAM_BATCH_SIZE)
    return this.#consumer(store, TELEGRAM_CHANNEL, {
      handle: async (row, shutdown) => {
        setMaxListeners(batchSize + 10, shutdown)
        try {
          await telegram.deliver(row, shutdown)
        } catch (err) {
          if (shutdown.aborted) throw err
          await store.noteError(row.id, describe(err)).catch(() => {})
          // The user blocked the bot or left Telegram: nothing will reach that chat again.
          if (err instanceof BotApiError && err.kind === 'unreachable') {
            const dropped = await store.dropChannel(row.address, TELEGRAM_CHANNEL, row.target, row.id).catch(() => false)
            if (dropped) this.#log.info(logged(row), 'Notifications: a Telegram chat can no longer be written to; its link was dropped')
          }
          throw err
        }
      },
      decide: (row, err, retry) => telegramRetryDecision(err, row.attempts, retry),
      batchSize,
      // One sendMessage and its acknowledgement.
      leaseMs: telegram.bot.timeoutMs + LEASE_MARGIN_MS,
    })
  }

  /** A consumer of `channel`'s deliveries, with what every channel shares: the retry schedule, the counts, the waiters, the logs. */
  #consumer (store: NotificationStore, channel: ChannelName, own: Pick<OutboxConsumerOptions<DeliveryRow>, 'handle' | 'decide' | 'batchSize' | 'leaseMs'>): OutboxConsumer<DeliveryRow> {
    const options = this.#options
    const counts = this.counts.deliveries[channel]
    return new OutboxConsumer<DeliveryRow>({
      ...own,
      consumer: channel,
      outbox: store,
      retry: new RetryPolicy({ ...PUSH_RETRY, ...options.retry }, options.random ?? Math.random),
      // Each delivery is its own call, to its user's proxy or chat.
      inParallel: true,
      pollMs: options.pollMs ?? 60_000,
      ...(options.now === undefined ? {} : { now: options.now }),
      timers: this.#timers,
      onDelivered: row => {
        counts.delivered++
        this.#waiters.get(row.id)?.('delivered')
      },
      onFailed: (row, err, decision) => { this.#failed(row, err, decision) },
      onPutBack: row => { this.#log.info(logged(row), 'Notifications: a delivery was cut short by the shutdown; it is sent again at the next start') },
      onOutboxError: (err, row) => {
        this.#log.warn({ ...(row === undefined ? {} : logged(row)), err: { message: describe(err) } }, 'Notifications: the outbox could not be read or written; it is tried again later')
      },
    })
  }

  #telegramChannel (): TelegramChannel {
    if (this.#telegram === undefined) throw new Error('Telegram is off: TELEGRAM_BOT_TOKEN is empty')
    return this.#telegram
  }

  /** The bot answers a chat; a failure is logged, never the webhook's (Telegram would send the update again). */
  async #reply (chatId: number, text: string): Promise<void> {
    try {
      await this.#telegramChannel().bot.sendMessage(chatId, text)
    } catch (err) {
      this.#log.warn({ chatId, error: describe(err) }, 'Notifications: the bot could not answer a chat')
    }
  }

  #failed (row: DeliveryRow, err: unknown, decision: RetryDecision): void {
    const counts = this.counts.deliveries[row.channel]
    counts.failed++
    if (err instanceof BotApiError && err.kind === 'invalid') {
      this.#log.error({ ...logged(row), error: describe(err) }, 'Notifications: Telegram refuses the bot\'s token (TELEGRAM_BOT_TOKEN wrong or revoked): nothing reaches Telegram until an operator fixes it')
    }
    if (decision.giveUp) {
      counts.givenUp++
      this.#log.error({ ...logged(row), error: describe(err) }, 'Notifications: a delivery was given up')
      this.#waiters.get(row.id)?.('given_up')
      return
    }
    this.#log.warn({ ...logged(row), error: describe(err), retryInMs: decision.retryInMs }, 'Notifications: a delivery failed; it is tried again later')
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
  const since = new Date(channel.createdAtMs).toISOString()
  return channel.channel === 'telegram' ? { channel: 'telegram', since } : { channel: 'bastyon', proxy: channel.target, since }
}

/** What a log line says of a delivery: never its header (the app's text to the user). */
function logged (row: DeliveryRow): object {
  const where = row.channel === 'telegram' ? { chatId: row.target } : { proxy: row.target }
  return { deliveryId: row.id, notificationId: row.notificationId, address: row.address, channel: row.channel, ...where, attempt: row.attempts }
}

function describe (err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
