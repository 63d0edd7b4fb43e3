/**
 * Errors the client throws. Match on `err.code` (stable strings), not on `instanceof`:
 * a copy of `packages/pocketnet-client/` bundled twice would make `instanceof` lie.
 *
 * Messages never contain node URLs (configured nodes may be private hosts and messages
 * reach HTTP clients) nor anything a node wrote: nodes are named by their position in the list
 * ("node 2"), their errors by code. The URL is on `err.node`, a node's own text on
 * `rpcMessage`, for logs. Every message is cut at {@link MAX_MESSAGE_LENGTH} characters.
 */

/**
 * The longest message any error of the client has; longer ones are cut and end in `…`. Ours are
 * far shorter; a call that failed on many nodes lists every attempt.
 */
export const MAX_MESSAGE_LENGTH = 1000
/** The most of a node's own error text kept in `rpcMessage` (a node may send megabytes). */
export const MAX_RPC_MESSAGE_LENGTH = 2000

function cut (text: string, max: number): string {
  if (text.length <= max) return text
  // Not between the two halves of a character outside the BMP (an emoji, say).
  const end = /[\uD800-\uDBFF]/.test(text.charAt(max - 2)) ? max - 2 : max - 1
  return `${text.slice(0, end)}…`
}

/** Every code the client can throw, with what it means. The README's table is checked against this. */
export const RPC_ERROR_CODES = {
  RPC_ERR_INVALID_PARAMS: 'The call was rejected before it reached a node: a parameter is missing or malformed.',
  RPC_ERR_NODE: 'A node answered with a JSON-RPC error about the request itself (kept as rpcCode and rpcMessage).',
  RPC_ERR_TRANSPORT: 'A node could not be reached or gave an answer that is not a valid JSON-RPC reply.',
  RPC_ERR_TIMEOUT: 'No node answered within the deadline.',
  RPC_ERR_UNAVAILABLE: 'Every node failed; the attempts are listed in the message and in cause.',
  RPC_ERR_OVERLOADED: 'Every node is at capacity: the call would have waited past its deadline, so it was refused at once (retryAfterMs says when to come back). Not a failure of any node.',
  RPC_ERR_CLOSED: 'The client was closed before or during the call.',
} as const

export type RpcErrorCode = keyof typeof RPC_ERROR_CODES

interface RpcErrorOptions {
  method: string
  node?: string
  cause?: unknown
}

/** Base class of every error the client throws. */
export class RpcClientError extends Error {
  readonly code: RpcErrorCode
  /** The RPC method that was called. */
  readonly method: string
  /** The node's base URL, for logs only (never part of `message`). */
  readonly node: string | undefined

  constructor (code: RpcErrorCode, message: string, options: RpcErrorOptions) {
    super(cut(message, MAX_MESSAGE_LENGTH), options.cause === undefined ? undefined : { cause: options.cause })
    this.name = new.target.name
    this.code = code
    this.method = options.method
    this.node = options.node
  }
}

/** A parameter failed validation; nothing was sent. Never retried. */
export class RpcInvalidParamsError extends RpcClientError {
  constructor (method: string, message: string) {
    super('RPC_ERR_INVALID_PARAMS', `Invalid parameters for ${method}: ${message}`, { method })
  }
}

/**
 * What the JSON-RPC error codes a Pocketnet node uses mean, in the words of our messages
 * (docs/pocketnet-node.md, "Errors"): Bitcoin Core's codes, which Pocketnet keeps, and JSON-RPC's.
 */
const RPC_CODE_MEANINGS: Readonly<Record<number, string>> = {
  [-1]: 'miscellaneous error',
  [-3]: 'a parameter has the wrong type',
  [-5]: 'invalid address or key',
  [-8]: 'invalid parameter',
  [-28]: 'the node is still starting',
  [-32600]: 'invalid request',
  [-32601]: 'method not found',
  [-32602]: 'invalid params',
  [-32603]: 'internal error',
  [-32700]: 'parse error',
}

/**
 * The node answered a JSON-RPC error object. It is a real answer about the request, so it is
 * returned as is, unless {@link RpcNodeError.retryable} says the node itself is unwell.
 */
export class RpcNodeError extends RpcClientError {
  readonly rpcCode: number
  /**
   * The node's own text, as it sent it (its first {@link MAX_RPC_MESSAGE_LENGTH} characters): for
   * logs only, never for users, since it may name hosts or hold secrets. Not part of `message`.
   */
  readonly rpcMessage: string
  readonly httpStatus: number
  /** True unless the error blames the request (invalid address, invalid parameter, unknown method): then another node may answer. */
  readonly retryable: boolean

  constructor (method: string, details: { rpcCode: number, rpcMessage: string, httpStatus: number, retryable: boolean, node?: string, nodeName?: string }) {
    const from = details.nodeName ? ` (${details.nodeName})` : ''
    // Our words for the code, never the node's text: it may name hosts, hold secrets or be of
    // any length, and this message reaches clients (the node's text is rpcMessage, for logs).
    const meaning = RPC_CODE_MEANINGS[details.rpcCode] ?? 'an error code we do not know'
    super('RPC_ERR_NODE', `Pocketnet node rejected ${method}${from}: ${meaning} (RPC error ${details.rpcCode})`, { method, node: details.node })
    this.rpcCode = details.rpcCode
    this.rpcMessage = cut(details.rpcMessage, MAX_RPC_MESSAGE_LENGTH)
    this.httpStatus = details.httpStatus
    this.retryable = details.retryable
  }
}

/** Refused, reset, non-2xx without a JSON-RPC error, body not JSON, body too large. The next node is tried. */
export class RpcTransportError extends RpcClientError {
  constructor (method: string, message: string, options: { node?: string, cause?: unknown } = {}) {
    super('RPC_ERR_TRANSPORT', message, { method, ...options })
  }
}

/** An attempt, or the whole call, ran out of time. */
export class RpcTimeoutError extends RpcClientError {
  readonly timeoutMs: number
  constructor (method: string, message: string, options: { timeoutMs: number, node?: string, cause?: unknown }) {
    super('RPC_ERR_TIMEOUT', message, { method, node: options.node, cause: options.cause })
    this.timeoutMs = options.timeoutMs
  }
}

/** No node could answer; `cause` is an AggregateError of every attempt. */
export class RpcUnavailableError extends RpcClientError {
  constructor (method: string, message: string, options: { cause: AggregateError }) {
    super('RPC_ERR_UNAVAILABLE', message, { method, cause: options.cause })
  }
}

/**
 * The nodes are at capacity: the call was refused rather than left to time out (load shedding).
 * `retryAfterMs` is about when the queue it would have waited in will have drained (at least 1 s).
 */
export class RpcOverloadedError extends RpcClientError {
  readonly retryAfterMs: number
  constructor (method: string, message: string, options: { retryAfterMs: number, cause?: unknown }) {
    super('RPC_ERR_OVERLOADED', message, { method, cause: options.cause })
    this.retryAfterMs = options.retryAfterMs
  }
}

/** The client was closed; create a new one. */
export class RpcClosedError extends RpcClientError {
  constructor (method: string) {
    super('RPC_ERR_CLOSED', `The Pocketnet client is closed; ${method} was not sent`, { method })
  }
}

export function isRpcClientError (err: unknown): err is RpcClientError {
  const code = (err as { code?: unknown } | null)?.code
  return err instanceof Error && typeof code === 'string' && code in RPC_ERROR_CODES
}
