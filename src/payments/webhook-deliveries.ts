/**
 * The log of webhook attempts (`webhook_deliveries`): one row per POST, written when it starts
 * (so that an attempt a crash cut short still shows, unfinished) and completed when it ends, with
 * the status code, how long it took and a short error text. Never the secret, the signature or
 * the receiver's body beyond a bounded snippet in the error text.
 */
import type { Database } from '../db/database.js'
import { safeInteger } from '../db/database.js'

/** The longest error text kept, snippet of the receiver's answer included. */
export const MAX_DELIVERY_ERROR_CHARS = 300

export interface WebhookDelivery {
  id: number
  eventId: number
  /** Where it was sent, without credentials or query (see {@link loggableUrl}). */
  url: string
  attempt: number
  startedAtMs: number
  /** Null while in flight, or when the process died during it. */
  finishedAtMs: number | null
  durationMs: number | null
  /** The receiver's HTTP status; null when none came (timeout, network error, shutdown). */
  statusCode: number | null
  /** Null when delivered. */
  error: string | null
}

interface DeliveryRow {
  id: unknown
  event_id: unknown
  url: string
  attempt: number
  started_at_ms: unknown
  finished_at_ms: unknown
  status_code: number | null
  error: string | null
}

/**
 * The URL as it may be logged and stored: scheme, host and path. Credentials and the query (where
 * a receiver may have put a token of its own) are left out.
 */
export function loggableUrl (url: string): string {
  const parsed = new URL(url)
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`
}

export class WebhookDeliveryLog {
  readonly #db: Database

  constructor (db: Database) {
    this.#db = db
  }

  /** An attempt begins; its row id, to finish it with. */
  async start (eventId: number, url: string, attempt: number, startedAtMs: number): Promise<number> {
    const { rows } = await this.#db.query<{ id: unknown }>(
      'INSERT INTO webhook_deliveries (event_id, url, attempt, started_at_ms) VALUES ($1, $2, $3, $4) RETURNING id',
      [eventId, url, attempt, startedAtMs]
    )
    return safeInteger(rows[0]?.id, 'id')
  }

  /** The attempt's outcome: a status when the receiver answered, an error text unless delivered. */
  async finish (id: number, outcome: { finishedAtMs: number, statusCode: number | null, error: string | null }): Promise<void> {
    await this.#db.query(
      'UPDATE webhook_deliveries SET finished_at_ms = $2, status_code = $3, error = $4 WHERE id = $1',
      [id, outcome.finishedAtMs, outcome.statusCode, outcome.error === null ? null : outcome.error.slice(0, MAX_DELIVERY_ERROR_CHARS)]
    )
  }

  /** The attempts for one event, oldest first. */
  async list (eventId: number): Promise<WebhookDelivery[]> {
    const { rows } = await this.#db.query<DeliveryRow>(
      'SELECT id, event_id, url, attempt, started_at_ms, finished_at_ms, status_code, error FROM webhook_deliveries WHERE event_id = $1 ORDER BY id',
      [eventId]
    )
    return rows.map(row => {
      const startedAtMs = safeInteger(row.started_at_ms, 'started_at_ms')
      const finishedAtMs = row.finished_at_ms === null ? null : safeInteger(row.finished_at_ms, 'finished_at_ms')
      return {
        id: safeInteger(row.id, 'id'),
        eventId: safeInteger(row.event_id, 'event_id'),
        url: row.url,
        attempt: row.attempt,
        startedAtMs,
        finishedAtMs,
        durationMs: finishedAtMs === null ? null : finishedAtMs - startedAtMs,
        statusCode: row.status_code,
        error: row.error,
      }
    })
  }
}
