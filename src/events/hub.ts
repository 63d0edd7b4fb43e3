/**
 * Where events meet their subscribers: chain events from the node event source (`ingest`), the
 * mini-app's own (`publish`), the service's own (`announce`), each logged for replay
 * (event-log.ts) and handed to every subscriber of its topic. Subscribers are indexed by topic,
 * so an event costs its own subscribers, not everyone's. The ingest asks the hub which addresses
 * and posts have subscribers now, so that it reads only what someone follows.
 *
 * Alone, an event is delivered at once. With a shared log (shared-log.ts, REDIS_URL), it goes
 * through Redis first, and comes back to the streams of every instance in one order, this one's
 * too; while Redis cannot take it, it is delivered here alone, at once. A chain event another
 * instance ingested comes back as an entry: it is turned back into the chain event for this
 * instance's listeners (chain-entries.ts), each heard once whichever way it came.
 *
 * With REDIS_URL only one instance follows the chain at a time (ingest-lease.ts): it follows what
 * subscribers on every instance want, which `useClusterInterests` adds to this instance's own.
 */
import type { ChainEvent } from 'pocketnet-client'
import { chainEventKey, chainEventOfEntry } from './chain-entries.js'
import { EventLog, type EventLogOptions, type Missed, type StreamEvent } from './event-log.js'
import { SeenChainEvents } from './seen-chain-events.js'
import { compareStreamIds, type SharedEntry, type SharedEventLog } from './shared-log.js'
import { APP_CHANNEL, userTopic, type Topic } from './topics.js'

export type Listener = (event: StreamEvent) => void

export interface Subscription {
  readonly topics: ReadonlySet<Topic>
  close (): void
}

/** A subscription that began with a replay. */
export interface Following extends Subscription {
  /** Events replayed before the live ones. */
  readonly replayed: number
  /** Whether the replay was a `resync` event instead: what was missed is no longer kept. */
  readonly resynced: boolean
}

/** What this instance follows, or what the other instances do (cluster-interests.ts). */
export interface Interests {
  addresses: Iterable<string>
  contents: Iterable<string>
}

/** The last block heard here: where an ingest started on this instance resumes. */
export interface BlockSeen {
  height: number
  blockHash: string
}

/** Counts by what happened, for metrics. */
export interface HubCounts {
  /** Events delivered on this instance, by topic kind (blocks, address, content, app, user, payment). */
  published: Record<string, number>
}

/** `address` for `address:P…`; `blocks` for `blocks`. */
function kindOf (topic: Topic): string {
  const colon = topic.indexOf(':')
  return colon < 0 ? topic : topic.slice(0, colon)
}

/** Topics whose subscribers the ingest must read for: payments to an address, a user's notifications, a post's. */
const isFollowedTopic = (topic: Topic): boolean => topic.startsWith('address:') || topic.startsWith('user:') || topic.startsWith('content:')

/** A `resync` event: the stream goes on from `id`, and what came before it must be read again. */
export const resyncEvent = (id: string, reason: string): StreamEvent => ({ id, topic: '', type: 'resync', data: { reason }, at: 0 })
const NOT_KEPT = 'Some events after the last one seen are no longer kept: read the state again, then follow from here'
const HOLE = 'Some events did not reach this server: read the state again, then follow from here'

export class EventHub {
  readonly #log: EventLog
  readonly #byTopic = new Map<Topic, Set<Listener>>()
  readonly counts: HubCounts = { published: {} }
  readonly #chainListeners = new Set<(event: ChainEvent) => void>()
  readonly #interests = new Set<() => Iterable<string>>()
  readonly #interestListeners = new Set<() => void>()
  /** What the other instances follow, while this one follows the chain for all (cluster-interests.ts). */
  #cluster: (() => Interests) | undefined
  readonly #seen = new SeenChainEvents()
  #lastBlock: BlockSeen | undefined
  /** The last block reported, so that a notification seen twice (for its address and its post) goes to a post's topic once. */
  #contentSeen = new Set<string>()
  #shared: SharedEventLog | undefined
  /** Events go to the shared log one after another, so that they keep the order they were published in. */
  #publishing: Promise<unknown> = Promise.resolve()
  /** The ids of shared events, which order them across instances (events of this instance alone are not in it). */
  readonly #sharedIds = new WeakSet<StreamEvent>()

