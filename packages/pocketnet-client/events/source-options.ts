/**
 * The node event source's options: what it needs from the client, what it reports to, and its
 * timings, each with a default and an accepted range ({@link EVENT_SOURCE_RANGES}).
 */
import type { BlockPosition } from './chain-event.js'
import type { CallOptions } from '../client.js'
import type { NodeSnapshot, NodeTipReport } from '../node-pool.js'
import { REAL_TIMERS, type Timers } from '../timers.js'
import type { ChainEvent } from './chain-event.js'
import type { NodeEventError } from './errors.js'

/** What the source uses of the client: `PocketNetProxyApi` has it all. */
export interface EventSourceClient {
  nodes (): NodeSnapshot[]
  readonly bestHeight: number | undefined
  callRaw (method: string, params?: unknown[], options?: CallOptions): Promise<unknown>
  /**
   * Each node's word on its tip (the pool's probes): how a re-org that leaves the height unchanged,
   * which no node announces, is seen at once. Without it, such a re-org shows at the next block.
   */
  watchNodeTips? (listener: (report: NodeTipReport) => void): () => void
}

export interface NodeEventSourceOptions {
  /** The client whose pool says which nodes are healthy, and through which every catch-up call goes. */
  api: EventSourceClient
  /** Called with each event, in chain order. Must not throw (what it throws is reported to `onError`). */
  onEvent: (event: ChainEvent) => void
  /** What went wrong, for logs: the source goes on by itself. */
  onError?: (err: NodeEventError) => void
  /**
   * The addresses whose payments and social events to report, asked once per block (the
   * addresses with subscribers now). Default: none, and then no `getnotifications` call is made.
   */
  addressesOfInterest?: () => Iterable<string>
  /** Post hashes whose comments, scores, boosts and reposts to report whoever they notify. Default: none. */
  contentOfInterest?: () => Iterable<string>
  /** The last block a previous run reported: the blocks after it are read back (within maxCatchUpBlocks). Default: start at the tip. */
  resumeFrom?: BlockPosition
  /** Most blocks read back after a gap; beyond it the oldest are skipped and reported (EVENTS_ERR_GAP). Default 100. */
  maxCatchUpBlocks?: number
  /**
   * The address the socket registers. The node pushes blocks to every socket whatever it watches,
   * so the default is the address of the all-zero key hash, which nobody can spend from.
   */
  watchAddress?: string
  /** A node's WebSocket URL, for nodes whose socket is not at their host, port `ports.wss`, path `/ws` (a proxy in front). */
  webSocketUrl?: (node: { name: string, url: string }) => string | undefined
  /** From opening a socket to the node's `Registered`. Default 10000. */
  connectTimeoutMs?: number
  /** Keep-alive interval. Default 20000. */
  pingIntervalMs?: number
  /** Silence after which a socket is dropped. Default 50000. */
  silenceTimeoutMs?: number
  /** First and longest wait before another socket attempt (doubling, with jitter). Defaults 1000 and 60000. */
  reconnectMinMs?: number
  reconnectMaxMs?: number
  /** How often blocks are polled while no socket is held. Default 15000. */
  pollIntervalMs?: number
  /** Wait before reading again after a failed catch-up read. Default 5000. */
  retryDelayMs?: number
  /** How long a node whose socket failed is passed over while another can be tried. Default 60000. */
  nodeCooldownMs?: number
  /** Default: Node's timers, unreferenced. */
  timers?: Timers
  /** Milliseconds on a monotonic clock. Default performance.now. */
  clock?: () => number
  /** A number in [0, 1), for the choice of node and the backoff's jitter. Default Math.random. */
  random?: () => number
}

export interface OptionRange { min: number, max: number, default: number }

