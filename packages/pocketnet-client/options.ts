/**
 * Client options: every default and every accepted range, in one place (the service's configuration
 * takes its defaults and bounds from here); validation with messages that name the option; and
 * {@link clientOptionsFromEnv}, the only code in pocketnet-client that reads the environment, and
 * only when called.
 */
import { DEFAULT_CACHE_TTL_MS, type CacheOutcome } from './cache.js'
import { POCKETNET_NETWORKS, type PocketnetNetwork } from './address.js'
import type { AttemptEvent, OverloadEvent } from './node-pool.js'
import { NODE_THREADS } from './node-slots.js'
import type { RedisLink } from './redis/redis-link.js'
import type { SharedOutcome } from './redis/shared-answers.js'

/**
 * Public nodes the Pocketnet proxy listed as stable at the end of 2024 (docs/pocketnet-node.md,
 * "Public nodes"). A seed, not a truth: nodes come and go.
 */
export const DEFAULT_NODES: readonly string[] = [
  '135.181.196.243', '202.61.253.55', '207.180.201.246', '5.189.141.204', '162.246.52.155',
  '79.143.35.233', '109.197.196.106', '65.21.252.135', '178.217.159.221', '65.21.56.203',
].map(host => `http://${host}:38081`)

/** A whole-number option: its default and the range {@link resolveOptions} accepts. */
export interface OptionRange {
  readonly default: number
  readonly min: number
  readonly max: number
}

const MIB = 1024 * 1024

/** The whole-number options of {@link ClientOptions}, with their defaults and ranges. */
export const OPTION_RANGES = {
  deadlineMs: { default: 5000, min: 100, max: 120_000 },
  attemptTimeoutMs: { default: 2000, min: 50, max: 120_000 },
  /** Default: the resolved deadlineMs. */
  startupTimeoutMs: { default: 5000, min: 100, max: 120_000 },
  probeIntervalMs: { default: 30_000, min: 50, max: 3_600_000 },
  maxLagBlocks: { default: 3, min: 0, max: 10_000 },
  // A node serves 4 calls at once and queues 16 more: the adaptive limit starts at 4 and stays
  // within what the node's queue takes.
  connectionsPerNode: { default: 16, min: 1, max: 1024 },
  nodeThreads: { default: NODE_THREADS, min: 1, max: 1024 },
  maxResponseBytes: { default: 16 * MIB, min: 1024, max: 1024 * MIB },
} as const satisfies Record<string, OptionRange>

/** The answer cache's bounds ({@link ClientOptions.cache}); time-to-live defaults per method are in {@link DEFAULT_CACHE_TTL_MS}. */
export const CACHE_RANGES = {
  ttlMs: { default: 0, min: 0, max: 86_400_000 },
  maxEntries: { default: 10_000, min: 1, max: 10_000_000 },
  maxBytes: { default: 64 * MIB, min: 1024, max: 16 * 1024 * MIB },
} as const satisfies Record<string, OptionRange>

