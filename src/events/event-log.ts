/**
 * The events this process delivered in the last while, for replay: a client that reconnects with
 * the id of the last event it saw gets exactly the ones after it, in order, or is told that they
 * are gone.
 *
 * Every event is logged under a counter of this process (its order of delivery here). Its public
 * id is either the id it was shared under (a Redis Stream id, shared-log.ts) or, for an event only
 * this process has, `<epoch>-<n>`: the process's start time, then the counter. A public id this log
 * does not hold (another process's, one forgotten, one before a restart) is answered `gap`: the
 * caller may look elsewhere (the shared log), and in the end the client is told to resync, never
 * given a silent gap.
 * Kept: the last `maxEvents`, none older than `maxAgeMs`.
 */

export interface StreamEvent {
  id: string
  topic: string
  /** The SSE event name: block, reorg, transaction, notification, app, payment, resync. */
  type: string
  data: Record<string, unknown>
  /** Milliseconds, on the log's clock. */
  at: number
}

export interface EventLogOptions {
  maxEvents: number
  maxAgeMs: number
  /** Milliseconds since the epoch. */
  now: () => number
}

/** What a client missed since an id: the events, or `gap` when some of them are no longer kept (or the id is not this log's). */
export type Missed = StreamEvent[] | 'gap'

interface Logged {
  counter: number
  event: StreamEvent
}

export class EventLog {
  readonly #options: EventLogOptions
  readonly #epoch: string
  #counter = 0
  /** Oldest first. */
  #events: Logged[] = []
  /** The counters of the events kept that came with an id of their own (shared ones). */
  readonly #countersOfShared = new Map<string, number>()
  /** The counter of the newest event forgotten; 0 while none was. */
  #forgotten = 0

  constructor (options: EventLogOptions) {
    this.#options = options
    this.#epoch = String(options.now())
  }

  /**
   * Where a client that has seen everything so far stands: the last event's id, or, once it is
   * forgotten (or before any event), this process's `<epoch>-<counter>`.
   */
  get lastId (): string {
    const last = this.#events.at(-1)
    return last !== undefined && last.counter === this.#counter ? last.event.id : `${this.#epoch}-${this.#counter}`
  }

  /** Logs an event under `sharedId` when it has one, else under an id of this process. */
  append (topic: string, type: string, data: Record<string, unknown>, sharedId?: string): StreamEvent {
    const counter = ++this.#counter
    const event: StreamEvent = { id: sharedId ?? `${this.#epoch}-${counter}`, topic, type, data, at: this.#options.now() }
    this.#events.push({ counter, event })
    if (sharedId !== undefined) this.#countersOfShared.set(sharedId, counter)
    this.#trim()
    return event
  }

  /** The events after `id` on any of `topics`, or `gap`. */
  since (id: string, topics: ReadonlySet<string>): Missed {
    this.#trim()
    const seen = this.#counterOf(id)
    if (seen === undefined || seen < this.#forgotten) return 'gap'
    const first = this.#events.findIndex(logged => logged.counter > seen)
    if (first < 0) return []
    return this.#events.slice(first).filter(logged => topics.has(logged.event.topic)).map(logged => logged.event)
  }

  /** Forgets every event so far: what this process delivered has a hole, so none of it is replayed. */
  forgetAll (): void {
    this.#forgotten = this.#counter
    this.#events = []
    this.#countersOfShared.clear()
  }

  get size (): number {
    return this.#events.length
  }

  #counterOf (id: string): number | undefined {
    const shared = this.#countersOfShared.get(id)
    if (shared !== undefined) return shared
    const dash = id.lastIndexOf('-')
    const counter = Number(id.slice(dash + 1))
    if (dash < 0 || id.slice(0, dash) !== this.#epoch || !/^\d+$/.test(id.slice(dash + 1)) || counter > this.#counter) return undefined
    return counter
  }

  #trim (): void {
    const { maxEvents, maxAgeMs, now } = this.#options
    const oldest = now() - maxAgeMs
    let drop = Math.max(0, this.#events.length - maxEvents)
    while (drop < this.#events.length && (this.#events[drop] as Logged).event.at < oldest) drop++
    if (drop === 0) return
    for (const { event } of this.#events.slice(0, drop)) this.#countersOfShared.delete(event.id)
    this.#forgotten = (this.#events[drop - 1] as Logged).counter
    this.#events = this.#events.slice(drop)
  }
}
