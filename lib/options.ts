/** Client options: defaults, environment fallbacks, and validation with messages that name the option. */

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
  /** Overall deadline of one call, failover included. Default: `RPC_TIMEOUT_MS`, else 5000. */
  timeoutMs?: number
  /** Longest wait for one node before the next is tried (the last node gets what is left). Default 2000. */
  attemptTimeoutMs?: number
  /** How long {@link PocketNetProxyApi.create} waits for a first node to answer. Default: {@link timeoutMs}. */
  startupTimeoutMs?: number
  /** Keep-alive connections per node. A node serves 16 queued requests on 4 threads. Default 8. */
  connectionsPerNode?: number
  /** Largest answer accepted from a node. Default 16 MiB. */
  maxResponseBytes?: number
  /** Where `POCKETNET_NODES` and `RPC_TIMEOUT_MS` are read. Default `process.env`. */
  env?: Record<string, string | undefined>
}

export type ResolvedOptions = Required<Omit<ClientOptions, 'env'>>

/** Splits a comma-separated node list, as in `POCKETNET_NODES`. */
export function parseNodeList (value: string): string[] {
  return value.split(',').map(item => item.trim()).filter(item => item !== '')
}

function fail (option: string, expected: string, got: unknown): never {
  throw new TypeError(`PocketNetProxyApi.create: option ${option} must be ${expected} (got ${JSON.stringify(got)})`)
}

function positiveInteger (option: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) fail(option, 'a positive integer', value)
  return value
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
  const nodes = options.nodes ?? (env.POCKETNET_NODES ? parseNodeList(env.POCKETNET_NODES) : [...DEFAULT_NODES])
  if (!Array.isArray(nodes) || nodes.length === 0) fail('nodes', 'a non-empty list of http(s) URLs', nodes)
  const badNode = nodes.find(node => !isHttpUrl(node))
  if (badNode !== undefined) fail('nodes', 'a list of http(s) URLs such as http://127.0.0.1:38081', badNode)
  const envTimeout = env.RPC_TIMEOUT_MS === undefined ? undefined : Number(env.RPC_TIMEOUT_MS)
  const timeoutMs = positiveInteger(options.timeoutMs === undefined ? 'RPC_TIMEOUT_MS' : 'timeoutMs', options.timeoutMs ?? envTimeout ?? 5000)
  return {
    nodes: nodes.map(node => node.replace(/\/+$/, '')),
    timeoutMs,
    attemptTimeoutMs: positiveInteger('attemptTimeoutMs', options.attemptTimeoutMs ?? Math.min(2000, timeoutMs)),
    startupTimeoutMs: positiveInteger('startupTimeoutMs', options.startupTimeoutMs ?? timeoutMs),
    connectionsPerNode: positiveInteger('connectionsPerNode', options.connectionsPerNode ?? 8),
    maxResponseBytes: positiveInteger('maxResponseBytes', options.maxResponseBytes ?? 16 * 1024 * 1024),
  }
}
