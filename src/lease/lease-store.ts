/**
 * Where named leases are kept (lease.ts): a store that holds, per name, who holds the lease and
 * until when, and lets it lapse by itself, so that an instance that dies without a word stops
 * holding it. Two stores: PostgreSQL's `leases` table (postgres-lease-store.ts) and Redis keys
 * (redis-lease-store.ts).
 */
export interface LeaseStore {
  /**
   * Takes the lease `name` for `holder` when nobody holds it or its lease lapsed, or renews it
   * when `holder` holds it, for `ttlMs` from now: true when `holder` holds it now, false while
   * another holder's lease runs, undefined when the store did not answer. Two holders asking at
   * once cannot both get it. May reject instead (a database error): the same as no answer.
   */
  claim (name: string, holder: string, ttlMs: number): Promise<boolean | undefined>
  /** Gives the lease up if `holder` holds it, and only then, so that another need not wait for it to lapse. */
  release (name: string, holder: string): Promise<void>
}
