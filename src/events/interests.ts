/**
 * What the chain ingest must read for: the addresses (payments to them, their users' own
 * notifications) and the posts (comments, scores) that someone follows now. Known from the hub's
 * topics with subscribers, from the service's own needs (`add`: the payments' receivers), and,
 * while this instance ingests the chain for every instance (REDIS_URL), from what the others'
 * subscribers follow (`useCluster`, cluster-interests.ts).
 */
import { topicParts, type Topic } from './topics.js'

/** Addresses and posts followed: on this instance, or on the others. */
export interface Followed {
  addresses: Iterable<string>
  contents: Iterable<string>
}

/** Whether the ingest reads for subscribers of `topic`: payments to an address, a user's notifications, a post's. */
export function isReadForTopic (topic: Topic): boolean {
  const kind = topicParts(topic)?.kind
  return kind === 'address' || kind === 'user' || kind === 'content'
}

export class Interests {
  readonly #topics: () => Iterable<Topic>
  readonly #added = new Set<() => Iterable<string>>()
  readonly #listeners = new Set<() => void>()
  readonly #onListenerError: (err: unknown) => void
  #cluster: (() => Followed) | undefined

  /**
   * @param topics the topics with subscribers on this instance now
   * @param onListenerError told what a change listener threw (the others are still called)
   */
  constructor (topics: () => Iterable<Topic>, onListenerError: (err: unknown) => void) {
    this.#topics = topics
    this.#onListenerError = onListenerError
  }

  /** Adds addresses the ingest must follow whether or not a stream does (the payments' receivers). */
  add (addresses: () => Iterable<string>): void {
    this.#added.add(addresses)
    this.changed()
  }

  /** Called when a topic read for gains its first subscriber or loses its last (cluster-interests.ts writes them to Redis). */
  onChange (listener: () => void): void {
    this.#listeners.add(listener)
  }

  /** Tells the change listeners: the hub calls it when a topic read for gains its first subscriber or loses its last. */
  changed (): void {
    for (const listener of this.#listeners) {
      try {
        listener()
      } catch (err) {
        this.#onListenerError(err)
      }
    }
  }

  /** Adds what the other instances follow to addresses() and contents(), while this one ingests the chain for all; undefined stops it. */
  useCluster (others: (() => Followed) | undefined): void {
    this.#cluster = others
  }

  /** Addresses followed now: on this instance, and on every instance while this one ingests the chain for all. */
  addresses (): string[] {
    const addresses = this.local().addresses
    const cluster = this.#cluster?.()
    return cluster === undefined ? addresses : [...new Set([...addresses, ...cluster.addresses])]
  }

  /** Posts followed now: on this instance, and on every instance while this one ingests the chain for all. */
  contents (): string[] {
    const contents = this.local().contents
    const cluster = this.#cluster?.()
    return cluster === undefined ? contents : [...new Set([...contents, ...cluster.contents])]
  }

  /** What this instance's subscribers and `add` callers follow. */
  local (): { addresses: string[], contents: string[] } {
    const addresses: string[] = []
    const contents: string[] = []
    for (const more of this.#added) addresses.push(...more())
    for (const topic of this.#topics()) {
      const parts = topicParts(topic)
      if (parts?.kind === 'address' || parts?.kind === 'user') addresses.push(parts.address)
      else if (parts?.kind === 'content') contents.push(parts.hash)
    }
    return { addresses, contents }
  }
}