  readonly #onListenerError: (err: unknown) => void

  /** @param onListenerError told what a chain or interest listener threw (the others are still called) */
  constructor (log: EventLogOptions, onListenerError: (err: unknown) => void = () => {}) {
    this.#log = new EventLog(log)
    this.#onListenerError = onListenerError
  }

  /**
   * Shares events through `log` from now on; `log` is made with `deliverShared` and `lostShared`
   * as its callbacks (plugin.ts).
   */
  share (log: SharedEventLog): void {
    this.#shared = log
  }

  /**
   * Hands a shared entry to this instance's streams (the shared log's `deliver`), after its
   * chain event to this instance's listeners when another instance ingested it.
   */
  readonly deliverShared = (entry: SharedEntry): void => {
    const chain = chainEventOfEntry(entry.topic, entry.type, entry.data)
    if (chain !== undefined) this.#hearChainEvent(chain)
    this.#deliver(entry.topic, entry.type, entry.data, entry.id)
  }

  /** Entries were lost before the next one (the shared log's `onHole`): every stream here resyncs. */
  readonly lostShared = (): void => {
    this.#log.forgetAll()
    const resync = resyncEvent(this.#log.lastId, HOLE)
    const everyone = new Set<Listener>()
    for (const listeners of this.#byTopic.values()) for (const listener of listeners) everyone.add(listener)
    for (const listener of everyone) listener(resync)
  }

  /**
   * Publishes the mini-app's own event on `app:<channel>` (routes and app code): `channel` is
   * `room-7` or `app:room-7`. Resolves with the event's id once it is delivered on this instance.
   * @throws TypeError for a channel that is not 1 to 64 letters, digits, `.`, `_` or `-`
   */
  publish (channel: string, data: Record<string, unknown>): Promise<string | undefined> {
    const name = channel.startsWith('app:') ? channel.slice(4) : channel
    if (!APP_CHANNEL.test(name)) throw new TypeError(`app.events.publish: ${JSON.stringify(channel.slice(0, 80))} is no channel (1 to 64 letters, digits, '.', '_' or '-')`)
    return this.#emit(`app:${name}`, 'app', data)
  }

  /** A chain event from the node event source, on each topic it concerns, after the service's own listeners (payments). */
  ingest (event: ChainEvent): void {
    this.#hearChainEvent(event)
    // Each key names the event whatever instance reports it: with several instances following
    // the chain, the shared log keeps it once.
    const key = chainEventKey(event)
    switch (event.kind) {
      case 'block':
        this.#contentSeen = new Set()
        this.#emit('blocks', 'block', { height: event.height, hash: event.blockHash, time: event.time }, key)
        return
      case 'reorg':
        this.#emit('blocks', 'reorg', { height: event.height, oldHash: event.oldBlockHash, ...(event.newBlockHash === undefined ? {} : { newHash: event.newBlockHash }) }, key)
        return
      case 'transaction':
        this.#emit(`address:${event.address}`, 'transaction', {
          address: event.address, txid: event.txid, nout: event.nout, amount: event.amount, height: event.height, blockHash: event.blockHash, time: event.time, ...(event.type === undefined ? {} : { type: event.type }),
        }, key)
        return
      case 'notification': {
        const data = { type: event.type, txid: event.txid, height: event.height, blockHash: event.blockHash, time: event.time, ...event.data }
        // Reported only for the addresses followed when the block came; logged for a stream that
        // reconnects, and the entry other instances turn back into the chain event.
        this.#emit(userTopic(event.address), 'notification', { address: event.address, ...data }, key)
        const post = typeof event.data.posttxid === 'string' ? event.data.posttxid : undefined
        if (post !== undefined && !this.#contentSeen.has(`${post}:${event.txid}`)) {
          this.#contentSeen.add(`${post}:${event.txid}`)
          this.#emit(`content:${post}`, 'notification', data, `content:${event.blockHash}:${event.txid}:${post}`)
        }
      }
    }
  }

