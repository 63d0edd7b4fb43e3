/**
 * Faults a test can inject into an emulator, each as a real node or the proxy in front of it
 * shows it (docs/pocketnet-node.md, "Transport").
 */
import type { IncomingMessage, ServerResponse } from 'node:http'

export type Fault =
  | { kind: 'latency', ms: number }
  /** A JSON-RPC error body; status 500 unless given. */
  | { kind: 'rpc-error', code: number, message: string, status?: number }
  /** An overloaded node: HTTP 500 with a plain-text body. */
  | { kind: 'work-queue' }
  /** A reverse proxy's HTML error page (502 unless given). */
  | { kind: 'html', status?: number }
  /** HTTP 200 with a body that is not JSON. */
  | { kind: 'garbage' }
  /** Reads the request and never answers. */
  | { kind: 'hang' }
  /** Closes the connection without answering. */
  | { kind: 'drop' }
  /** getnodeinfo reports a height this many blocks behind. */
  | { kind: 'lag', blocks: number }
  /** sendrawtransaction checks the transaction and answers its txid, but keeps it nowhere: never in the mempool, never mined (a node that lost it). */
  | { kind: 'lose-broadcast' }
  /** The call is carried out (a transaction sent goes into the mempool), then the connection closes without an answer. */
  | { kind: 'drop-after-accept' }

export interface FaultScope {
  /** Only calls of this method. */
  method?: string
  /** Only the next N matching calls. */
  times?: number
}

/** An installed fault and how many more calls it takes. */
export class ActiveFault {
  readonly fault: Fault
  readonly #method: string | undefined
  #remaining: number

  constructor (fault: Fault, scope: FaultScope = {}) {
    this.fault = fault
    this.#method = scope.method
    this.#remaining = scope.times ?? Infinity
  }

  /** Whether it applies to this call; counts the call when it does. */
  take (method: string): boolean {
    if (this.#remaining <= 0 || (this.#method !== undefined && this.#method !== method)) return false
    this.#remaining--
    return true
  }
}

const HTML_PAGE = '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n'

/**
 * Answers the request as the fault says, and returns true; returns false for faults that do
 * not replace the answer (latency and lag are applied by the caller).
 */
export function answerWithFault (fault: Fault, request: IncomingMessage, response: ServerResponse, id: unknown): boolean {
  switch (fault.kind) {
    case 'rpc-error':
      response.writeHead(fault.status ?? 500, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ result: null, error: { code: fault.code, message: fault.message }, id }))
      return true
    case 'work-queue':
      response.writeHead(500, { 'content-type': 'text/plain' })
      response.end('Work queue depth exceeded')
      return true
    case 'html':
      response.writeHead(fault.status ?? 502, { 'content-type': 'text/html' })
      response.end(HTML_PAGE)
      return true
    case 'garbage':
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end('{"result": <<<truncated')
      return true
    case 'hang':
      return true
    case 'drop':
      request.socket.destroy()
      return true
    default:
      return false
  }
}