export interface ClientOptions {
  /**
   * Base URLs of Pocketnet nodes (`http://host:38081`); calls go to `/public/` unless the URL
   * has a path of its own. Default {@link DEFAULT_NODES}.
   */
  nodes?: string[]
  /** Overall deadline of one call, failover and hedging included. Default 5000 ({@link OPTION_RANGES}). */
  deadlineMs?: number
  /** Longest wait for one node before the call gives up on it. Default 2000. */
  attemptTimeoutMs?: number
  /** How long {@link PocketNetProxyApi.create} waits for a first node. Default: {@link deadlineMs}. */
  startupTimeoutMs?: number
  /** How often every node is asked for getnodeinfo (jittered ±20 %). Default 30000. */
  probeIntervalMs?: number
  /** A node more blocks behind the best known height is not used while others are fresh. Default 3. */
  maxLagBlocks?: number
  /** Which network's addresses the typed methods accept: `main` (`P…`, default), `test` (`T…`) or `regtest` (`m…`/`n…`). */
  network?: PocketnetNetwork
  /** Send a slow call to a second node after the observed p95 latency (100 ms–1 s). Default true. */
  hedging?: boolean
  /**
   * Most calls in flight on one node (one keep-alive connection each, plus one for the health
   * probe). A node serves 4 at once with 4 threads and queues 16 more: the client gives each node
   * 4 calls at once to start with and raises that, up to this bound, while the node answers as
   * fast as it does unloaded. Calls beyond wait for a slot, or are refused with
   * RPC_ERR_OVERLOADED when they could not be answered in time. Default 16. With several
   * instances in front of the same nodes, divide it among them.
   */
  connectionsPerNode?: number
  /**
   * What a node serves at once: its RPC threads (`-rpcthreads`, 4 on public nodes). Each node's
   * limit starts here and never goes below it (nor above `connectionsPerNode`). Raise it for
   * nodes of your own with more threads, or set it to `connectionsPerNode` for a fixed limit.
   * Default 4.
   */
  nodeThreads?: number
  /** Largest answer accepted from a node. Default 16 MiB. */
  maxResponseBytes?: number
  /** Called after every attempt on a node, e.g. for metrics. Must not throw. */
  onAttempt?: (event: AttemptEvent) => void
  /** Called when a call got no slot on a node (refused at once, or waited until it could no longer be answered in time). Must not throw. */
  onOverload?: (event: OverloadEvent) => void
  /**
   * Answers kept in memory. `ttlMs` per method, 0 to turn one off (default
   * {@link DEFAULT_CACHE_TTL_MS}, others 0); at most `maxEntries` (10000) entries and
   * `maxBytes` (64 MiB) of answers. With `serveStale` (default true) an answer past its time to
   * live is still given, for as long again, while one refresh runs in the background; answers
   * that depend on the chain tip go at a new block all the same. Identical calls in flight always
   * share one upstream call.
   */
  cache?: { ttlMs?: Record<string, number>, maxEntries?: number, maxBytes?: number, serveStale?: boolean }
  /** Called on every cache lookup (`hit`, `stale`, `miss`, `shared`), e.g. for metrics. Must not throw. */
  onCacheLookup?: (method: string, outcome: CacheOutcome) => void
  /**
   * Redis shared with other clients (other processes, other machines): a cached method's answer
   * one of them fetched serves all, and identical calls in flight make one upstream call. The
   * in-process cache stays in front. Redis is never needed: when it is away or slow, calls go on
   * without it. The caller creates the link and closes it after the client.
   * @example const redis = new RedisLink({ url: 'redis://127.0.0.1:6379' })
   */
  redis?: RedisLink
  /** Called when a miss of the in-process cache asks Redis (`hit`, `miss`, `joined`, `unshared`). Must not throw. */
  onSharedLookup?: (method: string, outcome: SharedOutcome) => void
  /**
   * Milliseconds on a monotonic clock, for deadlines, circuit cooldowns and cache lifetimes.
   * Default `performance.now`. Tests pass a clock they move by hand.
   */
  clock?: () => number
}

type Hooks = 'onAttempt' | 'onOverload' | 'onCacheLookup' | 'onSharedLookup' | 'clock' | 'redis'

export interface ResolvedOptions extends Required<Omit<ClientOptions, Hooks | 'cache'>>, Pick<ClientOptions, Hooks> {
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

/** `value` if it is a whole number within `range`, else a TypeError naming `option`. */
function inRange (option: string, value: unknown, range: OptionRange): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < range.min || value > range.max) {
    fail(option, `an integer from ${range.min} to ${range.max}`, value)
  }
  return value
}

