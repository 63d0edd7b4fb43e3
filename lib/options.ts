/** Client options: defaults, environment fallbacks, and validation with messages that name the option. */
import { DEFAULT_CACHE_TTL_MS, type CacheOutcome } from './cache.js'
import type { AttemptEvent } from './node-pool.js'

/**
 * Public nodes the Pocketnet proxy listed as stable at the end of 2024
 * (shared/pocketnet/node-rpc.md, "Public nodes"). A seed, not a truth: nodes come and go.
 */
export const DEFAULT_NODES: readonly string[] = [
  '135.181.196.243', '202.61.253.55', '207.180.201.246', '5.189.141.204', '162.246.52.155',
  '79.143.35.233', '109.197.196.106', '65.21.252.135', '178.217.159.221', '65.21.56.203',
].map(host => `http://${host}:38081`)

export interface ClientOptions {
  /**
   * Base URLs of Pocketnet nodes (`http://host:38081`); calls go to `/public/` unless the URL
   * has a path of its own. Default: `POCKETNET_NODES` (comma-separated), else {@link DEFAULT_NODES}.
   */
  nodes?: string[]
  /** Overall deadline of one call, failover and hedging included. Default: `RPC_DEADLINE_MS`, else 5000. */
  deadlineMs?: number
  /** Longest wait for one node before the call gives up on it. Default: `RPC_TIMEOUT_MS`, else 2000. */
  attemptTimeoutMs?: number
  /** How long {@link PocketNetProxyApi.create} waits for a first node. Default: {@link deadlineMs}. */
  startupTimeoutMs?: number
  /** How often every node is asked for getnodeinfo (jittered ±20 %). Default: `POCKETNET_PROBE_INTERVAL_MS`, else 30000. */
  probeIntervalMs?: number
  /** A node more blocks behind the best known height is not used while others are fresh. Default: `POCKETNET_MAX_LAG_BLOCKS`, else 3. */
  maxLagBlocks?: number
  /** Send a slow call to a second node after the observed p95 latency (100 ms–1 s). Default true. */
  hedging?: boolean
  /** Keep-alive connections per node; a node queues 16 requests for 4 threads, so more rarely helps. Default 16. */
  connectionsPerNode?: number
  /** Largest answer accepted from a node. Default 16 MiB. */
  maxResponseBytes?: number
  /** Called after every attempt on a node, e.g. for metrics. Must not throw. */
  onAttempt?: (event: AttemptEvent) => void
  /**
   * Answers kept in memory. `ttlMs` per method, 0 to turn one off (default getnodeinfo 5 s,
   * getuserprofile 60 s, search 30 s, others 0); at most `maxEntries` (10000) entries and
   * `maxBytes` (64 MiB) of answers. With `serveStale` (default true) an answer past its time to
   * live is still given, for as long again, while one refresh runs in the background; answers
   * that follow the chain tip go at a new block all the same. Identical calls in flight always
   * share one upstream call.
   */
  cache?: { ttlMs?: Record<string, number>, maxEntries?: number, maxBytes?: number, serveStale?: boolean }
  /** Called on every cache lookup (`hit`, `stale`, `miss`, `shared`), e.g. for metrics. Must not throw. */
  onCacheLookup?: (method: string, outcome: CacheOutcome) => void
  /** Where the environment defaults are read. Default `process.env`. */
  env?: Record<string, string | undefined>
}

export interface ResolvedOptions extends Required<Omit<ClientOptions, 'env' | 'onAttempt' | 'onCacheLookup' | 'cache'>>, Pick<ClientOptions, 'onAttempt' | 'onCacheLookup'> {
  cache: { ttlMs: Record<string, number>, maxEntries: number, maxBytes: number, serveStale: boolean }
}

/** Splits a comma-separated node list, as in `POCKETNET_NODES`. */
export function parseNodeList (value: string): string[] {
  return value.split(',').map(item => item.trim()).filter(item => item !== '')
}

