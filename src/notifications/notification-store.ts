/**
 * The notifications' tables (migration 11): the users' channels, the send decision, and the
 * deliveries' outbox, which the push sender works through src/outbox/outbox-consumer.ts.
 *
 * A send decides every recipient in one transaction. It first locks the recipients' channel rows
 * (`FOR UPDATE`, in address order, so that two sends naming the same users in another order wait
 * rather than deadlock): two instances sending to one user take turns there, and each sees the
 * other's keys once it has the lock. Then, for each recipient in the order given:
 *
 *   no channel                                         → not_registered
 *   a live key of this id (sent in the last 24 h)      → duplicate
 *   a send less than the interval ago, or the day's limit reached → rate_limited
 *   past the app's budget of the UTC day               → rate_limited
 *   else: the key written, a delivery row per channel  → accepted (the outbox delivers it)
 *
 * The app's budget is a counter row per UTC day, locked last (after every channel row, so the
 * lock order is the same in every send) by an upsert that returns what was counted: the
 * instances' sends take turns on it for the few statements left of the transaction. A key is
 * written with `INSERT … ON CONFLICT DO UPDATE … WHERE expires_at_ms <= now`: a live key is never
 * overwritten, so even without the locks two writers could not both accept one id.
 *
 * The live keys of a user are their sends of the last 24 h: the daily limit counts them, and the
 * interval reads the newest. Expired keys of the recipients are deleted as they are read.
 *
 * A delivery row's `status`, as the payments' outbox:
 *
 *   pending ──ack()──▶ delivered ──┐
 *      │ ▲                          ├── pruneSettled(), past the retention (migration 14): deleted
 *      │ └── claim() (leased: due again when the lease lapses), retryLater()
 *      └──giveUp()──▶ given_up ─────┘
 */
import type { Database, Sql } from '../db/database.js'
import { safeInteger } from '../db/database.js'
import type { ConsumerOutbox, OutboxRow } from '../outbox/outbox-consumer.js'
import type { CheckedNotification } from './notification-rules.js'

export const DAY_MS = 86_400_000

/**
 * pruneSettled's statement ($1: made before, $2: how many): the settled rows' index of migration 14
 * gives them oldest first, and their ids are deleted through the primary key, so it reads what it
 * deletes and not the table (with `id IN (…)`, PostgreSQL joined a read of the whole table).
 */
export const PRUNE_SETTLED_SQL = `DELETE FROM notification_deliveries WHERE id = ANY(ARRAY(
  SELECT id FROM notification_deliveries WHERE status <> 'pending' AND created_at_ms < $1
  ORDER BY created_at_ms LIMIT $2 FOR UPDATE SKIP LOCKED))`

/** How a user can be reached: `bastyon` (a push through their proxy), `telegram` (a message from the app's bot). */
export type ChannelName = 'bastyon' | 'telegram'
export const CHANNEL_NAMES: readonly ChannelName[] = ['bastyon', 'telegram']

export interface Channel {
  channel: ChannelName
  /** Where: for `bastyon`, the proxy's origin; for `telegram`, the chat's id. */
  target: string
  /** When the user opted in (epoch ms). */
  createdAtMs: number
}

export interface NotificationLimits {
  /** The least time between two notifications to one user; 0: none. */
  userIntervalMs: number
  /** Notifications to one user in any 24 h. */
  userDailyLimit: number
  /** Notifications the app sends in a UTC day, all users together. */
  appDailyLimit: number
}

export const DEFAULT_NOTIFICATION_LIMITS: NotificationLimits = { userIntervalMs: 30_000, userDailyLimit: 100, appDailyLimit: 100_000 }

/** What the send decided for one recipient. */
export type Decision =
  | { address: string, status: 'not_registered' | 'duplicate' | 'rate_limited', reason?: RefusalReason }
  | { address: string, status: 'accepted', deliveryIds: number[] }

/** Why `rate_limited`: the user's interval, the user's day, or the app's day. */
export type RefusalReason = 'user_interval' | 'user_daily' | 'app_daily'

