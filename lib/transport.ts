/**
 * One JSON-RPC POST to one node, over a keep-alive undici Pool: deadline, body-size cap,
 * parse, and classification of every failure into an error with a stable code.
 * Wire facts: shared/pocketnet/node-rpc.md, "Transport".
 */
import { Pool, type Dispatcher } from 'undici'
import type { Cancel } from './cancel.js'
import { RpcNodeError, RpcTimeoutError, RpcTransportError } from './errors.js'

export interface TransportOptions {
  /** Name used in messages instead of the URL ("node 2"). */
  name: string
  connections: number
  maxResponseBytes: number
}

/** A node's `result`, with the size of its answer (for the cache's byte bound). */
export interface RpcAnswer {
  result: unknown
  bytes: number
}

export interface PostOptions {
  timeoutMs: number
  /**
   * The attempt's cancel switch, owned by the caller, who may pull it (hedge lost, client
   * closed); the transport pulls it too when `timeoutMs` passes, and listens to it until the
   * answer is in. One per attempt.
   */
  cancel: Cancel
}

const HEADERS = { 'content-type': 'application/json', accept: 'application/json' }
const TIMED_OUT = Symbol('timed out')

// undici and node:net codes a person can act on; anything else is named by its code alone,
// because raw messages carry the node's address.
const NETWORK_FAILURES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection reset',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_SOCKET: 'connection closed before the answer was complete',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_CLOSED: 'connection closed',
  UND_ERR_DESTROYED: 'connection closed',
  HPE_INVALID_CONSTANT: 'answer is not valid HTTP',
}

// RPC errors that blame the request itself: another node would answer the same, so they are
// returned as they are. Any other RPC error (-28 warming up, -32603 internal, 500 `sql request
// timeout`, ...) says the node is unwell: ask another. Codes: shared/pocketnet/node-rpc.md.
const REQUEST_ERROR_CODES = new Set([
  -3, // wrong type
  -5, // invalid address or key
  -8, // invalid parameter
  -32600, // invalid request
  -32601, // method not found
  -32602, // invalid params
  -32700, // parse error
])

export class NodeTransport {
  readonly url: string
  readonly name: string
  #pool: Pool
  #path: string
  #maxResponseBytes: number

  constructor (url: string, options: TransportOptions) {
    const parsed = new URL(url)
    this.url = url
    this.name = options.name
    this.#path = parsed.pathname === '/' ? '/public/' : parsed.pathname
    this.#maxResponseBytes = options.maxResponseBytes
    this.#pool = new Pool(parsed.origin, {
      connections: options.connections,
      maxResponseSize: options.maxResponseBytes,
      keepAliveTimeout: 10_000,
      // Deadlines are ours (see post); undici's own would only fire later.
      headersTimeout: 0,
      bodyTimeout: 0,
    })
  }

  /** Sends one call and resolves with the node's `result`. */
  post (method: string, params: unknown[], options: PostOptions): Promise<RpcAnswer> {
    const { cancel, timeoutMs } = options
    if (cancel.cancelled) return Promise.reject(cancel.reason)
    // undici's dispatch() rather than request(): no body stream and no AbortSignal per call,
    // which were a good part of a cold request's CPU.
    return new Promise<RpcAnswer>((resolve, reject) => {
      let request: Dispatcher.DispatchController | undefined
      let status = 0
      const chunks: Buffer[] = []
      let bytes = 0
      const timer = setTimeout(() => cancel.cancel(TIMED_OUT), timeoutMs)
      const settle = (): void => {
        clearTimeout(timer)
        cancel.listen(undefined)
      }
      cancel.listen(reason => {
        clearTimeout(timer)
        request?.abort(new Error('cancelled'))
        reject(reason === TIMED_OUT
          ? new RpcTimeoutError(method, `${this.name} did not answer ${method} within ${timeoutMs} ms`, { timeoutMs, node: this.url })
          : reason)
      })
      this.#pool.dispatch({ path: this.#path, method: 'POST', headers: HEADERS, body: JSON.stringify({ method, params }) }, {
        onRequestStart: (controller) => {
          // A request that waited for a free connection may have been cancelled meanwhile.
          if (cancel.cancelled) controller.abort(new Error('cancelled'))
          else request = controller
        },
        onResponseStart: (_controller, statusCode) => {
          status = statusCode
        },
        onResponseData: (_controller, chunk) => {
          chunks.push(chunk)
          bytes += chunk.length
        },
        onResponseEnd: () => {
          if (cancel.cancelled) return
          settle()
          const text = (chunks.length === 1 ? chunks[0] as Buffer : Buffer.concat(chunks, bytes)).toString('utf8')
          try {
            resolve({ result: this.#readAnswer(method, status, text), bytes })
          } catch (err) {
            reject(err)
          }
        },
        onResponseError: (_controller, err) => {
          if (cancel.cancelled) return
          settle()
          reject(this.#classify(method, err))
        },
      })
    })
  }

  async close (): Promise<void> {
    await this.#pool.destroy()
  }

  #readAnswer (method: string, status: number, text: string): unknown {
    const body = parseJsonObject(text)
    if (body === undefined) {
      const why = status === 500 && text.includes('Work queue depth exceeded')
        ? 'is overloaded (Work queue depth exceeded)'
        : `answered HTTP ${status} with a body that is not JSON`
      throw new RpcTransportError(method, `${this.name} ${why}`, { node: this.url })
    }
    const error = body.error as { code?: unknown, message?: unknown } | null | undefined
    if (error !== null && typeof error === 'object') {
      const rpcCode = typeof error.code === 'number' ? error.code : 0
      const rpcMessage = typeof error.message === 'string' ? error.message : 'no message'
      throw new RpcNodeError(method, {
        rpcCode,
        rpcMessage,
        httpStatus: status,
        retryable: !REQUEST_ERROR_CODES.has(rpcCode),
        node: this.url,
        nodeName: this.name,
      })
    }
    if (status < 200 || status > 299 || !('result' in body)) {
      throw new RpcTransportError(method, `${this.name} answered HTTP ${status} without a JSON-RPC result`, { node: this.url })
    }
    return body.result
  }

  #classify (method: string, err: unknown): RpcTransportError {
    const code = (err as { code?: unknown }).code
    let why = typeof code === 'string' ? (NETWORK_FAILURES[code] ?? `network error ${code}`) : 'network error'
    if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') why = `answer larger than ${this.#maxResponseBytes} bytes`
    return new RpcTransportError(method, `${this.name} failed: ${why}`, { node: this.url, cause: err })
  }
}

function parseJsonObject (text: string): Record<string, unknown> | undefined {
  // Skips JSON.parse (and its exception) for HTML and plain-text answers. trimStart() also
  // drops a byte order mark, which JSON.parse would refuse.
  const trimmed = text.trimStart()
  if (trimmed[0] !== '{') return undefined
  try {
    const value: unknown = JSON.parse(trimmed)
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : undefined
  } catch {
    return undefined
  }
}
