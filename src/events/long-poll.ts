/**
 * One long-poll, the event stream for transports that hand over only whole answers (the Bastyon
 * host's Tor service worker): it follows the topics from `since`, answers at once with what was
 * missed, or else waits, counted against the caps (streams.ts), for the first event (with the
 * others of the same turn of the event loop), the end of its wait, the client leaving, or the
 * service shutting down; then it stops following. The answer's `lastEventId` is where the next
 * poll resumes.
 */
import type { StreamEvent } from './event-log.js'
import type { EventHub } from './hub.js'
import type { StreamRegistry } from './streams.js'
import type { Topic } from './topics.js'

export interface LongPollRequest {
  /** The client's rate-limit key: what the caps count by. */
  client: string
  topics: ReadonlySet<Topic>
  since: string | undefined
  /** How long to wait for an event when none was missed, in milliseconds (0: answer at once). */
  waitMs: number
  /** The request's connection: a poll whose client left stops waiting. */
  connection: { readonly destroyed: boolean, once (event: 'close', listener: () => void): unknown, off (event: 'close', listener: () => void): unknown }
}

export interface PolledAnswer {
  /** The events, `resync`s left out (told by `resync`). */
  events: StreamEvent[]
  lastEventId: string
  resync: boolean
}

/**
 * @throws HttpError (429) past the client's cap of polls waiting, ServiceUnavailableError (503) past the process's
 */
export async function pollEvents (registry: StreamRegistry, hub: EventHub, request: LongPollRequest): Promise<PolledAnswer> {
  // The registry's timers: tests move them by hand.
  const timers = registry.timers
  const startId = hub.lastId
  const caught: StreamEvent[] = []
  let wake: (() => void) | undefined
  const following = await hub.follow(request.topics, request.since, event => {
    // The first event answers the poll, with the others of the same turn of the event loop.
    if (caught.push(event) === 1) wake?.()
  })
  try {
    if (caught.length === 0 && request.waitMs > 0 && !request.connection.destroyed) {
      await new Promise<void>((resolve, reject) => {
        const done = (): void => {
          timers.clearTimeout(timer)
          request.connection.off('close', done)
          notWaiting()
          resolve()
        }
        let notWaiting: () => void
        try {
          // Counted against the caps only while it waits: a poll answered at once holds nothing.
          notWaiting = registry.waiting(request.client, done)
        } catch (refusal) {
          reject(refusal)
          return
        }
        wake = () => setImmediate(done)
        const timer = timers.setTimeout(done, request.waitMs)
        request.connection.once('close', done)
      })
    }
  } finally {
    following.close()
  }
  const events = caught.filter(event => event.type !== 'resync')
  if (events.length < caught.length) registry.counts.resyncs++
  registry.counts.replayed += following.replayed
  return { events, lastEventId: caught.at(-1)?.id ?? request.since ?? startId, resync: following.resynced }
}