/** What a `/start <token>` made of the token's link: `used` when its nonce was recorded already (by any instance). */
export type TelegramLinkOutcome = { linked: true, channel: Channel } | { linked: false, reason: 'used' }

/** A claimed delivery: what the sender needs to push it. */
export interface DeliveryRow extends OutboxRow {
  address: string
  channel: ChannelName
  target: string
  notificationId: string
  header: string
  path: string
}

export type DeliveryStatus = 'pending' | 'delivered' | 'given_up'

export interface DeliveryBacklog {
  pending: number
  givenUp: number
}

interface ClaimedRow {
  id: unknown
  attempts: number
  address: string
  channel: ChannelName
  target: string
  notification_id: string
  header: string
  path: string
}

export class NotificationStore implements ConsumerOutbox<DeliveryRow> {
  readonly db: Database
  readonly #now: () => number
  readonly #limits: NotificationLimits
  readonly #channels: ChannelName[]

  /** `channels`: those a send queues deliveries for (default all); a user with none of them is not registered. */
  constructor (db: Database, options: { now?: () => number, limits?: Partial<NotificationLimits>, channels?: readonly ChannelName[] } = {}) {
    this.db = db
    this.#now = options.now ?? Date.now
    this.#limits = { ...DEFAULT_NOTIFICATION_LIMITS, ...options.limits }
    this.#channels = [...(options.channels ?? CHANNEL_NAMES)]
  }