/** Validates `options` and fills the defaults. Reads nothing from the environment. */
export function resolveOptions (options: ClientOptions = {}): ResolvedOptions {
  if (typeof options !== 'object' || options === null) fail('options', 'an object', options)
  const integer = (option: keyof typeof OPTION_RANGES, fallback: number = OPTION_RANGES[option].default): number =>
    inRange(option, options[option] ?? fallback, OPTION_RANGES[option])

  const nodes = options.nodes ?? [...DEFAULT_NODES]
  if (!Array.isArray(nodes) || nodes.length === 0) fail('nodes', 'a non-empty list of http(s) URLs', nodes)
  const badNode = nodes.find(node => !isHttpUrl(node))
  if (badNode !== undefined) fail('nodes', 'a list of http(s) URLs such as http://127.0.0.1:38081', badNode)
  if (options.hedging !== undefined && typeof options.hedging !== 'boolean') fail('hedging', 'true or false', options.hedging)
  if (options.network !== undefined && !POCKETNET_NETWORKS.includes(options.network)) fail('network', '"main", "test" or "regtest"', options.network)
  for (const name of ['onAttempt', 'onOverload', 'onCacheLookup', 'onSharedLookup', 'clock'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') fail(name, 'a function', typeof options[name])
  }
  const cache = options.cache ?? {}
  const ttlMs = { ...DEFAULT_CACHE_TTL_MS, ...cache.ttlMs }
  for (const [method, ttl] of Object.entries(ttlMs)) inRange(`cache.ttlMs.${method}`, ttl, CACHE_RANGES.ttlMs)
  if (cache.serveStale !== undefined && typeof cache.serveStale !== 'boolean') fail('cache.serveStale', 'true or false', cache.serveStale)

  const deadlineMs = integer('deadlineMs')
  return {
    nodes: nodes.map(node => node.replace(/\/+$/, '')),
    deadlineMs,
    attemptTimeoutMs: Math.min(deadlineMs, integer('attemptTimeoutMs')),
    startupTimeoutMs: integer('startupTimeoutMs', deadlineMs),
    probeIntervalMs: integer('probeIntervalMs'),
    maxLagBlocks: integer('maxLagBlocks'),
    network: options.network ?? 'main',
    hedging: options.hedging ?? true,
    connectionsPerNode: integer('connectionsPerNode'),
    nodeThreads: integer('nodeThreads'),
    maxResponseBytes: integer('maxResponseBytes'),
    onAttempt: options.onAttempt,
    onOverload: options.onOverload,
    onCacheLookup: options.onCacheLookup,
    onSharedLookup: options.onSharedLookup,
    clock: options.clock,
    redis: options.redis,
    cache: {
      ttlMs,
      maxEntries: inRange('cache.maxEntries', cache.maxEntries ?? CACHE_RANGES.maxEntries.default, CACHE_RANGES.maxEntries),
      maxBytes: inRange('cache.maxBytes', cache.maxBytes ?? CACHE_RANGES.maxBytes.default, CACHE_RANGES.maxBytes),
      serveStale: cache.serveStale ?? true,
    },
  }
}

/** The environment variables {@link clientOptionsFromEnv} reads, and the option each one sets. */
export const CLIENT_ENV = {
  POCKETNET_NODES: 'nodes',
  RPC_DEADLINE_MS: 'deadlineMs',
  RPC_TIMEOUT_MS: 'attemptTimeoutMs',
  POCKETNET_PROBE_INTERVAL_MS: 'probeIntervalMs',
  POCKETNET_MAX_LAG_BLOCKS: 'maxLagBlocks',
  POCKETNET_CONNECTIONS_PER_NODE: 'connectionsPerNode',
  POCKETNET_NODE_THREADS: 'nodeThreads',
  POCKETNET_NETWORK: 'network',
} as const satisfies Record<string, keyof ClientOptions>

/**
 * Client options from environment variables ({@link CLIENT_ENV}), for scripts that use
 * pocketnet-client without the service; unset or empty variables are left out, so the defaults
 * apply. Nothing in pocketnet-client reads the environment otherwise.
 * @throws TypeError naming the variable when one is not a whole number
 * @example const api = await PocketNetProxyApi.create(clientOptionsFromEnv())
 */
export function clientOptionsFromEnv (env: Record<string, string | undefined> = process.env): ClientOptions {
  const options: Record<string, unknown> = {}
  for (const [variable, option] of Object.entries(CLIENT_ENV)) {
    const value = env[variable]?.trim()
    if (value === undefined || value === '') continue
    if (option === 'nodes') {
      options.nodes = parseNodeList(value)
    } else if (option === 'network') {
      options.network = value as PocketnetNetwork
    } else if (/^\d+$/.test(value)) {
      options[option] = Number(value)
    } else {
      throw new TypeError(`clientOptionsFromEnv: ${variable} must be a whole number (got ${JSON.stringify(value)})`)
    }
  }
  return options as ClientOptions
}
