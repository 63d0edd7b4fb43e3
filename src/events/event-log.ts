/**
 * The events of the last while, for replay: a client that reconnects with the id of the last
 * event it saw gets exactly the ones after it, in order, or is told that they are gone.
 *
 * Ids are `<epoch>-<n>`: the process's start time, then a counter. They order the events of one
 * process, and an id of another process (before a restart, or another instance) is recognised
 * as such rather than compared: the client is then told to resync, never given a silent gap.
 * Kept: the last `maxEvents`, none older than `maxAgeMs`.
 */

export interface StreamEvent {
  id: string
  topic: string
  /** The SSE event name: block, reorg, transaction, notification, app. */
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

export class EventLog {
  readonly #options: EventLogOptions
  readonly #epoch: string
  #counter = 0
  /** Oldest first. */
  #events: StreamEvent[] = []
  /** The counter of the oldest event forgotten; 0 while none was. */
  #forgotten = 0

  constructor (options: EventLogOptions) {
    this.#options = options
    this.#epoch = String(options.now())
  }

  /** The id the next event will have less one: what a client that has seen everything holds. */
  get lastId (): string {
    return `${this.#epoch}-${this.#counter}`
  }

  append (topic: string, type: string, data: Record<string, unknown>): StreamEvent {
    const event: StreamEvent = { id: `${this.#epoch}-${++this.#counter}`, topic, type, data, at: this.#options.now() }
    this.#events.push(event)
    this.#trim()
    return event
  }

  /** The events after `id` on any of `topics`, or `gap`. */
  since (id: string, topics: ReadonlySet<string>): Missed {
    this.#trim()
    const dash = id.lastIndexOf('-')
    const seen = Number(id.slice(dash + 1))
    if (dash < 0 || id.slice(0, dash) !== this.#epoch || !Number.isSafeInteger(seen) || seen < 0 || seen > this.#counter) return 'gap'
    if (seen < this.#forgotten) return 'gap'
    const first = this.#events.findIndex(event => counterOf(event) > seen)
    if (first < 0) return []
    return this.#events.slice(first).filter(event => topics.has(event.topic))
  }

  get size (): number {
    return this.#events.length
  }

  #trim (): void {
    const { maxEvents, maxAgeMs, now } = this.#options
    const oldest = now() - maxAgeMs
    let drop = Math.max(0, this.#events.length - maxEvents)
    while (drop < this.#events.length && (this.#events[drop] as StreamEvent).at < oldest) drop++
    if (drop === 0) return
    this.#forgotten = counterOf(this.#events[drop - 1] as StreamEvent)
    this.#events = this.#events.slice(drop)
  }
}

const counterOf = (event: StreamEvent): number => Number(event.id.slice(event.id.lastIndexOf('-') + 1))
