/**
 * One JSON-RPC POST to one node, over node:http(s) keep-alive connections: deadline, body-size
 * cap, parse, and classification of every failure into an error with a stable code.
 * Wire facts: docs/pocketnet-node.md, "Transport".
 *
 * Why node:http and not undici: undici (since 7.28, GHSA-35p6-xmwp-9g52) writes a request that
 * reuses an idle keep-alive connection only after the event loop's current poll phase, so under
 * load each upstream call waited for every other request and answer read in the same turn, which
 * added to the cold path's latency more than undici saves in CPU (bench/results.md, "Transport").
 * The risk that deferral guards against, bytes a node sends unasked being taken as the answer to
 * the next call on that connection, cannot harm us: only the node itself writes on it, and it
 * decides its answers anyway. node:http drops what an idle connection receives, and closes a
 * connection on which more than the answer arrives (test/pocketnet-client/transport.test.ts).
 */
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage, type RequestOptions } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
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
  /**
   * The write path instead of the read path: a node serves `sendrawtransaction` only on `/post/`
   * (see {@link NodeTransport.writePath}).
   */
  write?: boolean
}

const TIMED_OUT = Symbol('timed out')
/**
 * An idle keep-alive connection is closed after this long (or sooner, if the node says so);
 * a call in flight is not timed by it.
 */
const IDLE_TIMEOUT_MS = 10_000

// node:net, node:http and TLS codes a person can act on; anything else is named by its code alone,
// because raw messages carry the node's address.
const NETWORK_FAILURES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection reset',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'TLS certificate not trusted (self-signed)',
  SELF_SIGNED_CERT_IN_CHAIN: 'TLS certificate not trusted (self-signed)',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS certificate not trusted',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'TLS certificate not trusted',
  CERT_HAS_EXPIRED: 'TLS certificate expired',
  ERR_TLS_CERT_ALTNAME_INVALID: 'TLS certificate is for another host name',
}

// RPC errors that blame the request itself: another node would answer the same, so they are
// returned as they are. Any other RPC error (-28 warming up, -32603 internal, 500 `sql request
// timeout`, ...) says the node is unwell: ask another. Codes: docs/pocketnet-node.md, "Errors".
const REQUEST_ERROR_CODES = new Set([
  -3, // wrong type
  -5, // invalid address or key
  -8, // invalid parameter
  -32600, // invalid request
  -32601, // method not found
  -32602, // invalid params
  -32700, // parse error
])

/**
 * -32603 is "internal error", which a node also answers for what only the request can cause: a
 * param of the wrong JSON type read without a check, and a transaction the chain does not have.
 * Another node would answer those the same (and asking every node would only lower their ratings,
 * on the word of whoever sent the request).
 */
const REQUEST_INTERNAL_ERRORS = /^(JSON value is not an? \w+ as expected|JSON integer out of range|Transaction::List reconstruct failed - no return data for [0-9A-Za-z]* ?tx)$/

/** Whether an RPC error blames the request, not the node. */
export function blamesRequest (rpcCode: number, rpcMessage: string): boolean {
  return REQUEST_ERROR_CODES.has(rpcCode) || (rpcCode === -32603 && REQUEST_INTERNAL_ERRORS.test(rpcMessage))
}

/** Ends an answer that grew past the size cap. */
class TooLargeError extends Error {}

export class NodeTransport {
  readonly url: string
  readonly name: string
  readonly #agent: HttpAgent
  readonly #request: typeof httpRequest
  /** Everything of a request but its headers, which carry each body's length. */
  readonly #target: RequestOptions
  /** Name, value, name, value…: node:http takes a flat list as it is, unchecked. */
  readonly #headers: string[]
  readonly #maxResponseBytes: number
  /**
   * Where a node takes transactions: `/post/` beside its read path (`/public/` → `/post/`,
   * `/rpc/public/` behind a proxy → `/rpc/post/`). A node answers the write methods nowhere else.
   */
  readonly writePath: string

