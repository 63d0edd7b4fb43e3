/**
 * Where events meet their subscribers: chain events from the node event source (`ingest`), the
 * mini-app's own (`publish`), each logged for replay (event-log.ts) and handed at once to every
 * subscriber of its topic. Subscribers are indexed by topic, so an event costs its own
 * subscribers, not everyone's. The ingest asks the hub which addresses and posts have
 * subscribers now, so that it reads only what someone follows.
 */
import type { ChainEvent } from 'pocketnet-client'
import { EventLog, type EventLogOptions, type Missed, type StreamEvent } from './event-log.js'
import { userTopic, type Topic } from './topics.js'

export type Listener = (event: StreamEvent) => void

export interface Subscription {
  readonly topics: ReadonlySet<Topic>
  close (): void
}

/** Counts by what happened, for metrics. */
export interface HubCounts {
  /** Events published, by topic kind (blocks, address, content, app, user). */
  published: Record<string, number>
}

/** `address` for `address:P…`; `blocks` for `blocks`. */
function kindOf (topic: Topic): string {
  const colon = topic.indexOf(':')
  return colon < 0 ? topic : topic.slice(0, colon)
}

export class EventHub {
  readonly #log: EventLog
  readonly #byTopic = new Map<Topic, Set<Listener>>()
  readonly counts: HubCounts = { published: {} }
  readonly #chainListeners = new Set<(event: ChainEvent) => void>()
  readonly #interests = new Set<() => Iterable<string>>()
  /** The last block reported, so that a notification seen twice (for its address and its post) goes to a post's topic once. */
  #contentSeen = new Set<string>()

  constructor (log: EventLogOptions) {
    this.#log = new EventLog(log)
  }

  /** Publishes the mini-app's own event on `app:<channel>` (routes and app code). */
  publish (channel: string, data: Record<string, unknown>): StreamEvent {
    return this.#emit(`app:${channel}`, 'app', data)
  }

  /** A chain event from the node event source, on each topic it concerns, after the service's own listeners (payments). */
  ingest (event: ChainEvent): void {
    for (const listener of this.#chainListeners) listener(event)
    switch (event.kind) {
      case 'block':
        this.#contentSeen = new Set()
        this.#emit('blocks', 'block', { height: event.height, hash: event.blockHash, time: event.time })
        return
      case 'reorg':
        this.#emit('blocks', 'reorg', { height: event.height, oldHash: event.oldBlockHash, ...(event.newBlockHash === undefined ? {} : { newHash: event.newBlockHash }) })
        return
      case 'transaction':
        this.#emit(`address:${event.address}`, 'transaction', {
          address: event.address, txid: event.txid, nout: event.nout, amount: event.amount, height: event.height, blockHash: event.blockHash, time: event.time, ...(event.type === undefined ? {} : { type: event.type }),
        })
        return
      case 'notification': {
        const data = { type: event.type, txid: event.txid, height: event.height, blockHash: event.blockHash, time: event.time, ...event.data }
        // Reported only for the addresses followed when the block came; logged for a stream that reconnects.
        this.#emit(userTopic(event.address), 'notification', { address: event.address, ...data })
        const post = typeof event.data.posttxid === 'string' ? event.data.posttxid : undefined
        if (post !== undefined && !this.#contentSeen.has(`${post}:${event.txid}`)) {
          this.#contentSeen.add(`${post}:${event.txid}`)
          this.#emit(`content:${post}`, 'notification', data)
        }
      }
    }
  }

  /** Hears every chain event, before the streams do (the payments watcher). */
  onChainEvent (listener: (event: ChainEvent) => void): void {
    this.#chainListeners.add(listener)
  }

  /** Adds addresses the ingest must follow whether or not a stream does (the payments' receivers). */
  addInterest (addresses: () => Iterable<string>): void {
    this.#interests.add(addresses)
  }

  /** Publishes on a topic of the service's own (`payment:<id>`). */
  announce (topic: Topic, type: string, data: Record<string, unknown>): StreamEvent {
    return this.#emit(topic, type, data)
  }

  /** Listens to `topics` from now on. */
  subscribe (topics: ReadonlySet<Topic>, listener: Listener): Subscription {
    for (const topic of topics) {
      let listeners = this.#byTopic.get(topic)
      if (listeners === undefined) this.#byTopic.set(topic, listeners = new Set())
      listeners.add(listener)
    }
    return {
      topics,
      close: () => {
        for (const topic of topics) {
          const listeners = this.#byTopic.get(topic)
          listeners?.delete(listener)
          if (listeners?.size === 0) this.#byTopic.delete(topic)
        }
      },
    }
  }

  /** What a client missed after `id` on `topics`: the events, or `gap`. */
  since (id: string, topics: ReadonlySet<Topic>): Missed {
    return this.#log.since(id, topics)
  }

  /** The id of the last event so far: where a client that replays nothing stands. */
  get lastId (): string {
    return this.#log.lastId
  }

  /** Addresses with subscribers now: to their payments or to their own notifications. */
  addressesOfInterest (): string[] {
    const addresses: string[] = []
    for (const more of this.#interests) addresses.push(...more())
    for (const topic of this.#byTopic.keys()) {
      if (topic.startsWith('address:')) addresses.push(topic.slice(8))
      else if (topic.startsWith('user:')) addresses.push(topic.slice(5))
    }
    return addresses
  }

  /** Posts with subscribers now. */
  contentOfInterest (): string[] {
    return [...this.#byTopic.keys()].filter(topic => topic.startsWith('content:')).map(topic => topic.slice(8))
  }

  #emit (topic: Topic, type: string, data: Record<string, unknown>): StreamEvent {
    const event = this.#log.append(topic, type, data)
    const kind = kindOf(topic)
    this.counts.published[kind] = (this.counts.published[kind] ?? 0) + 1
    const listeners = this.#byTopic.get(topic)
    if (listeners !== undefined) for (const listener of [...listeners]) listener(event)
    return event
  }
}
