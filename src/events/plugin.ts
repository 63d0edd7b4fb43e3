/**
 * Live events (docs/live-events.md): `app.events`, the hub the stream routes read and app code
 * publishes to, fed by pocketnet-client's node event source (one node WebSocket, at most two calls
 * per block whatever the number of subscribers), and the registry of open streams.
 *
 * With REDIS_URL the hub shares its events with every instance on the same Redis (shared-log.ts):
 * published on one, delivered on all, replayed by any. Only the instance holding the ingest lease
 * (the lease `events:ingest` in Redis, src/lease/lease.ts) ingests the chain, for the addresses
 * and posts followed on every instance (cluster-interests.ts); where it is held elsewhere, the
 * chain events come from the shared log, for the listeners too. While the lease is unreachable
 * (Redis has not answered for a whole lease), each instance ingests the chain for itself. With
 * EVENTS_INGEST=false the hub carries only what the app publishes, and what other instances share.
 */
import { randomUUID } from 'node:crypto'
import fp from 'fastify-plugin'
import { REAL_TIMERS, type TimerHandle, type Timers } from 'pocketnet-client'
import { Lease, type LeaseState } from '../lease/lease.js'
import { RedisLeaseStore } from '../lease/redis-lease-store.js'
import { ChainIngest } from './chain-ingest.js'
import { ClusterInterests } from './cluster-interests.js'
import { registerEventMetrics } from './event-metrics.js'
import { EventHub } from './hub.js'
import { ResumeBlock } from './resume-block.js'
import { SharedEventLog } from './shared-log.js'
import { StreamRegistry } from './streams.js'

/** Who ingests the chain for this instance. */
export interface IngestStatus {
  /**
   * The ingest lease's state (src/lease/lease.ts); `none` when this instance runs no lease: without
   * REDIS_URL or with EVENTS_INGEST_LEASE_MS=0 it ingests the chain for itself, with
   * EVENTS_INGEST=false it follows nothing.
   */
  readonly lease: LeaseState | 'none'
  /** Whether this instance's node event source runs now. */
  readonly running: boolean
  /** Resolves once the lease is not waiting on Redis for an answer (tests: before moving its clock on). */
  whenLeaseIdle (): Promise<void>
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Publish the mini-app's own events (`app.events.publish('room-7', {...})` reaches `app:room-7`), and the stream's hub. */
    events: EventHub
    eventStreams: StreamRegistry
    eventIngest: IngestStatus
  }
}

/** How often an instance looks in Redis for shared events whose message it missed (while reconnecting). */
const SHARED_CATCH_UP_MS = 1000
/** The ingest lease: the Redis key `<prefix>events:ingest`, holding its holder's instance id. */
const INGEST_LEASE = 'events:ingest'

/**
 * Whether an instance ingests the chain in `state` of the ingest lease: when it holds it, and
 * when it is unreachable (each instance then ingests the chain for itself, as without REDIS_URL).
 */
const followsChain = (state: LeaseState): boolean => state === 'held' || state === 'unreachable'

export interface EventsPluginOptions {
  /** Milliseconds since the epoch (tests). */
  now?: (() => number) | undefined
  /** Keep-alives, long-poll waits, stalled streams, the shared log's catch-up, the ingest lease and the interests' refresh (tests move them by hand). */
  timers?: Timers | undefined
}