function fail (option: string, expected: string, got: unknown): never {
  throw new TypeError(`PocketNetProxyApi.create: option ${option} must be ${expected} (got ${JSON.stringify(got)})`)
}

function isHttpUrl (value: unknown): boolean {
  if (typeof value !== 'string') return false
  try {
    const url = new URL(value)
    return url.protocol === 'http:' || url.protocol === 'https:'
  } catch {
    return false
  }
}

export function resolveOptions (options: ClientOptions = {}): ResolvedOptions {
  if (typeof options !== 'object' || options === null) fail('options', 'an object', options)
  const env = options.env ?? process.env

  /** An integer option, else its environment variable, else the default; named by where it came from. */
  function integer (option: keyof ClientOptions, variable: string | undefined, fallback: number, min: number): number {
    const fromEnv = variable === undefined ? undefined : env[variable]
    const name = options[option] === undefined && fromEnv !== undefined ? variable as string : option
    const value = options[option] ?? (fromEnv === undefined ? fallback : Number(fromEnv))
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
      fail(name, min === 0 ? 'a whole number' : 'a positive integer', options[option] ?? fromEnv)
    }
    return value
  }

  const nodes = options.nodes ?? (env.POCKETNET_NODES ? parseNodeList(env.POCKETNET_NODES) : [...DEFAULT_NODES])
  if (!Array.isArray(nodes) || nodes.length === 0) fail('nodes', 'a non-empty list of http(s) URLs', nodes)
  const badNode = nodes.find(node => !isHttpUrl(node))
  if (badNode !== undefined) fail('nodes', 'a list of http(s) URLs such as http://127.0.0.1:38081', badNode)
  if (options.hedging !== undefined && typeof options.hedging !== 'boolean') fail('hedging', 'true or false', options.hedging)
  if (options.onAttempt !== undefined && typeof options.onAttempt !== 'function') fail('onAttempt', 'a function', typeof options.onAttempt)
  if (options.onCacheLookup !== undefined && typeof options.onCacheLookup !== 'function') fail('onCacheLookup', 'a function', typeof options.onCacheLookup)
  const cache = options.cache ?? {}
  const ttlMs = { ...DEFAULT_CACHE_TTL_MS, ...cache.ttlMs }
  for (const [method, ttl] of Object.entries(ttlMs)) {
    if (!Number.isSafeInteger(ttl) || ttl < 0) fail(`cache.ttlMs.${method}`, 'a whole number of milliseconds', ttl)
  }
  for (const name of ['maxEntries', 'maxBytes'] as const) {
    const value = cache[name]
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 1)) fail(`cache.${name}`, 'a positive integer', value)
  }
  if (cache.serveStale !== undefined && typeof cache.serveStale !== 'boolean') fail('cache.serveStale', 'true or false', cache.serveStale)

  const deadlineMs = integer('deadlineMs', 'RPC_DEADLINE_MS', 5000, 1)
  return {
    nodes: nodes.map(node => node.replace(/\/+$/, '')),
    deadlineMs,
    attemptTimeoutMs: Math.min(deadlineMs, integer('attemptTimeoutMs', 'RPC_TIMEOUT_MS', 2000, 1)),
    startupTimeoutMs: integer('startupTimeoutMs', undefined, deadlineMs, 1),
    probeIntervalMs: integer('probeIntervalMs', 'POCKETNET_PROBE_INTERVAL_MS', 30_000, 1),
    maxLagBlocks: integer('maxLagBlocks', 'POCKETNET_MAX_LAG_BLOCKS', 3, 0),
    hedging: options.hedging ?? true,
    connectionsPerNode: integer('connectionsPerNode', undefined, 16, 1),
    maxResponseBytes: integer('maxResponseBytes', undefined, 16 * 1024 * 1024, 1),
    onAttempt: options.onAttempt,
    onCacheLookup: options.onCacheLookup,
    cache: { ttlMs, maxEntries: cache.maxEntries ?? 10_000, maxBytes: cache.maxBytes ?? 64 * 1024 * 1024, serveStale: cache.serveStale ?? true },
  }
}
