/**
 * The open event streams of this process: counted per client and in all (503 past either cap),
 * kept alive with a comment line at a fixed interval (one timer for all of them), and ended with
 * a hint to reconnect when the service shuts down, as are the long-polls waiting then. A stream is a PassThrough that Fastify sends
 * as the answer, so the answer keeps the API's headers (CORS, security, request id); what the
 * client leaves unread piles up in it, and past `maxBufferBytes` the client is dropped.
 */
import { PassThrough } from 'node:stream'
import type { TimerHandle, Timers } from 'pocketnet-client'
import { ServiceUnavailableError } from '../http/errors.js'
import type { StreamEvent } from './event-log.js'

export interface StreamLimits {
  maxStreams: number
  maxPerClient: number
  maxBufferBytes: number
  heartbeatMs: number
}

/** Counts for metrics. */
export interface StreamCounts {
  opened: number
  droppedSlow: number
  eventsSent: number
  replayed: number
  resyncs: number
}

/** One SSE frame: `id`, `event` and the data as one JSON line, with its topic (a `resync` has none). */
export function frame (event: StreamEvent): string {
  const data = event.topic === '' ? event.data : { topic: event.topic, ...event.data }
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(data)}\n\n`
}

export class OpenStream {
  readonly body = new PassThrough()
  #closed = false

  constructor (readonly client: string, readonly limits: StreamLimits, readonly counts: StreamCounts, onClose: () => void) {
    this.body.once('close', () => {
      this.#closed = true
      onClose()
    })
  }

  get closed (): boolean {
    return this.#closed
  }

  /** Writes `text`; drops the client instead when it has left too much unread. */
  write (text: string): void {
    if (this.#closed) return
    if (this.body.writableLength + Buffer.byteLength(text) > this.limits.maxBufferBytes) {
      this.counts.droppedSlow++
      this.body.destroy()
      return
    }
    this.body.write(text)
  }

  send (event: StreamEvent): void {
    if (event.type === 'resync') this.counts.resyncs++
    else this.counts.eventsSent++
    this.write(frame(event))
  }

  /** Ends the stream after `last` (a final frame or comment). */
  end (last: string): void {
    if (this.#closed) return
    this.body.end(last)
  }
}

export class StreamRegistry {
  readonly #streams = new Set<OpenStream>()
  readonly #perClient = new Map<string, number>()
  readonly #polls = new Set<() => void>()
  /** The keep-alives' timers, which the long-polls wait on too. */
  readonly timers: Timers
  #heartbeat: TimerHandle | undefined
  readonly counts: StreamCounts = { opened: 0, droppedSlow: 0, eventsSent: 0, replayed: 0, resyncs: 0 }

  constructor (readonly limits: StreamLimits, timers: Timers) {
    this.timers = timers
    const beat = (): void => {
      for (const stream of this.#streams) stream.write(': keep-alive\n\n')
      this.#heartbeat = timers.setTimeout(beat, limits.heartbeatMs)
    }
    this.#heartbeat = timers.setTimeout(beat, limits.heartbeatMs)
  }

  get size (): number {
    return this.#streams.size
  }

  /**
   * A new stream for `client`.
   * @throws ServiceUnavailableError (503) past the caps
   */
  open (client: string): OpenStream {
    const ofClient = this.#perClient.get(client) ?? 0
    if (ofClient >= this.limits.maxPerClient) throw new ServiceUnavailableError(`This client has ${ofClient} event streams open, the most it may`, 5)
    if (this.#streams.size >= this.limits.maxStreams) throw new ServiceUnavailableError('This server has as many event streams open as it can hold', 5)
    const stream = new OpenStream(client, this.limits, this.counts, () => {
      this.#streams.delete(stream)
      const left = (this.#perClient.get(client) ?? 1) - 1
      if (left === 0) this.#perClient.delete(client)
      else this.#perClient.set(client, left)
    })
    this.#streams.add(stream)
    this.#perClient.set(client, ofClient + 1)
    this.counts.opened++
    return stream
  }

  /** Counts a long-poll waiting: `answer` makes it answer now (at shutdown). Returns what uncounts it. */
  waiting (answer: () => void): () => void {
    this.#polls.add(answer)
    return () => { this.#polls.delete(answer) }
  }

  /** Ends every stream with a hint to reconnect (to another instance, or to this one once back), and answers every long-poll. */
  closeAll (): void {
    this.timers.clearTimeout(this.#heartbeat)
    for (const stream of [...this.#streams]) stream.end('event: shutdown\ndata: {"reconnect":true}\n\n')
    for (const answer of [...this.#polls]) answer()
  }
}
