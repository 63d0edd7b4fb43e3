/**
 * The nodes a client talks to: their state, the order in which a call tries them, and
 * failover within the call's deadline.
 *
 * Policy for now: nodes that answered last time first, in rotation so that load spreads;
 * a transport failure, a timeout or an "unwell" RPC error moves on to the next node. An RPC
 * error about the request itself (invalid address, bad parameter) is an answer: returned, not retried.
 */
import { RpcNodeError, RpcTimeoutError, RpcUnavailableError, isRpcClientError, type RpcClientError } from './errors.js'
import { getnodeinfo } from './methods/getnodeinfo.js'
import type { ResolvedOptions } from './options.js'
import { NodeTransport } from './transport.js'

export type NodeState = 'unknown' | 'up' | 'down'

/** What a health check or a log may know about one node. */
export interface NodeSnapshot {
  name: string
  url: string
  state: NodeState
  version: string | undefined
  height: number | undefined
  consecutiveFailures: number
  lastError: string | undefined
}

export interface PoolNode {
  readonly transport: NodeTransport
  state: NodeState
  version: string | undefined
  height: number | undefined
  consecutiveFailures: number
  lastError: string | undefined
}

export interface RunOptions {
  deadlineMs: number
  attemptTimeoutMs: number
  signal?: AbortSignal | undefined
}

export type Attempt<T> = (node: PoolNode, timeoutMs: number) => Promise<T>

export class NodePool {
  readonly #nodes: PoolNode[]
  #rotation = 0

  constructor (options: Pick<ResolvedOptions, 'nodes' | 'connectionsPerNode' | 'maxResponseBytes'>) {
    this.#nodes = options.nodes.map((url, index) => ({
      transport: new NodeTransport(url, {
        name: `node ${index + 1}`,
        connections: options.connectionsPerNode,
        maxResponseBytes: options.maxResponseBytes,
      }),
      state: 'unknown',
      version: undefined,
      height: undefined,
      consecutiveFailures: 0,
      lastError: undefined,
    }))
  }

  /** The order in which one call tries the nodes. */
  attemptOrder (): PoolNode[] {
    const count = this.#nodes.length
    const start = this.#rotation++ % count
    const rotated = [...this.#nodes.slice(start), ...this.#nodes.slice(0, start)]
    return [...rotated.filter(node => node.state !== 'down'), ...rotated.filter(node => node.state === 'down')]
  }

  /** Runs `attempt` on one node after another until one answers, an RPC error is final, or the deadline passes. */
  async run<T> (method: string, attempt: Attempt<T>, options: RunOptions): Promise<T> {
    const deadline = performance.now() + options.deadlineMs
    const order = this.attemptOrder()
    const failures: RpcClientError[] = []
    for (let i = 0; i < order.length; i++) {
      const node = order[i] as PoolNode
      const remaining = Math.floor(deadline - performance.now())
      if (remaining <= 0) break
      const isLast = i === order.length - 1
      try {
        const value = await attempt(node, isLast ? remaining : Math.min(options.attemptTimeoutMs, remaining))
        this.#markUp(node)
        return value
      } catch (err) {
        if (options.signal?.aborted || !isRpcClientError(err)) throw err
        if (err instanceof RpcNodeError && !err.retryable) {
          this.#markUp(node)
          throw err
        }
        this.#markDown(node, err)
        failures.push(err)
      }
    }
    throw summarize(method, failures, options.deadlineMs)
  }

  /** Asks every node for getnodeinfo; resolves once one answered, rejects if none did. */
  async probe (timeoutMs: number, signal: AbortSignal): Promise<void> {
    const probes = this.#nodes.map(async node => {
      try {
        const info = getnodeinfo.fromWire(await node.transport.post('getnodeinfo', [], { timeoutMs, signal }), undefined, {})
        node.version = info.version
        node.height = info.lastblock.height
        this.#markUp(node)
      } catch (err) {
        if (isRpcClientError(err)) this.#markDown(node, err)
        throw err
      }
    })
    try {
      await Promise.any(probes)
    } catch (err) {
      const reasons = (err as AggregateError).errors.map(reason => (reason as Error).message).join('; ')
      throw new RpcUnavailableError('getnodeinfo',
        `No Pocketnet node answered at start-up (${this.#nodes.length} tried): ${reasons}`, { cause: err as AggregateError })
    }
  }

  snapshot (): NodeSnapshot[] {
    return this.#nodes.map(node => ({
      name: node.transport.name,
      url: node.transport.url,
      state: node.state,
      version: node.version,
      height: node.height,
      consecutiveFailures: node.consecutiveFailures,
      lastError: node.lastError,
    }))
  }

  async close (): Promise<void> {
    await Promise.all(this.#nodes.map(node => node.transport.close()))
  }

  #markUp (node: PoolNode): void {
    node.state = 'up'
    node.consecutiveFailures = 0
  }

  #markDown (node: PoolNode, err: Error): void {
    node.state = 'down'
    node.consecutiveFailures++
    node.lastError = err.message
  }
}

function summarize (method: string, failures: RpcClientError[], deadlineMs: number): RpcClientError {
  const reasons = failures.map(failure => failure.message).join('; ')
  const cause = new AggregateError(failures, `${failures.length} attempts failed`)
  if (failures.every(failure => failure.code === 'RPC_ERR_TIMEOUT')) {
    return new RpcTimeoutError(method, `No Pocketnet node answered ${method} within ${deadlineMs} ms: ${reasons}`, { timeoutMs: deadlineMs, cause })
  }
  return new RpcUnavailableError(method, `No Pocketnet node could answer ${method}: ${reasons}`, { cause })
}