  /** Records the user's channel (again: the target is replaced, the opt-in time kept). */
  async register (address: string, channel: ChannelName, target: string): Promise<Channel> {
    const { rows } = await this.db.query<{ created_at_ms: unknown }>(
      `INSERT INTO notification_channels AS c (address, channel, target, created_at_ms) VALUES ($1, $2, $3, $4)
       ON CONFLICT (address, channel) DO UPDATE SET target = EXCLUDED.target
       RETURNING c.created_at_ms`,
      [address, channel, target, this.#now()]
    )
    return { channel, target, createdAtMs: safeInteger(rows[0]?.created_at_ms, 'created_at_ms') }
  }

  /**
   * The user's token turned out to be at `to` rather than `from`: later deliveries try `to` first.
   * Only while the channel still names `from` (the user may have opted in again meanwhile).
   */
  async retarget (address: string, channel: ChannelName, from: string, to: string): Promise<void> {
    await this.db.query('UPDATE notification_channels SET target = $4 WHERE address = $1 AND channel = $2 AND target = $3', [address, channel, from, to])
  }

  /** Forgets the channel and drops what waits to go through it; false when there was none. */
  async unregister (address: string, channel: ChannelName): Promise<boolean> {
    return await this.db.transaction(async sql => {
      const { rowCount } = await sql.query('DELETE FROM notification_channels WHERE address = $1 AND channel = $2', [address, channel])
      await sql.query("DELETE FROM notification_deliveries WHERE address = $1 AND channel = $2 AND status = 'pending'", [address, channel])
      return rowCount > 0
    })
  }

  /**
   * Links a Telegram chat to `address` with a verified link token: the token's nonce is recorded as
   * used and the channel row written in one transaction, so that a token links once across
   * instances (migration 12). Linking again replaces the chat, the opt-in time kept.
   */
  async linkTelegram (link: { address: string, chatId: number, nonce: string, expiresAtMs: number }): Promise<TelegramLinkOutcome> {
    const now = this.#now()
    return await this.db.transaction(async sql => {
      // Nonces of tokens that expired: refused by their expiry now, so no longer needed here.
      await sql.query('DELETE FROM telegram_link_nonces WHERE expires_at_ms <= $1', [now])
      const { rowCount } = await sql.query(
        'INSERT INTO telegram_link_nonces (nonce, address, expires_at_ms) VALUES ($1, $2, $3) ON CONFLICT (nonce) DO NOTHING',
        [link.nonce, link.address, link.expiresAtMs]
      )
      if (rowCount === 0) return { linked: false, reason: 'used' }
      const { rows } = await sql.query<{ created_at_ms: unknown }>(
        `INSERT INTO notification_channels AS c (address, channel, target, created_at_ms) VALUES ($1, 'telegram', $2, $3)
         ON CONFLICT (address, channel) DO UPDATE SET target = EXCLUDED.target
         RETURNING c.created_at_ms`,
        [link.address, String(link.chatId), now]
      )
      return { linked: true, channel: { channel: 'telegram', target: String(link.chatId), createdAtMs: safeInteger(rows[0]?.created_at_ms, 'created_at_ms') } }
    })
  }

  /**
   * The chat can no longer be written to (the user blocked the bot, deleted their account): the
   * channel goes while it still names this chat (the user may have linked another since), with
   * what waits to go there, but the delivery in hand (`keep`), which the caller gives up.
   */
  async dropChannel (address: string, channel: ChannelName, target: string, keep: number): Promise<boolean> {
    return await this.db.transaction(async sql => {
      const { rowCount } = await sql.query('DELETE FROM notification_channels WHERE address = $1 AND channel = $2 AND target = $3', [address, channel, target])
      await sql.query("DELETE FROM notification_deliveries WHERE address = $1 AND channel = $2 AND target = $3 AND status = 'pending' AND id <> $4", [address, channel, target, keep])
      return rowCount > 0
    })
  }

  async channels (address: string): Promise<Channel[]> {
    const { rows } = await this.db.query<{ channel: ChannelName, target: string, created_at_ms: unknown }>(
      'SELECT channel, target, created_at_ms FROM notification_channels WHERE address = $1 ORDER BY channel',
      [address]
    )
    return rows.map(row => ({ channel: row.channel, target: row.target, createdAtMs: safeInteger(row.created_at_ms, 'created_at_ms') }))
  }

  /** The user leaves: their channels, their keys and what waits to reach them go. Delivered rows stay, the app's record. */
  async deleteUser (address: string): Promise<{ channels: number }> {
    return await this.db.transaction(async sql => {
      const { rowCount } = await sql.query('DELETE FROM notification_channels WHERE address = $1', [address])
      await sql.query('DELETE FROM notification_keys WHERE address = $1', [address])
      await sql.query("DELETE FROM notification_deliveries WHERE address = $1 AND status = 'pending'", [address])
      return { channels: rowCount }
    })
  }

  /** Decides every recipient in one transaction (see above) and queues a delivery per channel of each accepted one. */
  async enqueue (notification: CheckedNotification): Promise<Decision[]> {
    return await this.db.transaction(sql => this.#decide(sql, notification, this.#now()))
  }

  async #decide (sql: Sql, { to, header, path, id }: CheckedNotification, now: number): Promise<Decision[]> {
    const { userIntervalMs, userDailyLimit, appDailyLimit } = this.#limits
    const addresses = [...new Set(to)].sort()
    const { rows: channels } = await sql.query<{ address: string }>(
      'SELECT address FROM notification_channels WHERE address = ANY($1::text[]) AND channel = ANY($2::text[]) ORDER BY address, channel FOR UPDATE',
      [addresses, this.#channels]
    )
    const registered = [...new Set(channels.map(row => row.address))]
    const sent = new Map<string, { live: number, lastAtMs: number, hasKey: boolean }>()
    if (registered.length > 0) {
      await sql.query('DELETE FROM notification_keys WHERE address = ANY($1::text[]) AND expires_at_ms <= $2', [registered, now])
      const { rows } = await sql.query<{ address: string, live: number, last_expires: unknown, has_key: boolean }>(
        `SELECT address, count(*)::integer AS live, max(expires_at_ms) AS last_expires, bool_or(key = $2) AS has_key
         FROM notification_keys WHERE address = ANY($1::text[]) GROUP BY address`,
        [registered, id]
      )
      for (const row of rows) sent.set(row.address, { live: row.live, lastAtMs: safeInteger(row.last_expires, 'expires_at_ms') - DAY_MS, hasKey: row.has_key })
    }

    const decisions: Decision[] = []
    const candidates: number[] = []
    const seen = new Set<string>()
    const isRegistered = new Set(registered)
    for (const address of to) {
      const history = sent.get(address)
      if (!isRegistered.has(address)) decisions.push({ address, status: 'not_registered' })
      else if (seen.has(address) || history?.hasKey === true) decisions.push({ address, status: 'duplicate' })
      else if (history !== undefined && userIntervalMs > 0 && now - history.lastAtMs < userIntervalMs) decisions.push({ address, status: 'rate_limited', reason: 'user_interval' })
      else if (history !== undefined && history.live >= userDailyLimit) decisions.push({ address, status: 'rate_limited', reason: 'user_daily' })
      else {
        candidates.push(decisions.length)
        decisions.push({ address, status: 'accepted', deliveryIds: [] })
      }
      seen.add(address)
    }
    if (candidates.length === 0) return decisions

    // The app's budget: its row locked for the rest of the transaction by the upsert.
    const day = Math.floor(now / DAY_MS)
    const { rows: [budget] } = await sql.query<{ sent: number }>(
      `INSERT INTO notification_budget AS b (day, sent) VALUES ($1, 0)
       ON CONFLICT (day) DO UPDATE SET sent = b.sent RETURNING b.sent`,
      [day]
    )
    const room = Math.max(0, appDailyLimit - (budget?.sent ?? 0))
    for (const index of candidates.splice(room)) decisions[index] = { address: (decisions[index] as Decision).address, status: 'rate_limited', reason: 'app_daily' }
    if (candidates.length === 0) return decisions

    const wanted = candidates.map(index => (decisions[index] as Decision).address)
    const { rows: keyed } = await sql.query<{ address: string }>(
      `INSERT INTO notification_keys AS k (address, key, expires_at_ms) SELECT address, $2, $3 FROM unnest($1::text[]) AS address
       ON CONFLICT (address, key) DO UPDATE SET expires_at_ms = EXCLUDED.expires_at_ms WHERE k.expires_at_ms <= $4
       RETURNING k.address`,
      [wanted, id, now + DAY_MS, now]
    )
    const accepted = new Set(keyed.map(row => row.address))
    for (const index of candidates) {
      const address = (decisions[index] as Decision).address
      if (!accepted.has(address)) decisions[index] = { address, status: 'duplicate' }
    }
    if (accepted.size === 0) return decisions
    await sql.query('UPDATE notification_budget SET sent = sent + $2 WHERE day = $1', [day, accepted.size])
    // Counters of days long gone: a row a day, kept a month.
    await sql.query('DELETE FROM notification_budget WHERE day < $1', [day - 31])

    const { rows: queued } = await sql.query<{ id: unknown, address: string }>(
      `INSERT INTO notification_deliveries (address, channel, target, notification_id, header, path, created_at_ms, available_at_ms)
       SELECT c.address, c.channel, c.target, $2, $3, $4, $5, $5 FROM notification_channels c WHERE c.address = ANY($1::text[]) AND c.channel = ANY($6::text[])
       ORDER BY c.address, c.channel
       RETURNING id, address`,
      [[...accepted], id, header, path, now, this.#channels]
    )
    const byAddress = new Map<string, number[]>()
    for (const row of queued) byAddress.set(row.address, [...(byAddress.get(row.address) ?? []), safeInteger(row.id, 'id')])
    for (const decision of decisions) {
      if (decision.status === 'accepted') decision.deliveryIds.push(...(byAddress.get(decision.address) ?? []))
    }
    return decisions
  }

  /** Where each delivery stands; a delivery dropped since (the user opted out) is absent. */
  async statuses (ids: number[]): Promise<Map<number, DeliveryStatus>> {
    const { rows } = await this.db.query<{ id: unknown, status: DeliveryStatus }>('SELECT id, status FROM notification_deliveries WHERE id = ANY($1::bigint[])', [ids])
    return new Map(rows.map(row => [safeInteger(row.id, 'id'), row.status]))
  }

  /** Due pending deliveries of `channel`, oldest first, leased to the caller: they stay pending, due when the lease lapses. */
  async claim (channel: string, options: { limit: number, leaseMs: number }): Promise<DeliveryRow[]> {
    const now = this.#now()
    const { rows } = await this.db.query<ClaimedRow>(
      `UPDATE notification_deliveries d SET available_at_ms = $2 + $4, attempts = d.attempts + 1
       FROM (SELECT id FROM notification_deliveries
             WHERE channel = $1 AND status = 'pending' AND available_at_ms <= $2
             ORDER BY available_at_ms, id LIMIT $3 FOR UPDATE SKIP LOCKED) due
       WHERE d.id = due.id
       RETURNING d.id, d.attempts, d.address, d.channel, d.target, d.notification_id, d.header, d.path`,
      [channel, now, options.limit, options.leaseMs]
    )
    return rows
      .map(row => ({ id: safeInteger(row.id, 'id'), attempts: row.attempts, address: row.address, channel: row.channel, target: row.target, notificationId: row.notification_id, header: row.header, path: row.path }))
      .sort((a, b) => a.id - b.id)
  }

  /** Marks the delivery delivered; a given-up one delivered after all (an attempt that finished late) counts as delivered. */
  async ack (_channel: string, id: number): Promise<boolean> {
    const { rowCount } = await this.db.query(
      "UPDATE notification_deliveries SET status = 'delivered', delivered_at_ms = $2, last_error = NULL WHERE id = $1 AND status <> 'delivered'",
      [id, this.#now()]
    )
    return rowCount === 1
  }

  /** {@link ack} of several deliveries in one statement. */
  async ackMany (_channel: string, ids: number[]): Promise<void> {
    await this.db.query(
      "UPDATE notification_deliveries SET status = 'delivered', delivered_at_ms = $2, last_error = NULL WHERE id = ANY($1::bigint[]) AND status <> 'delivered'",
      [ids, this.#now()]
    )
  }

  async retryLater (_channel: string, id: number, delayMs: number): Promise<void> {
    await this.db.query("UPDATE notification_deliveries SET available_at_ms = $2 WHERE id = $1 AND status = 'pending'", [id, this.#now() + delayMs])
  }

  async giveUp (_channel: string, id: number): Promise<void> {
    await this.db.query("UPDATE notification_deliveries SET status = 'given_up' WHERE id = $1 AND status = 'pending'", [id])
  }

  /** Why the last attempt failed, kept for operators (a status, a timeout; never the header). */
  async noteError (id: number, error: string): Promise<void> {
    await this.db.query('UPDATE notification_deliveries SET last_error = $2 WHERE id = $1', [id, error.slice(0, 300)])
  }

  async nextDueAt (channel: string): Promise<number | undefined> {
    const { rows } = await this.db.query<{ at: unknown }>(
      "SELECT min(available_at_ms) AS at FROM notification_deliveries WHERE channel = $1 AND status = 'pending'",
      [channel]
    )
    const at = rows[0]?.at
    return at === null || at === undefined ? undefined : safeInteger(at, 'available_at_ms')
  }

  /**
   * Deletes at most `limit` settled deliveries (delivered or given up) made before `beforeMs`,
   * the oldest first, and returns how many; pending ones are work still to do and stay. Rows
   * another instance is deleting at that moment are skipped, not waited for.
   */
  async pruneSettled (beforeMs: number, limit: number): Promise<number> {
    return (await this.db.query(PRUNE_SETTLED_SQL, [beforeMs, limit])).rowCount
  }

  /** Deliveries of `channel` not delivered: still to be tried, and given up. */
  async backlog (channel: string): Promise<DeliveryBacklog> {
    const { rows } = await this.db.query<{ pending: number, given_up: number }>(
      `SELECT (SELECT count(*) FROM notification_deliveries WHERE channel = $1 AND status = 'pending')::integer AS pending,
              (SELECT count(*) FROM notification_deliveries WHERE channel = $1 AND status = 'given_up')::integer AS given_up`,
      [channel]
    )
    return { pending: rows[0]?.pending ?? 0, givenUp: rows[0]?.given_up ?? 0 }
  }
}
