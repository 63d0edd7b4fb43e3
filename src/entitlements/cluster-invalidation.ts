/**
 * Instances that share a database tell each other whose entitlements changed, so that each drops
 * what it kept of that user at once (entitlement-cache.ts): a message with the address on a Redis
 * channel (REDIS_URL), which every instance, this one included, listens to. A message can be lost
 * (Redis away, a reconnect): the cache's time to live bounds how long an instance may then answer
 * from what it read before. Without Redis, that bound is the only one.
 */
import type { RedisLink } from 'pocketnet-client'

/** The channel, under the link's key prefix. */
export const ENTITLEMENTS_CHANNEL = 'entitlements:changed'

export class ClusterInvalidation {
  readonly #link: RedisLink
  readonly #unsubscribe: () => void

  /** @param onChanged called with the address another instance (or this one) changed */
  constructor (link: RedisLink, onChanged: (address: string) => void) {
    this.#link = link
    this.#unsubscribe = link.subscribe(ENTITLEMENTS_CHANNEL, onChanged)
  }

  /** Tells every instance that what `address` holds changed; resolves whether Redis took it or not. */
  async changed (address: string): Promise<void> {
    // Tried even while the link backs off after a failure: a lost message costs a stale answer.
    await this.#link.run('entitlements-changed', redis => redis.publish(this.#link.keyPrefix + ENTITLEMENTS_CHANNEL, address), true)
  }

  close (): void {
    this.#unsubscribe()
  }
}