  constructor (url: string, options: TransportOptions) {
    const parsed = new URL(url)
    const secure = parsed.protocol === 'https:'
    this.url = url
    this.name = options.name
    this.#maxResponseBytes = options.maxResponseBytes
    const agentOptions = { keepAlive: true, maxSockets: options.connections, timeout: IDLE_TIMEOUT_MS }
    this.#agent = secure ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions)
    this.#request = secure ? httpsRequest : httpRequest
    this.#target = {
      agent: this.#agent,
      // URL keeps an IPv6 address in brackets; the socket wants it bare.
      hostname: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: parsed.port === '' ? (secure ? 443 : 80) : Number(parsed.port),
      path: parsed.pathname === '/' ? '/public/' : parsed.pathname,
      method: 'POST',
      // Host is in the header list: node:http need not build it for every request.
      setHost: false,
    }
    this.writePath = (this.#target.path as string).replace(/[^/]*\/?$/, 'post/')
    this.#headers = ['host', parsed.host, 'content-type', 'application/json', 'accept', 'application/json']
  }

  /** Sends one call and resolves with the node's `result`. */
  post (method: string, params: unknown[], options: PostOptions): Promise<RpcAnswer> {
    const { cancel, timeoutMs } = options
    if (cancel.cancelled) return Promise.reject(cancel.reason)
    return new Promise<RpcAnswer>((resolve, reject) => {
      const body = JSON.stringify({ method, params })
      let settled = false
      const timer = setTimeout(() => cancel.cancel(TIMED_OUT), timeoutMs)
      const fail = (err: unknown): void => {
        if (settled || cancel.cancelled) return
        settled = true
        clearTimeout(timer)
        cancel.listen(undefined)
        reject(this.#classify(method, err))
      }
      const headers = [...this.#headers, 'content-length', String(Buffer.byteLength(body))]
      const target = options.write === true ? { ...this.#target, path: this.writePath, headers } : { ...this.#target, headers }
      const request: ClientRequest = this.#request(target, (response: IncomingMessage) => {
        const chunks: Buffer[] = []
        let bytes = 0
        response.on('data', (chunk: Buffer) => {
          bytes += chunk.length
          if (bytes <= this.#maxResponseBytes) {
            chunks.push(chunk)
          } else if (!settled) {
            fail(new TooLargeError())
            request.destroy()
          }
        })
        response.on('error', fail)
        response.on('end', () => {
          if (settled || cancel.cancelled) return
          settled = true
          clearTimeout(timer)
          cancel.listen(undefined)
          const text = (chunks.length === 1 ? chunks[0] as Buffer : Buffer.concat(chunks, bytes)).toString('utf8')
          try {
            resolve({ result: this.#readAnswer(method, response.statusCode ?? 0, text), bytes })
          } catch (err) {
            reject(err)
          }
        })
      })
      // Always listened to: an 'error' without a listener would crash the process.
      request.on('error', fail)
      cancel.listen(reason => {
        clearTimeout(timer)
        settled = true
        request.destroy()
        reject(reason === TIMED_OUT
          ? new RpcTimeoutError(method, `${this.name} did not answer ${method} within ${timeoutMs} ms`, { timeoutMs, node: this.url })
          : reason)
      })
      request.end(body)
    })
  }

  async close (): Promise<void> {
    this.#agent.destroy()
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
      // The code goes into our message: a whole number, or 0 for whatever else a node sent there.
      const rpcCode = Number.isSafeInteger(error.code) ? error.code as number : 0
      // The node's text is kept apart, for logs (RpcNodeError.rpcMessage), never in a message.
      const rpcMessage = typeof error.message === 'string' ? error.message : 'no message'
      throw new RpcNodeError(method, {
        rpcCode,
        rpcMessage,
        httpStatus: status,
        retryable: !blamesRequest(rpcCode, rpcMessage),
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
    if (err instanceof TooLargeError) why = `answer larger than ${this.#maxResponseBytes} bytes`
    // llhttp's codes: the bytes were not an HTTP answer.
    else if (typeof code === 'string' && code.startsWith('HPE_')) why = 'answer is not valid HTTP'
    else if (code === 'ECONNRESET' && (err as Error).message === 'aborted') why = 'connection closed before the answer was complete'
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