  /**
   * Hears every chain event once, before the streams do (the payments watcher): the ones this
   * instance ingests, and with REDIS_URL the ones another instance ingested.
   */
  onChainEvent (listener: (event: ChainEvent) => void): void {
    this.#chainListeners.add(listener)
  }

  /** The last block heard here, from this instance's ingest or another's. */
  get lastBlock (): BlockSeen | undefined {
    return this.#lastBlock
  }

  /**
   * Where an ingest resumes when this instance has heard no block yet (just started): a position
   * kept across restarts, such as the payments watcher's in its database. Set before the app is ready.
   */
  durableResume: (() => Promise<BlockSeen | undefined>) | undefined

  /** Adds addresses the ingest must follow whether or not a stream does (the payments' receivers). */
  addInterest (addresses: () => Iterable<string>): void {
    this.#interests.add(addresses)
    this.#interestsChanged()
  }

  /** Called when a topic the ingest reads for gains its first subscriber or loses its last (cluster-interests.ts writes them to Redis). */
  onInterestsChange (listener: () => void): void {
    this.#interestListeners.add(listener)
  }

  /** Adds what other instances follow to addressesOfInterest() and contentOfInterest(), while this instance ingests for all; undefined stops it. */
  useClusterInterests (interests: (() => Interests) | undefined): void {
    this.#cluster = interests
  }

  /**
   * Publishes on a topic of the service's own (`payment:<id>`); resolves as publish() does.
   * @param key names the event whatever instance announces it (`payment:<id>:<sequence>`), so
   *   that the shared log keeps it once when several may (undefined when nothing was kept)
   */
  announce (topic: Topic, type: string, data: Record<string, unknown>, key?: string): Promise<string | undefined> {
    return this.#emit(topic, type, data, key)
  }

  /** Listens to `topics` from now on. */
  subscribe (topics: ReadonlySet<Topic>, listener: Listener): Subscription {
    let followed = false
    for (const topic of topics) {
      let listeners = this.#byTopic.get(topic)
      if (listeners === undefined) {
        this.#byTopic.set(topic, listeners = new Set())
        followed ||= isFollowedTopic(topic)
      }
      listeners.add(listener)
    }
    if (followed) this.#interestsChanged()
    return {
      topics,
      close: () => {
        let unfollowed = false
        for (const topic of topics) {
          const listeners = this.#byTopic.get(topic)
          listeners?.delete(listener)
          if (listeners?.size === 0) {
            this.#byTopic.delete(topic)
            unfollowed ||= isFollowedTopic(topic)
          }
        }
        if (unfollowed) this.#interestsChanged()
      },
    }
  }

