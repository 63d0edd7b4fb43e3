/**
 * The open event streams of this process and the long-polls waiting, each counted per client (an
 * IPv4 address, an IPv6 /48: http/client-network.ts) and in all, refused past either cap; the
 * streams kept alive with a comment line at a fixed interval (one timer for all of them), and
 * ended with a hint to reconnect when the service shuts down, as the long-polls waiting then are
 * answered. A stream is a PassThrough that Fastify sends as the answer, so the answer keeps the
 * API's headers (CORS, security, request id).
 *
 * A slow client costs bounded memory and time. What a stream replays on a reconnect, and what
 * comes while it does, is held back (references to events the log keeps anyway) and written as
 * the client reads, 'drain' by 'drain'; a client further behind than the log keeps is told to
 * resync instead. A live event is written at once: past `maxBufferBytes` left unread, or when the
 * client has read nothing of what it was sent for `maxStallMs` (the kernel's socket buffers full,
 * then the stream's), the client is dropped, and counted once.
 */
import { PassThrough } from 'node:stream'
import type { TimerHandle, Timers } from 'pocketnet-client'
import { capHolderOf } from '../http/client-network.js'
import { HttpError, ServiceUnavailableError } from '../http/errors.js'
import type { StreamEvent } from './event-log.js'
import { resyncEvent } from './hub.js'

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
/** The stream's own buffer, at most: the replay is written this much ahead of what the client read. */
const MAX_HIGH_WATER_MARK = 16_384
const BEHIND = 'This stream fell further behind than the events kept for a reconnect: read the state again, then follow from here'

/** One SSE frame: `id`, `event` and the data as one JSON line, with its topic (a `resync` has none). */
export function frame (event: StreamEvent): string {
  const data = event.topic === '' ? event.data : { topic: event.topic, ...event.data }
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(data)}\n\n`
}

export class OpenStream {
  readonly body: PassThrough
  #closed = false
  /** Until goLive(): every event is held back, the replay first. */
  #catchingUp = true
  /** Events not written yet, in order: they wait for the client to read what came before them. */
  #backlog: StreamEvent[] = []
  /** How many of the backlog's first events are a replay (counted as replayed once written). */
  #replaysLeft = 0
  /** Whether the backlog was replaced by a resync while catching up: then none of it is a replay. */
  #fellBehind = false
  /** Runs while the client leaves unread what the stream wrote: when it fires, the client is dropped. */
  #stall: TimerHandle | undefined

  constructor (readonly limits: StreamLimits, readonly counts: StreamCounts, readonly timers: Timers, onClose: () => void) {
    // A small buffer, so that what a replay writes ahead of the client stays within maxBufferBytes.
    this.body = new PassThrough({ highWaterMark: Math.min(MAX_HIGH_WATER_MARK, Math.floor(limits.maxBufferBytes / 4)) })
    this.body.once('close', () => {
      this.#closed = true
      this.#backlog = []
      timers.clearTimeout(this.#stall)
      onClose()
    })
    this.body.on('drain', () => {
      timers.clearTimeout(this.#stall)
      this.#stall = undefined
      this.#flush()
    })
  }

  /** True once the stream writes no more: ended, dropped or closed by its client. */
  get closed (): boolean {
    return this.#closed
  }

  /** Writes `text` (the retry hint, a keep-alive); drops the client instead when it has left too much unread. Whether it was written. */
  write (text: string): boolean {
    if (this.#closed) return false
    const unread = this.body.writableLength + this.body.readableLength
    // A client that has read everything gets the next frame whatever its size.
    if (unread > 0 && unread + Buffer.byteLength(text) > this.limits.maxBufferBytes) {
      this.#dropSlow()
      return false
    }
    this.#writeUnchecked(text)
    return true
  }

  /** An event: written now when live and nothing waits before it, else held back until the client reads. */
  send (event: StreamEvent): void {
    if (this.#closed) return
    if (this.#catchingUp || this.#backlog.length > 0) this.#holdBack(event)
    else if (this.write(frame(event))) this.#count(event)
  }

  /**
   * Ends the catch-up: what was held back (the replay first, then what came meanwhile) is written
   * as the client reads it, and the live events after it.
   * @param replayed how many of the first events held back are the replay
   */
  goLive (replayed: number): void {
    this.#catchingUp = false
    this.#replaysLeft = this.#fellBehind ? 0 : replayed
    this.#flush()
  }

  /** A keep-alive comment, unless events wait to be written: the client is slow, not idle. */
  keepAlive (): void {
    if (this.#backlog.length === 0) this.write(': keep-alive\n\n')
  }

  /** Ends the stream after `last` (a final frame or comment). */
  end (last: string): void {
    if (this.#closed) return
    this.#closed = true
    this.body.end(last)
  }

  #holdBack (event: StreamEvent): void {
    if (this.#backlog.length < this.limits.maxBacklog) {
      this.#backlog.push(event)
      return
    }
    // Further behind than a reconnect could catch up from: told so, as a reconnect would be, and
    // followed from this event on.
    this.#backlog = [resyncEvent(event.id, BEHIND)]
    this.#replaysLeft = 0
    this.#fellBehind = true
  }

  /** Writes what was held back while the stream's buffer has room; 'drain' calls it again. */
  #flush (): void {
    if (this.#catchingUp) return
    let written = 0
    while (written < this.#backlog.length && !this.#closed && !this.body.writableNeedDrain) {
      const event = this.#backlog[written++] as StreamEvent
      this.#writeUnchecked(frame(event))
      this.#count(event)
    }
    if (written > 0) this.#backlog = this.#backlog.slice(written)
  }

  #writeUnchecked (text: string): void {
    if (!this.body.write(text) && this.#stall === undefined) this.#stall = this.timers.setTimeout(() => { this.#dropSlow() }, this.limits.maxStallMs)
  }

  #count (event: StreamEvent): void {
    if (event.type === 'resync') this.counts.resyncs++
    else this.counts.eventsSent++
    if (this.#replaysLeft > 0) {
      this.#replaysLeft--
      this.counts.replayed++
    }
  }

  /**
   * Drops a client that reads too little, once: its stream is closed at once and writes nothing
   * more. One that stalls after the stream ended (at shutdown) is dropped too: its unread end
   * would hold its connection open.
   */
  #dropSlow (): void {
    if (this.body.destroyed) return
    this.#closed = true
    this.counts.droppedSlow++
    this.body.destroy()
  }
}

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
  readonly #streams = new Set<OpenStream>()
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
  open (client: string): OpenStream {
    const holder = capHolderOf(client)
    const ofClient = this.#streamsOf.of(holder)
    if (ofClient >= this.limits.maxPerClient) throw new ServiceUnavailableError(`This client has ${ofClient} event streams open, the most it may`, RETRY_AFTER_S)
    if (this.#streams.size >= this.limits.maxStreams) throw new ServiceUnavailableError('This server has as many event streams open as it can hold', RETRY_AFTER_S)
    const stream = new OpenStream(this.limits, this.counts, this.timers, () => {
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
