/**
 * The grants in the database (`entitlement_grants`, migration `entitlements`): writing one,
 * revoking what an address holds of a SKU, reading what it holds now and what it was ever given.
 * No cache and no HTTP here: entitlements-service.ts adds those.
 *
 * What an address holds of a SKU is a run of grants with no gap: each grant starts where the live
 * ones end (a renewal) or now (nothing live), so the SKU is held until the latest end. Grants of
 * one address and SKU are written one at a time (a transaction-scoped advisory lock on the pair),
 * so two renewals at once both count, one after the other. An invoice grants once: its id is
 * unique among the grants, whatever the code does. Each grant and revocation writes its event for
 * the outbox's consumers in its own transaction (entitlement-events.ts).
 */
import type { Database, Sql } from '../db/database.js'
import { safeInteger } from '../db/database.js'
import type { Entitlement, Grant } from './entitlement.js'
import { writeGrantedEvent, writeRevokedEvent } from './entitlement-events.js'

/** A grant to write: from an invoice's confirmation (`invoiceId`) or from server code (`reason`). */
export interface GrantRequest {
  address: string
  sku: string
  /** Seconds; absent: for good. */
  durationS?: number
  invoiceId?: string
  reason?: string
}

/**
 * The advisory lock's first key: grants of one (address, SKU) are written one at a time. The two
 * keys form a space of their own, apart from the single-key locks (the migrations').
 */
const GRANT_LOCK_CLASS = 36_001

const GRANT_COLUMNS = 'id, address, sku, invoice_id, reason, granted_at_ms, starts_at_ms, expires_at_ms, revoked_at_ms, revoke_reason'

interface GrantRow {
  id: unknown
  address: string
  sku: string
  invoice_id: string | null
  reason: string | null
  granted_at_ms: unknown
  starts_at_ms: unknown
  expires_at_ms: unknown
  revoked_at_ms: unknown
  revoke_reason: string | null
}

function grantOfRow (row: GrantRow): Grant {
  return {
    id: safeInteger(row.id, 'id'),
    address: row.address,
    sku: row.sku,
    invoiceId: row.invoice_id,
    reason: row.reason,
    grantedAtMs: safeInteger(row.granted_at_ms, 'granted_at_ms'),
    startsAtMs: safeInteger(row.starts_at_ms, 'starts_at_ms'),
    expiresAtMs: row.expires_at_ms === null ? null : safeInteger(row.expires_at_ms, 'expires_at_ms'),
    revokedAtMs: row.revoked_at_ms === null ? null : safeInteger(row.revoked_at_ms, 'revoked_at_ms'),
    revokeReason: row.revoke_reason,
  }
}

/** Not revoked, and not ended by `$n`: the grants that make what an address holds now. */
const LIVE = (nowParam: string): string => `revoked_at_ms IS NULL AND (expires_at_ms IS NULL OR expires_at_ms > ${nowParam})`

async function lockPair (sql: Sql, address: string, sku: string): Promise<void> {
  await sql.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [GRANT_LOCK_CLASS, `${address}\n${sku}`])
}

/**
 * Writes one grant in the caller's transaction: the invoice store's, which confirms the invoice
 * in the same commit, or the store's own. Starts at the end of the live grants of the pair (a
 * renewal), or now.
 * @returns the grant, or undefined when the invoice granted already (nothing written)
 */
export async function writeGrant (sql: Sql, request: GrantRequest, nowMs: number): Promise<Grant | undefined> {
  const { address, sku } = request
  await lockPair(sql, address, sku)
  const { rows } = await sql.query<{ forever: boolean | null, ends: unknown }>(
    `SELECT bool_or(expires_at_ms IS NULL) AS forever, max(expires_at_ms) AS ends FROM entitlement_grants
     WHERE address = $1 AND sku = $2 AND ${LIVE('$3')}`,
    [address, sku, nowMs]
  )
  const live = rows[0]
  const ends = live?.ends === null || live?.ends === undefined ? nowMs : Math.max(nowMs, safeInteger(live.ends, 'expires_at_ms'))
  // Held for good already: a timed grant on top changes nothing of the end, and is recorded from now.
  const startsAtMs = live?.forever === true ? nowMs : ends
  const expiresAtMs = request.durationS === undefined ? null : startsAtMs + request.durationS * 1000
  const { rows: written } = await sql.query<GrantRow>(
    `INSERT INTO entitlement_grants (address, sku, invoice_id, reason, granted_at_ms, starts_at_ms, expires_at_ms)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (invoice_id) DO NOTHING
     RETURNING ${GRANT_COLUMNS}`,
    [address, sku, request.invoiceId ?? null, request.reason ?? null, nowMs, startsAtMs, expiresAtMs]
  )
  return written[0] === undefined ? undefined : grantOfRow(written[0])
}

