/**
 * The open event streams of this process (event-stream.ts) and the long-polls waiting
 * (long-poll.ts), each counted per client (an IPv4 address, an IPv6 /48: http/client-network.ts)
 * and in all, refused past either cap; the streams kept alive with a comment line at a fixed
 * interval (one timer for all of them), and ended with a hint to reconnect when the service shuts
 * down, as the long-polls waiting then are answered.
 */
import type { TimerHandle, Timers } from 'pocketnet-client'
import { capHolderOf } from '../http/client-network.js'
import { HttpError, ServiceUnavailableError } from '../http/errors.js'
import { EventStream } from './event-stream.js'

export interface StreamLimits {
  maxStreams: number
  maxPerClient: number
  maxBufferBytes: number
  /** Milliseconds a stream may wait for its client to read what it holds before the client is dropped. */
  maxStallMs: number
  /** Events a stream may hold back for its client (a replay, and what comes meanwhile); past it, a resync. */
  maxBacklog: number
  heartbeatMs: number
  maxPolls: number
  maxPollsPerClient: number
}

/** Counts for metrics: each names what was done, counted when it was. */
export interface StreamCounts {
  opened: number
  droppedSlow: number
  eventsSent: number
  replayed: number
  resyncs: number
}

/** What a client refused for a cap is told to wait, in seconds. */
const RETRY_AFTER_S = 5

/** How many of something each client holds, a client being its cap holder (capHolderOf). */
class PerClient {
  readonly #counts = new Map<string, number>()

  of (holder: string): number {
    return this.#counts.get(holder) ?? 0
  }

  add (holder: string): void {
    this.#counts.set(holder, this.of(holder) + 1)
  }

  remove (holder: string): void {
    const left = this.of(holder) - 1
    if (left <= 0) this.#counts.delete(holder)
    else this.#counts.set(holder, left)
  }
}

export class StreamRegistry {
  readonly #streams = new Set<EventStream>()
  readonly #streamsOf = new PerClient()
  readonly #polls = new Set<() => void>()
  readonly #pollsOf = new PerClient()
  /** The keep-alives' timers, which the long-polls and the stalled streams wait on too. */
  readonly timers: Timers
  #heartbeat: TimerHandle | undefined
  readonly counts: StreamCounts = { opened: 0, droppedSlow: 0, eventsSent: 0, replayed: 0, resyncs: 0 }

  constructor (readonly limits: StreamLimits, timers: Timers) {
    this.timers = timers
    const beat = (): void => {
      for (const stream of this.#streams) stream.keepAlive()
      this.#heartbeat = timers.setTimeout(beat, limits.heartbeatMs)
    }
    this.#heartbeat = timers.setTimeout(beat, limits.heartbeatMs)
  }

  get size (): number {
    return this.#streams.size
  }

  /** Long-polls waiting now. */
  get polls (): number {
    return this.#polls.size
  }

  /**
   * A new stream for `client` (its rate-limit key): it holds back what it is sent until goLive().
   * @throws ServiceUnavailableError (503) past the caps
   */
  open (client: string): EventStream {
    const holder = capHolderOf(client)
    const ofClient = this.#streamsOf.of(holder)
    if (ofClient >= this.limits.maxPerClient) throw new ServiceUnavailableError(`This client has ${ofClient} event streams open, the most it may`, RETRY_AFTER_S)
    if (this.#streams.size >= this.limits.maxStreams) throw new ServiceUnavailableError('This server has as many event streams open as it can hold', RETRY_AFTER_S)
    const stream = new EventStream(this.limits, this.counts, this.timers, () => {
      this.#streams.delete(stream)
      this.#streamsOf.remove(holder)
    })
    this.#streams.add(stream)
    this.#streamsOf.add(holder)
    this.counts.opened++
    return stream
  }

  /**
   * Counts a long-poll of `client` (its rate-limit key) waiting: `answer` makes it answer now (at
   * shutdown). Returns what uncounts it.
   * @throws HttpError (429) past the client's cap, ServiceUnavailableError (503) past the process's, each with Retry-After
   */
  waiting (client: string, answer: () => void): () => void {
    const holder = capHolderOf(client)
    const ofClient = this.#pollsOf.of(holder)
    if (ofClient >= this.limits.maxPollsPerClient) {
      const refusal = new HttpError(429, 'Too many requests', `This client has ${ofClient} long-polls waiting, the most it may`)
      refusal.headers = { 'retry-after': String(RETRY_AFTER_S) }
      throw refusal
    }
    if (this.#polls.size >= this.limits.maxPolls) throw new ServiceUnavailableError('This server has as many long-polls waiting as it can hold', RETRY_AFTER_S)
    this.#polls.add(answer)
    this.#pollsOf.add(holder)
    let counted = true
    return () => {
      if (!counted) return
      counted = false
      this.#polls.delete(answer)
      this.#pollsOf.remove(holder)
    }
  }

  /** Ends every stream with a hint to reconnect (to another instance, or to this one once back), and answers every long-poll. */
  closeAll (): void {
    this.timers.clearTimeout(this.#heartbeat)
    for (const stream of [...this.#streams]) stream.end('event: shutdown\ndata: {"reconnect":true}\n\n')
    for (const answer of [...this.#polls]) answer()
  }
}
