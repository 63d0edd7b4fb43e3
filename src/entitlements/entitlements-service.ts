/**
 * Entitlements as the app's code uses them (`app.entitlements`, docs/entitlements.md): whether a
 * user holds a SKU (`has`, answered from a per-user cache: no query on the hot path), what they
 * hold (`list`), every grant they were given (`history`), and grants and revocations by server
 * code. An invoice that grants writes its grant itself, in the transaction that confirms it
 * (payments/invoice-store.ts); this instance is told afterwards (`granted`), like any change, so
 * that its cache, the other instances' caches and the user's live events follow.
 */
import type { PocketnetNetwork, RedisLink } from 'pocketnet-client'
import { ClusterInvalidation } from './cluster-invalidation.js'
import { checkAddress, checkDuration, checkReason, checkSku, type Entitlement, type Grant } from './entitlement.js'
import { EntitlementCache, type HeldUntil } from './entitlement-cache.js'
import type { EntitlementStore } from './entitlement-store.js'
import { entitlementView, type EntitlementView } from './entitlement-view.js'

/** What a user's live events say of a change (`entitlement` on `user:<address>`). */
export type EntitlementChange =
  | ({ change: 'granted' } & EntitlementView)
  | { change: 'revoked', sku: string }

export interface EntitlementsServiceOptions {
  /** The store, on the service's database, opened on first use. */
  store: () => Promise<EntitlementStore>
  /** Addresses must be of this network. Default: any non-empty string. */
  network?: PocketnetNetwork
  /** Milliseconds since the epoch: when a grant ends. Default `Date.now`. */
  now?: () => number
  /** Milliseconds on a monotonic clock: the cache entries' age. Default `performance.now`. */
  clock?: () => number
  /** How long what a user holds is kept in process at most (ENTITLEMENTS_CACHE_TTL_MS); 0: never. */
  cacheTtlMs: number
  /** Users whose entitlements are kept at most (ENTITLEMENTS_CACHE_MAX_USERS). */
  maxCachedUsers: number
  /** With several instances (REDIS_URL): how each tells the others whose entitlements changed. */
  redis?: RedisLink | undefined
  /** Told each change, for the user's live events. */
  announce?: (address: string, change: EntitlementChange) => void
}

export interface GrantOptions {
  /** Seconds from the current end while the SKU is held, else from now; absent: for good. */
  durationS?: number
  /** Why (a gift, a promotion, a support case): kept with the grant. */
  reason?: string
}

export class EntitlementsService {
  readonly #store: () => Promise<EntitlementStore>
  readonly #network: PocketnetNetwork | undefined
  readonly #now: () => number
  readonly #cache: EntitlementCache
  readonly #cluster: ClusterInvalidation | undefined
  readonly #announce: (address: string, change: EntitlementChange) => void
  readonly #writtenListeners: Array<() => void> = []

  constructor (options: EntitlementsServiceOptions) {
    this.#store = options.store
    this.#network = options.network
    this.#now = options.now ?? Date.now
    this.#announce = options.announce ?? (() => {})
    this.#cache = new EntitlementCache({
      read: address => this.#heldUntil(address),
      ttlMs: options.cacheTtlMs,
      maxUsers: options.maxCachedUsers,
      ...(options.clock === undefined ? {} : { clock: options.clock }),
    })
    this.#cluster = options.redis === undefined ? undefined : new ClusterInvalidation(options.redis, address => this.#cache.invalidate(address))
  }

  /**
   * Whether `address` holds `sku` now: from the cache when it was read recently (no query), from
   * the database otherwise. A subscription ends on time: its end is compared with now.
   * @throws EntitlementError `ENTITLEMENT_ERR_INVALID` for a malformed SKU or address
   */
  async has (address: string, sku: string): Promise<boolean> {
    checkSku(sku)
    const held = this.#cache.held(address)
    const until = (held instanceof Promise ? await held : held).get(sku)
    return until !== undefined && this.#now() < until
  }

  /** What `address` holds now, one entry per SKU, by SKU; never from the cache. */
  async list (address: string): Promise<Entitlement[]> {
    checkAddress(address, this.#network)
    return (await this.#store()).entitlements(address)
  }

  /** Every grant `address` was ever given, ended and revoked ones included, oldest first. */
  async history (address: string): Promise<Grant[]> {
    checkAddress(address, this.#network)
    return (await this.#store()).history(address)
  }

  /**
   * Grants `sku` to `address`, for good or for `durationS` seconds: from the current end while it
   * is held (a renewal), from now otherwise.
   * @throws EntitlementError `ENTITLEMENT_ERR_INVALID`
   */
  async grant (address: string, sku: string, options: GrantOptions = {}): Promise<Grant> {
    checkAddress(address, this.#network)
    checkSku(sku)
    checkDuration(options.durationS)
    checkReason(options.reason, false)
    const grant = await (await this.#store()).grant({
      address,
      sku,
      ...(options.durationS === undefined ? {} : { durationS: options.durationS }),
      ...(options.reason === undefined ? {} : { reason: options.reason }),
    })
    this.granted(grant)
    return grant
  }

  /**
   * Ends what `address` holds of `sku` now, renewals to come included, and records why. The
   * grants stay, as records of payment, marked revoked.
   * @returns the grants it revoked: none when the SKU was not held
   * @throws EntitlementError `ENTITLEMENT_ERR_INVALID` (the reason is required)
   */
  async revoke (address: string, sku: string, reason: string): Promise<Grant[]> {
    checkAddress(address, this.#network)
    checkSku(sku)
    checkReason(reason, true)
    const revoked = await (await this.#store()).revoke(address, sku, reason)
    if (revoked.length > 0) this.#changed(address, { change: 'revoked', sku })
    return revoked
  }

  /** A grant written on this instance (an invoice's confirmation, or `grant`): caches and live events follow. */
  granted (grant: Grant): void {
    this.#changed(grant.address, { change: 'granted', ...entitlementView(grant) })
  }

  /**
   * Calls `listener` after each grant or revocation this instance writes: its event waits in the
   * outbox, and the payments plugin wakes the webhook sender with this. Another instance's changes
   * are not told here (the sender finds their events when it next looks).
   */
  onWritten (listener: () => void): void {
    this.#writtenListeners.push(listener)
  }

  /** Stops listening to the other instances. */
  close (): void {
    this.#cluster?.close()
  }

  #changed (address: string, change: EntitlementChange): void {
    this.#cache.invalidate(address)
    this.#cluster?.changed(address).catch(() => {})
    this.#announce(address, change)
    for (const listener of this.#writtenListeners) listener()
  }

  async #heldUntil (address: string): Promise<HeldUntil> {
    // Checked here, once per read: a cached address was checked when it was read.
    checkAddress(address, this.#network)
    const held = await (await this.#store()).entitlements(address)
    return new Map(held.map(each => [each.sku, each.expiresAtMs ?? Infinity]))
  }
}