export const EVENT_SOURCE_RANGES = {
  maxCatchUpBlocks: { min: 1, max: 10_000, default: 100 },
  connectTimeoutMs: { min: 1, max: 600_000, default: 10_000 },
  pingIntervalMs: { min: 1, max: 600_000, default: 20_000 },
  silenceTimeoutMs: { min: 1, max: 3_600_000, default: 50_000 },
  reconnectMinMs: { min: 1, max: 600_000, default: 1_000 },
  reconnectMaxMs: { min: 1, max: 3_600_000, default: 60_000 },
  pollIntervalMs: { min: 1, max: 3_600_000, default: 15_000 },
  retryDelayMs: { min: 1, max: 3_600_000, default: 5_000 },
  nodeCooldownMs: { min: 0, max: 86_400_000, default: 60_000 },
} as const satisfies Record<string, OptionRange>

/** Base58Check of version 0x37 and twenty zero bytes. */
export const DEFAULT_WATCH_ADDRESS = 'P8bB9yPr3vVByqfmM5KXftyGckAtAdu6f8'

type Timing = keyof typeof EVENT_SOURCE_RANGES

export type ResolvedSourceOptions = Required<Pick<NodeEventSourceOptions, 'api' | 'onEvent' | 'watchAddress' | 'timers' | 'clock' | 'random'>>
  & Pick<NodeEventSourceOptions, 'onError' | 'addressesOfInterest' | 'contentOfInterest' | 'resumeFrom' | 'webSocketUrl'>
  & Record<Timing, number>

function fail (option: string, expected: string, got: unknown): never {
  throw new TypeError(`createNodeEventSource: option ${option} must be ${expected} (got ${typeof got === 'function' ? 'a function' : JSON.stringify(got)})`)
}

/** Validates `options` and fills the defaults. */
export function resolveSourceOptions (options: NodeEventSourceOptions): ResolvedSourceOptions {
  if (typeof options !== 'object' || options === null) fail('options', 'an object', options)
  const api = options.api
  if (typeof api?.nodes !== 'function' || typeof api.callRaw !== 'function') fail('api', 'a PocketNetProxyApi', typeof api)
  if (typeof options.onEvent !== 'function') fail('onEvent', 'a function', options.onEvent)
  for (const name of ['onError', 'addressesOfInterest', 'contentOfInterest', 'webSocketUrl', 'clock', 'random'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') fail(name, 'a function', options[name])
  }
  const resume = options.resumeFrom
  if (resume !== undefined && (!Number.isSafeInteger(resume.height) || resume.height < 1 || !/^[0-9a-f]{64}$/i.test(resume.blockHash))) {
    fail('resumeFrom', '{height: a whole number from 1, blockHash: 64 hex digits}', resume)
  }
  const watchAddress = options.watchAddress ?? DEFAULT_WATCH_ADDRESS
  if (typeof watchAddress !== 'string' || watchAddress === '') fail('watchAddress', 'an address', watchAddress)
  const timings = {} as Record<Timing, number>
  for (const [name, range] of Object.entries(EVENT_SOURCE_RANGES) as Array<[Timing, OptionRange]>) {
    const value = options[name] ?? range.default
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < range.min || value > range.max) fail(name, `an integer from ${range.min} to ${range.max}`, value)
    timings[name] = value
  }
  if (timings.reconnectMaxMs < timings.reconnectMinMs) fail('reconnectMaxMs', `at least reconnectMinMs (${timings.reconnectMinMs})`, timings.reconnectMaxMs)
  return {
    ...timings,
    api,
    onEvent: options.onEvent,
    onError: options.onError,
    addressesOfInterest: options.addressesOfInterest,
    contentOfInterest: options.contentOfInterest,
    resumeFrom: resume === undefined ? undefined : { height: resume.height, blockHash: resume.blockHash.toLowerCase() },
    webSocketUrl: options.webSocketUrl,
    watchAddress,
    timers: options.timers ?? REAL_TIMERS,
    clock: options.clock ?? (() => performance.now()),
    random: options.random ?? Math.random,
  }
}
