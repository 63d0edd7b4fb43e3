/**
 * Following topics of the service's live events (`/api/events`): a Server-Sent Events stream
 * where the transport delivers one, long-polling (`/api/events/poll`) where it does not, such as
 * the Bastyon host's Tor service worker, which hands a response over only once it is whole.
 *
 * Either way nothing is missed across a reconnect: the last event id is kept and sent back
 * (`since`), and a gap the service can no longer fill arrives as a `resync` event, after which the
 * page reads its state again. The client reconnects by itself, never the browser: an
 * `EventSource` that reconnects alone would reuse a used stream ticket, or a stale `since`.
 */
import { MiniAppError } from './errors.js'
import type { PolledEvents } from './api-types.js'
import { requestData, type Fetch } from './request.js'

export interface MiniAppEvent {
  /** Opaque: the client keeps the last one to resume from. */
  id: string
  /** `block`, `reorg`, `transaction`, `notification`, `app`, `payment`, `resync`. */
  event: string
  /** The event's JSON, with its `topic`. */
  data: any
}

export type Transport = 'stream' | 'poll'

export interface FollowOptions {
  /** Resume after this event id (one a previous `Following` gave). */
  since?: string
  /** `auto` (the default): a stream where `EventSource` exists and its first stream opens in time, else long-polling. */
  transport?: Transport | 'auto'
  /** Told of each failure the client recovers from by retrying (the service away, a 429). */
  onError?: (error: MiniAppError) => void
  /**
   * Told each time events start to flow: a stream opened, or a poll answered after none had or
   * after a failure. Without `since`, what happened before this moment is not delivered: read the
   * state here (as after a `resync`).
   */
  onConnect?: (transport: Transport) => void
}

export interface Following {
  /** The last event's id: resume from it later with `since`. */
  readonly lastEventId: string | undefined
  /** How events arrive now: `auto` starts with `stream` and may fall back to `poll`. */
  readonly transport: Transport
  close (): void
}

/** The event names the service sends on a stream (docs: live events). */
const EVENT_NAMES = ['block', 'reorg', 'transaction', 'notification', 'app', 'payment', 'resync']

export interface EventSourceLike {
  readonly readyState: number
  addEventListener (type: string, listener: (event: MessageEvent) => void): void
  close (): void
  onopen: ((event: Event) => void) | null
  onerror: ((event: Event) => void) | null
}
export type EventSourceConstructor = new (url: string) => EventSourceLike

export interface FollowContext {
  baseUrl: string
  fetch: Fetch
  EventSource: EventSourceConstructor | undefined
  /** A stream ticket while signed in (the user's own notifications), else undefined. */
  ticket (): Promise<string | undefined>
  /** How long a stream may take to open before `auto` falls back to polling. */
  streamOpenTimeoutMs: number
  /** The first wait before reconnecting; doubled after each failure, up to RETRY_MAX_MS. */
  retryMs: number
}

const RETRY_MAX_MS = 30_000

export function follow (context: FollowContext, topics: string[], onEvent: (event: MiniAppEvent) => void, options: FollowOptions = {}): Following {
  if (topics.length === 0) throw new TypeError('follow needs at least one topic')
  const wanted = options.transport ?? 'auto'
  let transport: Transport = wanted === 'poll' || context.EventSource === undefined ? 'poll' : 'stream'
  if (wanted === 'stream' && context.EventSource === undefined) throw new TypeError('no EventSource here: follow with transport poll or auto')
  let lastEventId = options.since
  /** Whether a stream ever opened here: until one has, `auto` takes an error for a transport without streams. */
  let streamed = false
  let closed = false
  let failures = 0
  let source: EventSourceLike | undefined
  let timer: ReturnType<typeof setTimeout> | undefined
  const abort = new AbortController()

  const deliver = (event: MiniAppEvent): void => {
    if (event.id !== '') lastEventId = event.id
    onEvent(event)
  }
  const failed = (error: MiniAppError): number => {
    options.onError?.(error)
    const backoff = Math.min(RETRY_MAX_MS, context.retryMs * 2 ** failures++)
    return error.retryAfterS === undefined ? backoff : Math.max(backoff, error.retryAfterS * 1000)
  }
  const later = (ms: number, then: () => void): void => {
    timer = setTimeout(() => { timer = undefined; if (!closed) then() }, ms)
  }
  // Neither rejects but for a bug, which is told rather than left unhandled.
  const run = (work: () => Promise<void>): void => {
    work().catch(error => options.onError?.(new MiniAppError(0, 'Following failed', String(error))))
  }

  async function openStream (): Promise<void> {
    let ticket: string | undefined
    try {
      ticket = await context.ticket()
    } catch (error) {
      if (!closed) later(failed(error as MiniAppError), () => run(openStream))
      return
    }
    if (closed) return
    const query = new URLSearchParams({ topics: topics.join(',') })
    if (ticket !== undefined) query.set('ticket', ticket)
    if (lastEventId !== undefined) query.set('since', lastEventId)
    const stream = new (context.EventSource as EventSourceConstructor)(`${context.baseUrl}/api/events?${query}`)
    source = stream
    let opened = false
    if (wanted === 'auto' && failures === 0) {
      // A transport that buffers the stream never lets it open: poll instead, for good.
      later(context.streamOpenTimeoutMs, () => {
        if (opened) return
        stream.close()
        transport = 'poll'
        run(poll)
      })
    }
    stream.onopen = () => {
      opened = true
      streamed = true
      failures = 0
      if (timer !== undefined) clearTimeout(timer)
      timer = undefined
      options.onConnect?.('stream')
    }
    for (const name of EVENT_NAMES) {
      stream.addEventListener(name, message => {
        let data: unknown
        try {
          data = JSON.parse(String(message.data))
        } catch {
          return
        }
        deliver({ id: message.lastEventId, event: name, data })
      })
    }
    stream.onerror = () => {
      // Ended (a shutdown, the network, a refused ticket): reopened here, from the last id.
      stream.close()
      if (closed || source !== stream || transport !== 'stream') return
      if (timer !== undefined) clearTimeout(timer)
      if (wanted === 'auto' && !streamed) {
        // Refused before it ever opened (a proxy that answers streams with an error): poll, for good.
        transport = 'poll'
        run(poll)
        return
      }
      later(failed(new MiniAppError(0, 'The event stream ended', opened ? 'reconnecting' : 'it did not open')), () => run(openStream))
    }
  }

  async function poll (): Promise<void> {
    let connected = false
    for (;;) {
      if (closed) return
      const query = new URLSearchParams({ topics: topics.join(',') })
      if (lastEventId !== undefined) query.set('since', lastEventId)
      try {
        const data = await requestData<PolledEvents>(context.fetch, `${context.baseUrl}/api/events/poll?${query}`, { signal: abort.signal })
        if (closed) return
        failures = 0
        if (!connected) {
          connected = true
          options.onConnect?.('poll')
        }
        if (data.resync) deliver({ id: '', event: 'resync', data: { reason: 'Some events are no longer kept: read the state again' } })
        for (const event of data.events) deliver(event)
        lastEventId = data.lastEventId
      } catch (error) {
        if (closed) return
        connected = false
        const wait = failed(error instanceof MiniAppError ? error : new MiniAppError(0, 'Polling failed', String(error)))
        await new Promise<void>(resolve => later(wait, resolve))
      }
    }
  }

  run(transport === 'stream' ? openStream : poll)
  return {
    get lastEventId () { return lastEventId },
    get transport () { return transport },
    close () {
      closed = true
      if (timer !== undefined) clearTimeout(timer)
      source?.close()
      abort.abort()
    },
  }
}
