/**
 * One event stream as Server-Sent Events, from its opening to its end (`startEventStream`), read
 * top to bottom by its states:
 * - `catchingUp`: opened, and following its topics: what the client missed (the replay, or a
 *   `resync` event) and what comes meanwhile is held back;
 * - `live`: what was held back is written as the client reads it, 'drain' by 'drain', then each
 *   new event at once;
 * - `ended`: the service ended it with a last frame (shutdown: a hint to reconnect);
 * - `closed`: gone: its client closed it, or was dropped for reading too little (counted once).
 *
 * A slow client costs bounded memory and time. What is held back is references to events the log
 * keeps anyway; a client further behind than `maxBacklog` is told to resync instead. A live event
 * is written at once: past `maxBufferBytes` left unread, or when the client has read nothing of
 * what it was sent for `maxStallMs` (the kernel's socket buffers full, then the stream's), the
 * client is dropped. The stream is a PassThrough that Fastify sends as the answer, so the answer
 * keeps the API's headers (CORS, security, request id).
 */
import { PassThrough } from 'node:stream'
import type { TimerHandle, Timers } from 'pocketnet-client'
import type { StreamEvent } from './event-log.js'
import { resyncEvent, type EventHub } from './hub.js'
import type { StreamCounts, StreamLimits, StreamRegistry } from './streams.js'
import type { Topic } from './topics.js'

export type EventStreamState = 'catchingUp' | 'live' | 'ended' | 'closed'

/** The stream's own buffer, at most: the replay is written this much ahead of what the client read. */
const MAX_HIGH_WATER_MARK = 16_384
const BEHIND = 'This stream fell further behind than the events kept for a reconnect: read the state again, then follow from here'

export interface EventStreamRequest {
  /** The client's rate-limit key: what the caps count by. */
  client: string
  topics: ReadonlySet<Topic>
  /** The last event id the client saw: what it missed after it is replayed first. */
  since: string | undefined
  /** What a client that reconnects waits first, in milliseconds (the SSE `retry:` hint). */
  retryMs: number
}

/**
 * Opens a stream for the client and follows its topics: the retry hint, what was missed, then
 * the live events, each once; the following ends with the stream.
 * @throws ServiceUnavailableError (503) past the caps (StreamRegistry.open)
 */
export async function startEventStream (registry: StreamRegistry, hub: EventHub, request: EventStreamRequest): Promise<EventStream> {
  const stream = registry.open(request.client)
  stream.write(`retry: ${request.retryMs}\n\n`)
  let following: Awaited<ReturnType<EventHub['follow']>>
  try {
    following = await hub.follow(request.topics, request.since, event => stream.send(event))
  } catch (err) {
    // Never left open and counted against the caps with nothing to follow.
    stream.body.destroy()
    throw err
  }
  stream.goLive(following.replayed)
  if (stream.closed) following.close()
  else stream.body.once('close', () => following.close())
  return stream
}

/** One SSE frame: `id`, `event` and the data as one JSON line, with its topic (a `resync` has none). */
export function frame (event: StreamEvent): string {
  const data = event.topic === '' ? event.data : { topic: event.topic, ...event.data }
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(data)}\n\n`
}

export class EventStream {
  readonly body: PassThrough
  #state: EventStreamState = 'catchingUp'
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
      this.#state = 'closed'
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

  get state (): EventStreamState {
    return this.#state
  }

  /** True once the stream writes no more: ended, dropped or closed by its client. */
  get closed (): boolean {
    return this.#state === 'ended' || this.#state === 'closed'
  }

  /** Writes `text` (the retry hint, a keep-alive); drops the client instead when it has left too much unread. Whether it was written. */
  write (text: string): boolean {
    if (this.closed) return false
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
    if (this.closed) return
    if (this.#state === 'catchingUp' || this.#backlog.length > 0) this.#holdBack(event)
    else if (this.write(frame(event))) this.#count(event)
  }

  /**
   * Ends the catch-up: what was held back (the replay first, then what came meanwhile) is written
   * as the client reads it, and the live events after it.
   * @param replayed how many of the first events held back are the replay
   */
  goLive (replayed: number): void {
    if (this.#state !== 'catchingUp') return
    this.#state = 'live'
    this.#replaysLeft = this.#fellBehind ? 0 : replayed
    this.#flush()
  }

  /** A keep-alive comment, unless events wait to be written: the client is slow, not idle. */
  keepAlive (): void {
    if (this.#backlog.length === 0) this.write(': keep-alive\n\n')
  }

  /** Ends the stream after `last` (a final frame or comment). */
  end (last: string): void {
    if (this.closed) return
    this.#state = 'ended'
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
    if (this.#state === 'catchingUp') return
    let written = 0
    while (written < this.#backlog.length && !this.closed && !this.body.writableNeedDrain) {
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
    this.#state = 'closed'
    this.counts.droppedSlow++
    this.body.destroy()
  }
}
