/**
 * Where a node's WebSocket is: the host of its RPC URL, the port its `getnodeinfo` reports as
 * `ports.wss` (the plain WebSocket port, whatever the name says), path `/ws`. An `https` node gets
 * `wss:`; a node behind a proxy that moves the socket elsewhere needs the `webSocketUrl` option.
 */
import type { Timers } from '../timers.js'
import { NodeEventError } from './errors.js'
import { blockHash, wholeNumber } from './wire-values.js'

/** The WebSocket URL of the node at `nodeUrl` (an RPC base URL, as in the client's `nodes`), given its port. */
export function webSocketUrl (nodeUrl: string, port: number): string {
  const parsed = new URL(nodeUrl)
  return `${parsed.protocol === 'https:' ? 'wss:' : 'ws:'}//${parsed.hostname}:${port}/ws`
}

export interface PortLookup {
  /** The node in messages ("node 2"). */
  node: string
  timeoutMs: number
  timers: Timers
  /** Abandons the lookup (the source closing). */
  signal?: AbortSignal
}

/** What a node's getnodeinfo says that the source uses: its WebSocket port, and its tip (when it gave one readable). */
export interface ReportedSocket {
  port: number
  tip: { height: number, blockHash: string } | undefined
}

/**
 * Asks the node itself (not the pool: another node would give its own) for its WebSocket port.
 * @throws EVENTS_ERR_SOCKET when the node does not answer in time or reports no port
 */
export async function reportedWebSocketPort (nodeUrl: string, lookup: PortLookup): Promise<ReportedSocket> {
  const parsed = new URL(nodeUrl)
  // As the client's transport: a bare base URL means the public path.
  if (parsed.pathname === '/') parsed.pathname = '/public/'
  const abort = new AbortController()
  const timer = lookup.timers.setTimeout(() => abort.abort(), lookup.timeoutMs)
  const signal = lookup.signal === undefined ? abort.signal : AbortSignal.any([abort.signal, lookup.signal])
  let body: unknown
  try {
    const response = await fetch(parsed, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ method: 'getnodeinfo', params: [], id: 1 }),
      signal,
    })
    body = await response.json()
  } catch (err) {
    const why = abort.signal.aborted ? `did not answer getnodeinfo within ${lookup.timeoutMs} ms` : 'did not answer getnodeinfo'
    throw new NodeEventError('EVENTS_ERR_SOCKET', `${lookup.node} ${why}`, { node: lookup.node, cause: err })
  } finally {
    lookup.timers.clearTimeout(timer)
  }
  const result = (body as { result?: { ports?: { wss?: unknown }, lastblock?: { height?: unknown, hash?: unknown } } } | null)?.result
  const port = wholeNumber(result?.ports?.wss)
  if (port === undefined || port < 1 || port > 65_535) {
    throw new NodeEventError('EVENTS_ERR_SOCKET', `${lookup.node} reports no WebSocket port in getnodeinfo`, { node: lookup.node })
  }
  const height = wholeNumber(result?.lastblock?.height)
  const hash = blockHash(result?.lastblock?.hash)
  return { port, tip: height === undefined || hash === undefined ? undefined : { height, blockHash: hash } }
}