  /**
   * Listens to `topics`, starting with what was missed after `since` when given: the events kept
   * here or in the shared log, in order, each once, then the live ones; or a `resync` event when
   * what was missed is no longer kept. The listener hears nothing before this resolves.
   */
  async follow (topics: ReadonlySet<Topic>, since: string | undefined, listener: Listener): Promise<Following> {
    const startId = this.lastId
    const early: StreamEvent[] = []
    let live = false
    /** With a replay from the shared log: the last shared id it covered, which later deliveries here must pass. */
    let floor: string | undefined
    const pass = (event: StreamEvent): void => {
      if (floor !== undefined && this.#sharedIds.has(event) && compareStreamIds(event.id, floor) <= 0) return
      listener(event)
    }
    const subscription = this.subscribe(topics, event => live ? pass(event) : early.push(event))
    let replayed = 0
    let resynced = false
    if (since !== undefined) {
      let missed = this.#log.since(since, topics)
      let fromShared = false
      if (missed === 'gap' && this.#shared !== undefined) {
        const entries = await this.#shared.since(since, topics)
        if (entries !== undefined && entries !== 'gap') {
          missed = entries.map(entry => ({ id: entry.id, topic: entry.topic, type: entry.type, data: entry.data, at: 0 }))
          fromShared = true
        }
      }
      if (missed === 'gap') {
        resynced = true
        listener(resyncEvent(startId, NOT_KEPT))
      } else {
        for (const event of missed) listener(event)
        replayed = missed.length
        // What this instance delivers later may be among them: it lags behind Redis, or `since` is ahead of it.
        if (fromShared) floor = missed.at(-1)?.id ?? since
      }
    }
    for (const event of early) pass(event)
    live = true
    return { ...subscription, replayed, resynced }
  }

  /** What a client missed after `id` on `topics`, from what this instance kept: the events, or `gap`. */
  since (id: string, topics: ReadonlySet<Topic>): Missed {
    return this.#log.since(id, topics)
  }

  /** The id of the last event delivered here: where a client that replays nothing stands. */
  get lastId (): string {
    return this.#log.lastId
  }

  /**
   * Addresses with subscribers now, to their payments or to their own notifications: on this
   * instance, and on every instance while this one follows the chain for all.
   */
  addressesOfInterest (): string[] {
    const addresses = this.localInterests().addresses
    const cluster = this.#cluster?.()
    return cluster === undefined ? addresses : [...new Set([...addresses, ...cluster.addresses])]
  }

  /** Posts with subscribers now: on this instance, and on every instance while this one follows the chain for all. */
  contentOfInterest (): string[] {
    const contents = this.localInterests().contents
    const cluster = this.#cluster?.()
    return cluster === undefined ? contents : [...new Set([...contents, ...cluster.contents])]
  }

  /** The addresses and posts this instance's subscribers and `addInterest` callers follow. */
  localInterests (): { addresses: string[], contents: string[] } {
    const addresses: string[] = []
    const contents: string[] = []
    for (const more of this.#interests) addresses.push(...more())
    for (const topic of this.#byTopic.keys()) {
      if (topic.startsWith('address:')) addresses.push(topic.slice(8))
      else if (topic.startsWith('user:')) addresses.push(topic.slice(5))
      else if (topic.startsWith('content:')) contents.push(topic.slice(8))
    }
    return { addresses, contents }
  }

  /** Hands a chain event to the listeners, unless they heard it already (from this instance's ingest or the shared log). */
  #hearChainEvent (event: ChainEvent): void {
    if (!this.#seen.first(event)) return
    if (event.kind === 'block') this.#lastBlock = { height: event.height, blockHash: event.blockHash }
    for (const listener of this.#chainListeners) this.#call(() => listener(event))
  }

  #interestsChanged (): void {
    for (const listener of this.#interestListeners) this.#call(listener)
  }

  /** One listener's throw must not keep the others, or the streams, from the event. */
  #call (listener: () => void): void {
    try {
      listener()
    } catch (err) {
      this.#onListenerError(err)
    }
  }

  /** Delivers the event here, or through the shared log; resolves with its id once delivered here (undefined: another instance had it already). */
  #emit (topic: Topic, type: string, data: Record<string, unknown>, key?: string): Promise<string | undefined> {
    const shared = this.#shared
    if (shared === undefined) return Promise.resolve(this.#deliver(topic, type, data).id)
    const published = this.#publishing.then(async () => {
      const appended = await shared.append(topic, type, data, key)
      if (appended.outcome === 'shared') return appended.id
      if (appended.outcome === 'duplicate') return undefined
      return this.#deliver(topic, type, data).id
    })
    this.#publishing = published.catch(() => {})
    return published
  }

  #deliver (topic: Topic, type: string, data: Record<string, unknown>, sharedId?: string): StreamEvent {
    const event = this.#log.append(topic, type, data, sharedId)
    if (sharedId !== undefined) this.#sharedIds.add(event)
    const kind = kindOf(topic)
    this.counts.published[kind] = (this.counts.published[kind] ?? 0) + 1
    const listeners = this.#byTopic.get(topic)
    if (listeners !== undefined) for (const listener of [...listeners]) listener(event)
    return event
  }
}
