/**
 * The live events' metrics, read from their own counts when Prometheus scrapes (no work per
 * event): open streams and waiting polls, events by topic kind, sent, replayed, resyncs, slow clients
 * dropped; the node socket's state, reconnects and the calls the ingest makes per kind; the
 * re-orgs the ingest reported, by what showed them (a chain not the node's is one); with
 * REDIS_URL, what the shared log took, found there already or could not take, and its holes;
 * whether this instance holds the ingest lease, how often it took or lost it, and how many
 * addresses and posts it follows for the other instances.
 */
import { Counter, Gauge, type Registry } from 'prom-client'
import type { NodeEventSourceStats } from 'pocketnet-client'
import type { EventHub } from './hub.js'
import type { SharedEventLog } from './shared-log.js'
import type { StreamRegistry } from './streams.js'

/** A counter whose value is read from `read` at each scrape. */
function countedFrom (registry: Registry, name: string, help: string, read: () => number): void {
  const counter = new Counter({
    name,
    help,
    registers: [registry],
    collect () {
      counter.reset()
      counter.inc(read())
    },
  })
}

/** The ingest lease, read at each scrape (src/lease/lease.ts, cluster-interests.ts). */
export interface LeaseReadings {
  held: () => boolean
  changes: () => number
  /** Addresses and posts followed for the other instances. */
  othersFollowed: () => number
}

export function registerEventMetrics (registry: Registry, hub: EventHub, streams: StreamRegistry, source: () => NodeEventSourceStats | undefined, shared?: SharedEventLog, lease?: LeaseReadings): void {
  new Gauge({ name: 'events_streams_open', help: 'Event streams open now (GET /api/events)', registers: [registry], collect () { this.set(streams.size) } }) // eslint-disable-line no-new
  new Gauge({ name: 'events_polls_waiting', help: 'Long-polls waiting for an event now (GET /api/events/poll)', registers: [registry], collect () { this.set(streams.polls) } }) // eslint-disable-line no-new
  const published = new Counter({
    name: 'events_published_total',
    help: 'Events published, by topic kind (blocks, address, content, app, user, payment)',
    labelNames: ['kind'],
    registers: [registry],
    collect () {
      published.reset()
      for (const [kind, count] of Object.entries(hub.counts.published)) published.inc({ kind }, count)
    },
  })
  countedFrom(registry, 'events_streams_opened_total', 'Event streams opened', () => streams.counts.opened)
  countedFrom(registry, 'events_sent_total', 'Events written to streams', () => streams.counts.eventsSent)
  countedFrom(registry, 'events_replayed_total', 'Events replayed to streams that reconnected', () => streams.counts.replayed)
  countedFrom(registry, 'events_resyncs_total', 'Streams and polls told to resync: what they missed was no longer kept, or a stream fell further behind than that', () => streams.counts.resyncs)
  countedFrom(registry, 'events_dropped_slow_total', 'Streams dropped, once each, because their client read too little: more than EVENTS_MAX_BUFFER_BYTES left unread, or nothing read for EVENTS_MAX_STALL_MS', () => streams.counts.droppedSlow)
  new Gauge({ name: 'events_node_socket_open', help: '1 while the node event source holds a node WebSocket', registers: [registry], collect () { this.set(source()?.socket === 'open' ? 1 : 0) } }) // eslint-disable-line no-new
  countedFrom(registry, 'events_node_socket_reconnects_total', 'Node WebSockets registered again after one was lost', () => source()?.reconnects ?? 0)
  const calls = new Counter({
    name: 'events_node_calls_total',
    help: 'Calls the node event source made, by method (getlastblocks: new blocks and catch-up; getnotifications: one per block while something is followed; getnodeinfo: a node\'s WebSocket port)',
    labelNames: ['method'],
    registers: [registry],
    collect () {
      calls.reset()
      const stats = source()
      if (stats === undefined) return
      calls.inc({ method: 'getlastblocks' }, stats.blockCalls)
      calls.inc({ method: 'getnotifications' }, stats.notificationCalls)
      calls.inc({ method: 'getnodeinfo' }, stats.portLookups)
    },
  })
  const reorgs = new Counter({
    name: 'events_chain_reorgs_total',
    help: 'Re-orgs the ingest reported, by what showed them: resume (the block it resumed from, such as the payments cursor, is not on the node\'s chain), node-report (a node\'s getnodeinfo gave another tip than the chain reported), new-blocks (reading new blocks)',
    labelNames: ['found'],
    registers: [registry],
    collect () {
      reorgs.reset()
      const stats = source()
      if (stats === undefined) return
      for (const [found, count] of Object.entries(stats.reorgsFound)) reorgs.inc({ found }, count)
    },
  })
  if (lease !== undefined) {
    new Gauge({ name: 'events_ingest_lease_held', help: '1 while this instance holds the ingest lease and ingests the chain for every instance on the same Redis', registers: [registry], collect () { this.set(lease.held() ? 1 : 0) } }) // eslint-disable-line no-new
    countedFrom(registry, 'events_ingest_lease_changes_total', 'Times this instance took the ingest lease or lost it', lease.changes)
    new Gauge({ name: 'events_ingest_followed_for_others', help: 'Addresses and posts this instance follows for subscribers on the other instances (while it holds the ingest lease)', registers: [registry], collect () { this.set(lease.othersFollowed()) } }) // eslint-disable-line no-new
  }
  if (shared === undefined) return
  const appended = new Counter({
    name: 'events_shared_total',
    help: 'Events this instance published with REDIS_URL, by outcome: shared (in the Redis Stream), duplicate (another instance\'s ingest had it), unshared (Redis could not take it: delivered here alone)',
    labelNames: ['outcome'],
    registers: [registry],
    collect () {
      appended.reset()
      appended.inc({ outcome: 'shared' }, shared.counts.shared)
      appended.inc({ outcome: 'duplicate' }, shared.counts.duplicates)
      appended.inc({ outcome: 'unshared' }, shared.counts.unshared)
    },
  })
  countedFrom(registry, 'events_shared_holes_total', 'Times shared events were lost before this instance could deliver them (its streams were told to resync)', () => shared.counts.holes)
}
