/**
 * Where events meet their subscribers: chain events from the node event source (`ingest`, put on
 * their topics by chain-entries.ts), the mini-app's own (`publish`), the service's own
 * (`announce`), each logged for replay (event-log.ts) and handed to every subscriber of its topic.
 * Subscribers are indexed by topic, so an event costs its own subscribers, not everyone's. The
 * ingest asks `interests` (interests.ts) which addresses and posts have subscribers now, so that
 * it reads only what someone follows.
 *
 * Alone, an event is delivered at once. With a shared log (shared-log.ts, REDIS_URL), it goes
 * through Redis first, and comes back to the streams of every instance in one order, this one's
 * too; while Redis cannot take it, it is delivered here alone, at once. A chain event another
 * instance ingested comes back as an entry: it is turned back into the chain event for this
 * instance's listeners (chain-entries.ts), each heard once whichever way it came.
 *
 * With REDIS_URL only one instance ingests the chain at a time (the ingest lease: src/lease/lease.ts): it follows what
 * subscribers on every instance want, which `interests.useCluster` adds to this instance's own.
 */
import type { BlockPosition, ChainEvent } from 'pocketnet-client'
import { ChainEntries, chainEventOfEntry } from './chain-entries.js'
import { EventLog, type EventLogOptions, type Missed, type StreamEvent } from './event-log.js'
import { Interests, isReadForTopic } from './interests.js'
import { HeardChainEvents } from './heard-chain-events.js'
import { compareStreamIds, type SharedEntry, type SharedEventLog } from './shared-log.js'
import { APP_CHANNEL, topicOf, topicParts, type Topic } from './topics.js'

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

/** Counts by what happened, for metrics. */
export interface HubCounts {
  /** Events delivered on this instance, by topic kind (blocks, address, content, app, user, payment). */
  published: Record<string, number>
}

/** A `resync` event: the stream goes on from `id`, and what came before it must be read again. */
export const resyncEvent = (id: string, reason: string): StreamEvent => ({ id, topic: '', type: 'resync', data: { reason }, at: 0 })
const NOT_KEPT = 'Some events after the last one seen are no longer kept: read the state again, then follow from here'
const HOLE = 'Some events did not reach this server: read the state again, then follow from here'

export class EventHub {
  readonly #log: EventLog
  readonly #byTopic = new Map<Topic, Set<Listener>>()
  readonly counts: HubCounts = { published: {} }
  /** What the chain ingest must read for: the addresses and posts followed now. */
  readonly interests: Interests
  readonly #chainListeners = new Set<(event: ChainEvent) => void>()
  readonly #chainEntries = new ChainEntries()
  readonly #heard = new HeardChainEvents()
  #lastBlock: BlockPosition | undefined
  #durablePosition: (() => Promise<BlockPosition | undefined>) | undefined
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
    this.interests = new Interests(() => this.#byTopic.keys(), onListenerError)
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
    const parts = topicParts(channel)
    const name = parts?.kind === 'app' ? parts.channel : channel
    if (!APP_CHANNEL.test(name)) throw new TypeError(`app.events.publish: ${JSON.stringify(channel.slice(0, 80))} is no channel (1 to 64 letters, digits, '.', '_' or '-')`)
    return this.#emit(topicOf({ kind: 'app', channel: name }), 'app', data)
  }

  /** A chain event from the node event source, on each topic it concerns, after the service's own listeners (payments). */
  ingest (event: ChainEvent): void {
    this.#hearChainEvent(event)
    // Each key names the event whatever instance reports it: with several instances following
    // the chain, the shared log keeps it once.
    for (const entry of this.#chainEntries.entriesOf(event)) this.#emit(entry.topic, entry.type, entry.data, entry.key)
  }

  /**
   * Hears every chain event once, before the streams do (the payments watcher): the ones this
   * instance ingests, and with REDIS_URL the ones another instance ingested.
   */
  onChainEvent (listener: (event: ChainEvent) => void): void {
    this.#chainListeners.add(listener)
  }

  /** The last block heard here, from this instance's ingest or another's. */
  get lastBlock (): BlockPosition | undefined {
    return this.#lastBlock
  }

  /**
   * Where an ingest resumes when this instance has heard no block yet (just started): a position
   * kept across restarts, such as the payments watcher's in its database. Given before the app is ready.
   */
  useDurablePosition (read: () => Promise<BlockPosition | undefined>): void {
    this.#durablePosition = read
  }

  /** The position useDurablePosition gave, read now; undefined without one. */
  async readDurablePosition (): Promise<BlockPosition | undefined> {
    return await this.#durablePosition?.()
  }

  /**
   * Publishes on a topic of the service's own (`payment:<id>`); resolves as publish() does, with
   * undefined when the shared log had the event already.
   * @param key names the event whatever instance announces it, so that the shared log keeps it
   *   once when several instances may announce the same event; none where only one does (a
   *   payment's transition is announced by the instance that wrote it)
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
        followed ||= isReadForTopic(topic)
      }
      listeners.add(listener)
    }
    if (followed) this.interests.changed()
    return {
      topics,
      close: () => {
        let unfollowed = false
        for (const topic of topics) {
          const listeners = this.#byTopic.get(topic)
          listeners?.delete(listener)
          if (listeners?.size === 0) {
            this.#byTopic.delete(topic)
            unfollowed ||= isReadForTopic(topic)
          }
        }
        if (unfollowed) this.interests.changed()
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

  /** Hands a chain event to the listeners, unless they heard it already (from this instance's ingest or the shared log). */
  #hearChainEvent (event: ChainEvent): void {
    if (!this.#heard.first(event)) return
    if (event.kind === 'block') this.#lastBlock = { height: event.height, blockHash: event.blockHash }
    for (const listener of this.#chainListeners) this.#call(() => listener(event))
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
    const kind = topicParts(topic)?.kind ?? 'other'
    this.counts.published[kind] = (this.counts.published[kind] ?? 0) + 1
    const listeners = this.#byTopic.get(topic)
    if (listeners !== undefined) for (const listener of [...listeners]) listener(event)
    return event
  }
}