export default fp<EventsPluginOptions>(async (app, { now = Date.now, timers = REAL_TIMERS }) => {
  const config = app.miniAppConfig
  const retain = { maxEvents: config.EVENTS_RETAIN, maxAgeMs: config.EVENTS_RETAIN_S * 1000 }
  const hub = new EventHub({ ...retain, now }, err => app.log.warn({ err: { message: (err as Error)?.message } }, 'Chain events: a listener threw'))
  const streams = new StreamRegistry({
    maxStreams: config.EVENTS_MAX_STREAMS,
    maxPerClient: config.EVENTS_MAX_STREAMS_PER_CLIENT,
    maxBufferBytes: config.EVENTS_MAX_BUFFER_BYTES,
    maxStallMs: config.EVENTS_MAX_STALL_MS,
    // A client further behind than a reconnect could catch up from is told to resync (at least the resync is held).
    maxBacklog: Math.max(1, config.EVENTS_RETAIN),
    heartbeatMs: config.EVENTS_HEARTBEAT_MS,
    maxPolls: config.EVENTS_MAX_POLLS,
    maxPollsPerClient: config.EVENTS_MAX_POLLS_PER_CLIENT,
  }, timers)
  app.decorate('events', hub)
  app.decorate('eventStreams', streams)

  let closing = false
  let shared: SharedEventLog | undefined
  let catchUp: TimerHandle | undefined
  let interests: ClusterInterests | undefined
  let lease: Lease | undefined
  let resumeBlock: ResumeBlock | undefined
  /** Times this instance took the ingest lease or lost it, for metrics. */
  let leaseChanges = 0
  const link = app.redis
  const instanceId = randomUUID()
  const leaseMs = config.EVENTS_INGEST_LEASE_MS
  if (link !== undefined) {
    shared = new SharedEventLog(link, retain, hub.deliverShared, hub.lostShared)
    hub.share(shared)
    const log = shared
    const check = (): void => {
      log.catchUp().catch(() => {}).finally(() => {
        if (!closing) catchUp = timers.setTimeout(check, SHARED_CATCH_UP_MS)
      })
    }
    catchUp = timers.setTimeout(check, SHARED_CATCH_UP_MS)
  }
  // With the lease, what this instance follows is written whether or not it may ingest the chain: whoever does follows it too.
  if (link !== undefined && leaseMs > 0) {
    const cluster = interests = new ClusterInterests(link, {
      instanceId,
      ttlMs: leaseMs,
      timers,
      local: () => hub.interests.local(),
      onTruncated: what => app.log.warn(`Chain events: ${what}`),
    })
    hub.interests.onChange(() => cluster.changed())
  }

  // A new block drops the answers that follow the tip at once, whichever instance ingested it.
  hub.onChainEvent(event => { if (event.kind === 'block') app.pocketnet.peek()?.noteBlock(event.height) })

  const ingest = new ChainIngest({
    hub,
    client: () => app.pocketnet.get(),
    resumeFrom: async () => hub.lastBlock ?? await resumeBlock?.read() ?? await hub.readDurablePosition(),
    onBlock: block => resumeBlock?.note(block),
    onError: err => app.log.warn({ code: err.code }, `Chain events: ${err.message}`),
    onNoNode: (err, retryMs) => app.log.warn({ code: (err as { code?: unknown }).code }, `Chain events wait for a node: ${err.message}; trying again in ${retryMs / 1000} s`),
  })

  // EVENTS_INGEST_LEASE_MS=0: every instance ingests the chain itself, and the shared log keeps each event once.
  if (config.EVENTS_INGEST && link !== undefined && leaseMs > 0) {
    // What a new holder resumes from is of no use once its events are no longer kept.
    resumeBlock = new ResumeBlock(link, Math.max(leaseMs, config.EVENTS_RETAIN_S * 1000))
    lease = new Lease({
      // The operations keep the names the link's metrics have always given them.
      store: new RedisLeaseStore(link, 'ingest-lease'),
      name: INGEST_LEASE,
      holder: instanceId,
      ttlMs: leaseMs,
      timers,
      onChange (state, previous) {
        // Closing stops the source itself (preClose, below): the socket closes before the lease is released.
        if (state === 'closed') return
        if (state === 'held' || previous === 'held') leaseChanges++
        const following = followsChain(state)
        interests?.setReading(following)
        hub.interests.useCluster(following ? interests?.others : undefined)
        if (state === 'unreachable') app.log.warn('Chain events: the ingest lease is unreachable (Redis has not answered for a whole lease): this instance ingests the chain for itself until Redis is back')
        else if (state === 'held') app.log.info('Chain events: this instance holds the ingest lease and ingests the chain for every instance')
        else if (previous !== 'waiting') app.log.info('Chain events: the ingest lease is held elsewhere: this instance\'s chain events come from the shared log')
        if (closing) return
        if (following) ingest.start()
        else ingest.stop().catch(() => {})
      },
    })
  }

  app.decorate('eventIngest', {
    get lease () { return lease?.state ?? 'none' },
    get running () { return ingest.running },
    whenLeaseIdle: async () => { await lease?.whenIdle() },
  } satisfies IngestStatus)

  registerEventMetrics(app.metrics.registry, hub, streams, () => ingest.stats(), shared, lease === undefined
    ? undefined
    : { held: () => lease?.held === true, changes: () => leaseChanges, othersFollowed: () => interests?.size ?? 0 })

  app.addHook('onReady', async () => {
    interests?.start()
    if (!config.EVENTS_INGEST) return
    if (lease === undefined) ingest.start()
    else await lease.start()
  })
  // Streams end before the server waits for its requests to finish: they never would.
  app.addHook('preClose', async () => {
    closing = true
    timers.clearTimeout(catchUp)
    streams.closeAll()
    // The socket closes before the lease is released: the next holder resumes where this one stopped.
    await ingest.stop()
    await lease?.close()
    await interests?.close()
    shared?.close()
  })
}, { name: 'events', dependencies: ['redis', 'pocketnet-client', 'metrics'] })
