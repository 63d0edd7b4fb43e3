/**
 * Live events (docs/live-events.md): `app.events`, the hub the stream routes read and app code
 * publishes to, fed by lib's node event source (one node WebSocket per process, at most two
 * calls per block whatever the number of subscribers), and the registry of open streams.
 *
 * With REDIS_URL the hub shares its events with every instance on the same Redis (shared-log.ts):
 * published on one, delivered on all, replayed by any. With EVENTS_INGEST=false the hub carries
 * only what the app publishes.
 */
import fp from 'fastify-plugin'
import { createNodeEventSource, type NodeEventSource } from 'pocketnet-client'
import { registerEventMetrics } from './event-metrics.js'
import { EventHub } from './hub.js'
import { SharedEventLog } from './shared-log.js'
import { StreamRegistry } from './streams.js'
import { REAL_TIMERS, type TimerHandle, type Timers } from 'pocketnet-client'

declare module 'fastify' {
  interface FastifyInstance {
    /** Publish the mini-app's own events (`app.events.publish('room-7', {...})` reaches `app:room-7`), and the stream's hub. */
    events: EventHub
    eventStreams: StreamRegistry
  }
}

/** How long the ingest waits to try again when no node answered at its start. */
const INGEST_RETRY_MS = 30_000
/** How often an instance looks in Redis for shared events whose message it missed (while reconnecting). */
const SHARED_CATCH_UP_MS = 1000

export interface EventsPluginOptions {
  /** Milliseconds since the epoch (tests). */
  now?: (() => number) | undefined
  /** Keep-alives, long-poll waits and the shared log's catch-up (tests move them by hand). */
  timers?: Timers | undefined
}

export default fp<EventsPluginOptions>(async (app, { now = Date.now, timers = REAL_TIMERS }) => {
  const config = app.config
  const retain = { maxEvents: config.EVENTS_RETAIN, maxAgeMs: config.EVENTS_RETAIN_S * 1000 }
  const hub = new EventHub({ ...retain, now })
  const streams = new StreamRegistry({
    maxStreams: config.EVENTS_MAX_STREAMS,
    maxPerClient: config.EVENTS_MAX_STREAMS_PER_CLIENT,
    maxBufferBytes: config.EVENTS_MAX_BUFFER_BYTES,
    heartbeatMs: config.EVENTS_HEARTBEAT_MS,
  }, timers)
  app.decorate('events', hub)
  app.decorate('eventStreams', streams)

  let closing = false
  let shared: SharedEventLog | undefined
  let catchUp: TimerHandle | undefined
  if (app.redis !== undefined) {
    shared = new SharedEventLog(app.redis, retain, hub.deliverShared, hub.lostShared)
    hub.share(shared)
    const log = shared
    const check = (): void => {
      log.catchUp().catch(() => {}).finally(() => {
        if (!closing) catchUp = timers.setTimeout(check, SHARED_CATCH_UP_MS)
      })
    }
    catchUp = timers.setTimeout(check, SHARED_CATCH_UP_MS)
  }

  let source: NodeEventSource | undefined
  registerEventMetrics(app.metrics.registry, hub, streams, () => source?.stats(), shared)
  let retry: NodeJS.Timeout | undefined
  /** Follows the chain once the client exists; while no node answers, tries again later, never failing the start. */
  const startIngest = (): void => {
    app.pocketnet.get().then(api => {
      if (closing) return
      source = createNodeEventSource({
        api,
        onEvent: event => {
          // The answers that follow the tip are dropped now, not at the next probe.
          if (event.kind === 'block') api.noteBlock(event.height)
          hub.ingest(event)
        },
        onError: err => app.log.warn({ code: err.code }, `Chain events: ${err.message}`),
        addressesOfInterest: () => hub.addressesOfInterest(),
        contentOfInterest: () => hub.contentOfInterest(),
      })
    }, (err: Error) => {
      if (closing) return
      app.log.warn({ code: (err as { code?: unknown }).code }, `Chain events wait for a node: ${err.message}; trying again in ${INGEST_RETRY_MS / 1000} s`)
      retry = setTimeout(startIngest, INGEST_RETRY_MS).unref()
    })
  }
  if (config.EVENTS_INGEST) app.addHook('onReady', async () => startIngest())
  // Streams end before the server waits for its requests to finish: they never would.
  app.addHook('preClose', async () => {
    closing = true
    clearTimeout(retry)
    timers.clearTimeout(catchUp)
    shared?.close()
    streams.closeAll()
    await source?.close()
  })
}, { name: 'events', dependencies: ['redis', 'pocketnet-client', 'metrics'] })
