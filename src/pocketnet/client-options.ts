/** The client's options from the service's configuration: the one place the two meet. */
import { parseNodeList, type ClientOptions } from 'pocketnet-client'
import type { AppConfig } from '../config.js'

export function clientOptions (config: AppConfig): ClientOptions {
  return {
    nodes: parseNodeList(config.POCKETNET_NODES),
    deadlineMs: config.RPC_DEADLINE_MS,
    attemptTimeoutMs: config.RPC_TIMEOUT_MS,
    probeIntervalMs: config.POCKETNET_PROBE_INTERVAL_MS,
    maxLagBlocks: config.POCKETNET_MAX_LAG_BLOCKS,
    connectionsPerNode: config.POCKETNET_CONNECTIONS_PER_NODE,
    nodeThreads: config.POCKETNET_NODE_THREADS,
    network: config.POCKETNET_NETWORK,
    cache: {
      ttlMs: { getnodeinfo: config.CACHE_TTL_NODEINFO_MS, getuserprofile: config.CACHE_TTL_PROFILE_MS, search: config.CACHE_TTL_SEARCH_MS },
      maxEntries: config.CACHE_MAX_ENTRIES,
      maxBytes: config.CACHE_MAX_BYTES,
      serveStale: config.CACHE_SERVE_STALE,
    },
  }
}