/** What the live grants of one address make, per SKU: its latest grant and the end of the run. */
export function entitlementsOf (grants: readonly Grant[]): Entitlement[] {
  const bySku = new Map<string, Entitlement>()
  for (const grant of [...grants].sort((a, b) => a.id - b.id)) {
    const held = bySku.get(grant.sku)
    const expiresAtMs = held === undefined
      ? grant.expiresAtMs
      : (held.expiresAtMs === null || grant.expiresAtMs === null ? null : Math.max(held.expiresAtMs, grant.expiresAtMs))
    bySku.set(grant.sku, { sku: grant.sku, grantedAtMs: grant.grantedAtMs, expiresAtMs, invoiceId: grant.invoiceId })
  }
  return [...bySku.values()].sort((a, b) => (a.sku < b.sku ? -1 : 1))
}

export interface EntitlementStoreOptions {
  /** Milliseconds since the epoch. Default `Date.now`. */
  now?: () => number
  /**
   * Who the outbox tells of each grant and revocation (the webhook sender, with
   * PAYMENT_WEBHOOK_URL), in the transaction that makes it. Default none: no event is written.
   */
  consumers?: readonly string[]
}

export class EntitlementStore {
  readonly #db: Database
  readonly #now: () => number
  readonly #consumers: readonly string[]

  constructor (db: Database, options: EntitlementStoreOptions = {}) {
    this.#db = db
    this.#now = options.now ?? Date.now
    this.#consumers = options.consumers ?? []
    if (this.#consumers.some(consumer => typeof consumer !== 'string' || consumer === '')) throw new TypeError('option consumers must be a list of non-empty names')
  }

  /** Writes a grant by server code (checked by the caller), and its event, in a transaction of its own. */
  async grant (request: GrantRequest): Promise<Grant> {
    const grant = await this.#db.transaction(async sql => {
      const now = this.#now()
      const written = await writeGrant(sql, request, now)
      if (written !== undefined) await writeGrantedEvent(sql, written, this.#consumers, now)
      return written
    })
    // Only an invoice's second grant writes nothing, and server code names no invoice.
    if (grant === undefined) throw new Error(`invoice ${request.invoiceId ?? '(none)'} granted already`)
    return grant
  }

  /**
   * Ends what `address` holds of `sku` now, the renewals still to come included, saying why;
   * grants already ended stay as they were.
   * @returns the grants it revoked (none when nothing was held)
   */
  async revoke (address: string, sku: string, reason: string): Promise<Grant[]> {
    return this.#db.transaction(async sql => {
      const now = this.#now()
      await lockPair(sql, address, sku)
      const { rows } = await sql.query<GrantRow>(
        `UPDATE entitlement_grants SET revoked_at_ms = $3, revoke_reason = $4
         WHERE address = $1 AND sku = $2 AND ${LIVE('$3')}
         RETURNING ${GRANT_COLUMNS}`,
        [address, sku, now, reason]
      )
      const revoked = rows.map(grantOfRow).sort((a, b) => a.id - b.id)
      // What was held until now: the run's latest grant and its end.
      await writeRevokedEvent(sql, revoked, entitlementsOf(revoked)[0], reason, this.#consumers, now)
      return revoked
    })
  }

  /** What `address` holds now, one entry per SKU, by SKU. */
  async entitlements (address: string): Promise<Entitlement[]> {
    const { rows } = await this.#db.query<GrantRow>(
      `SELECT ${GRANT_COLUMNS} FROM entitlement_grants WHERE address = $1 AND ${LIVE('$2')} ORDER BY id`,
      [address, this.#now()]
    )
    return entitlementsOf(rows.map(grantOfRow))
  }

  /** Every grant `address` was ever given, revoked and ended ones included, oldest first. */
  async history (address: string): Promise<Grant[]> {
    const { rows } = await this.#db.query<GrantRow>(`SELECT ${GRANT_COLUMNS} FROM entitlement_grants WHERE address = $1 ORDER BY id`, [address])
    return rows.map(grantOfRow)
  }

  /** The grant an invoice made, if it made one. */
  async grantOfInvoice (invoiceId: string): Promise<Grant | undefined> {
    const { rows } = await this.#db.query<GrantRow>(`SELECT ${GRANT_COLUMNS} FROM entitlement_grants WHERE invoice_id = $1`, [invoiceId])
    return rows[0] === undefined ? undefined : grantOfRow(rows[0])
  }
}
