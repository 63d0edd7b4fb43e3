/**
 * The nodes a client talks to: health probes, rating, selection, failover and hedging within
 * one deadline per call.
 *
 * - Health: every node is probed with getnodeinfo at start and every `probeIntervalMs`
 *   (jittered), which records latency, height and version.
 * - Selection: among usable nodes (circuit closed, not lagging the best height by more than
 *   `maxLagBlocks`), two are drawn at random and the better-rated one is taken
 *   (power of two choices), so that load spreads but slow or failing nodes get less.
 * - A failure opens the node's circuit: no traffic until a background probe succeeds
 *   (cooldown 1 s, doubling to 30 s). If no node is usable, the others are tried anyway.
 * - Failover: transport failures, timeouts and RPC errors that do not blame the request move
 *   the call to another node; an RPC error about the request is returned at once.
 * - Hedging: when an attempt has not answered after the observed p95 latency (100 ms–1 s), the
 *   call is also sent to a second node; the first success wins and the other is aborted.
 */
import { Cancel } from './cancel.js'
import { RpcClosedError, RpcNodeError, RpcTimeoutError, RpcUnavailableError, isRpcClientError, type RpcClientError } from './errors.js'
import { getnodeinfo, type NodeInfo } from './methods/getnodeinfo.js'
import { DEFAULT_HEALTH_POLICY, LatencyWindow, NodeHealth, type CircuitState } from './node-health.js'
import { NodeTransport } from './transport.js'

/** What a readiness check, a metric or a log may know about one node. */
export interface NodeSnapshot {
  name: string
  url: string
  /** Known good: answered, circuit closed, not lagging. */
  usable: boolean
  circuit: CircuitState
  lagging: boolean
  version: string | undefined
  height: number | undefined
  latencyMs: number | undefined
  errorRate: number
  consecutiveFailures: number
  lastError: string | undefined
}

export type AttemptOutcome = 'ok' | 'rpc-error' | 'transport' | 'timeout' | 'cancelled'

/** One attempt on one node, for metrics. */
export interface AttemptEvent {
  node: string
  method: string
  outcome: AttemptOutcome
  durationMs: number
  hedge: boolean
}

export interface PoolOptions {
  nodes: string[]
  connectionsPerNode: number
  maxResponseBytes: number
  probeIntervalMs: number
  maxLagBlocks: number
  hedging: boolean
  /** Milliseconds; default performance.now. */
  clock?: () => number
  onAttempt?: ((event: AttemptEvent) => void) | undefined
  /** Called when the best known chain height grows. */
  onNewBlock?: ((height: number) => void) | undefined
}

export interface RunOptions {
  deadlineMs: number
  attemptTimeoutMs: number
}

/** One try on one node; `cancel` is the attempt's own (see transport.ts PostOptions). */
export type Attempt<T> = (node: PoolNode, timeoutMs: number, cancel: Cancel) => Promise<T>

export interface PoolNode {
  readonly transport: NodeTransport
  readonly health: NodeHealth
}

const START_GRACE_MIN_MS = 50
const START_GRACE_MAX_MS = 500
const HEDGE_MIN_MS = 100
const HEDGE_MAX_MS = 1000
/** Reason given to attempts that lost a hedge race or whose call ended. */
const CALL_SETTLED = Symbol('call settled')

export class NodePool {
  readonly #nodes: PoolNode[]
  readonly #options: PoolOptions
  readonly #clock: () => number
  readonly #latency = new LatencyWindow()
  readonly #retryTimers = new Map<PoolNode, NodeJS.Timeout>()
  /** What ends each call and probe in flight when the pool closes. */
  readonly #onClose = new Set<(reason: unknown) => void>()
  #closed = false
  #probeTimer: NodeJS.Timeout | undefined
  #bestHeight: number | undefined

  constructor (options: PoolOptions) {
    this.#options = options
    this.#clock = options.clock ?? (() => performance.now())
    const policy = { ...DEFAULT_HEALTH_POLICY, maxLagBlocks: options.maxLagBlocks }
    this.#nodes = options.nodes.map((url, index) => ({
      transport: new NodeTransport(url, {
        name: `node ${index + 1}`,
        connections: options.connectionsPerNode,
        maxResponseBytes: options.maxResponseBytes,
      }),
      health: new NodeHealth(policy),
    }))
  }

  get bestHeight (): number | undefined {
    return this.#bestHeight
  }

  /**
   * Probes every node; resolves once one answered (plus a short grace for the others, so that
   * the first pick knows which nodes lag), rejects naming each node and why if none did.
   */
  async start (timeoutMs: number): Promise<void> {
    const started = this.#clock()
    const probes = this.#nodes.map(node => this.#probe(node, timeoutMs))
    try {
      await Promise.any(probes)
    } catch (err) {
      const reasons = (err as AggregateError).errors.map(reason => (reason as Error).message).join('; ')
      throw new RpcUnavailableError('getnodeinfo',
        `No Pocketnet node answered at start-up (${this.#nodes.length} tried): ${reasons}`, { cause: err as AggregateError })
    }
    // Give the other nodes as long again as the first took (50–500 ms) to answer too.
    const graceMs = Math.min(START_GRACE_MAX_MS, Math.max(START_GRACE_MIN_MS, this.#clock() - started))
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      Promise.allSettled(probes),
      new Promise(resolve => { timer = setTimeout(resolve, graceMs) }),
    ])
    clearTimeout(timer)
    this.#scheduleProbes(timeoutMs)
  }

  /** Runs `attempt` on the best node, failing over and hedging, until one answers or the deadline passes. */
  run<T> (method: string, attempt: Attempt<T>, options: RunOptions): Promise<T> {
    const deadline = this.#clock() + options.deadlineMs
    const tried = new Set<PoolNode>()
    const running = new Map<PoolNode, Cancel>()
    const failures: RpcClientError[] = []
    let hedgeTimer: NodeJS.Timeout | undefined
    let settled = false
    let succeeded = false

    return new Promise<T>((resolve, reject) => {
      const finish = (err: unknown, value?: T): void => {
        if (settled) return
        settled = true
        clearTimeout(hedgeTimer)
        this.#onClose.delete(finish)
        for (const cancel of running.values()) cancel.cancel(CALL_SETTLED)
        if (err === undefined) resolve(value as T)
        else reject(err)
      }
      if (this.#closed) {
        reject(new RpcClosedError(method))
        return
      }
      this.#onClose.add(finish)

      const launch = (hedge: boolean): boolean => {
        const remaining = Math.floor(deadline - this.#clock())
        const node = remaining > 0 ? this.#pick(tried) : undefined
        if (node === undefined) return false
        tried.add(node)
        const timeoutMs = Math.min(options.attemptTimeoutMs, remaining)
        const cancel = new Cancel()
        running.set(node, cancel)
        node.health.inFlight++
        const started = this.#clock()
        const done = (outcome: AttemptOutcome): number => {
          node.health.inFlight--
          running.delete(node)
          const durationMs = this.#clock() - started
          this.#options.onAttempt?.({ node: node.transport.name, method, outcome, durationMs, hedge })
          return durationMs
        }
        attempt(node, timeoutMs, cancel).then(value => {
          this.#recordSuccess(node, done('ok'))
          succeeded = true
          finish(undefined, value)
        }, (err: unknown) => {
          if (cancel.reason === CALL_SETTLED) {
            const elapsed = done('cancelled')
            if (succeeded) node.health.recordOvertaken(elapsed)
            return
          }
          if (!isRpcClientError(err)) {
            done('transport')
            finish(err)
            return
          }
          if (err instanceof RpcNodeError && !err.retryable) {
            // A real answer about the request: the node is fine.
            this.#recordSuccess(node, done('rpc-error'))
            finish(err)
            return
          }
          done(err.code === 'RPC_ERR_TIMEOUT' ? 'timeout' : err instanceof RpcNodeError ? 'rpc-error' : 'transport')
          this.#recordFailure(node, err)
          failures.push(err)
          if (settled) return
          if (!launch(false) && running.size === 0) finish(summarize(method, failures, options.deadlineMs))
        })
        if (this.#options.hedging && running.size === 1) {
          clearTimeout(hedgeTimer)
          hedgeTimer = setTimeout(() => {
            if (!settled && running.size === 1) launch(true)
          }, this.#hedgeDelayMs())
        }
        return true
      }

      if (!launch(false)) finish(summarize(method, failures, options.deadlineMs))
    })
  }

  /** Records what a node said of itself (from a probe or a caller's getnodeinfo), and notices new blocks. */
  noteNodeInfo (node: PoolNode, info: NodeInfo): void {
    node.health.version = info.version
    node.health.height = info.lastblock.height
    if (this.#bestHeight === undefined || info.lastblock.height > this.#bestHeight) {
      const previous = this.#bestHeight
      this.#bestHeight = info.lastblock.height
      if (previous !== undefined) this.#options.onNewBlock?.(info.lastblock.height)
    }
  }

  snapshot (): NodeSnapshot[] {
    return this.#nodes.map(({ transport, health }) => {
      const lagging = health.isLagging(this.#bestHeight)
      return {
        name: transport.name,
        url: transport.url,
        usable: health.seen && health.circuit === 'closed' && !lagging,
        circuit: health.circuit,
        lagging,
        version: health.version,
        height: health.height,
        latencyMs: health.latencyMs === undefined ? undefined : Math.round(health.latencyMs * 10) / 10,
        errorRate: Math.round(health.errorRate * 1000) / 1000,
        consecutiveFailures: health.consecutiveFailures,
        lastError: health.lastError,
      }
    })
  }

  /** Ends every call and probe in flight with `reason`, then closes every connection. */
  async close (reason: unknown = new RpcClosedError('close')): Promise<void> {
    this.#closed = true
    for (const end of this.#onClose) end(reason)
    this.#onClose.clear()
    clearTimeout(this.#probeTimer)
    for (const timer of this.#retryTimers.values()) clearTimeout(timer)
    this.#retryTimers.clear()
    await Promise.all(this.#nodes.map(node => node.transport.close()))
  }

  /** Power of two choices within the best tier: fresh nodes, then lagging ones, then open circuits. */
  #pick (exclude: Set<PoolNode>): PoolNode | undefined {
    let bestTier = 3
    let candidates: PoolNode[] = []
    for (const node of this.#nodes) {
      if (exclude.has(node)) continue
      const { health } = node
      const tier = health.circuit !== 'closed' ? 2 : health.isLagging(this.#bestHeight) ? 1 : 0
      if (tier < bestTier) {
        bestTier = tier
        candidates = [node]
      } else if (tier === bestTier) {
        candidates.push(node)
      }
    }
    if (candidates.length <= 1) return candidates[0]
    const first = Math.floor(Math.random() * candidates.length)
    const second = (first + 1 + Math.floor(Math.random() * (candidates.length - 1))) % candidates.length
    const a = candidates[first] as PoolNode
    const b = candidates[second] as PoolNode
    return a.health.score() <= b.health.score() ? a : b
  }

  #hedgeDelayMs (): number {
    const p95 = this.#latency.p95() ?? HEDGE_MAX_MS
    return Math.min(HEDGE_MAX_MS, Math.max(HEDGE_MIN_MS, p95))
  }

  #recordSuccess (node: PoolNode, latencyMs: number): void {
    node.health.recordSuccess(latencyMs)
    this.#latency.add(latencyMs)
  }

  #recordFailure (node: PoolNode, err: Error): void {
    node.health.recordFailure(err.message, this.#clock())
    this.#scheduleRetry(node)
  }

  async #probe (node: PoolNode, timeoutMs: number): Promise<void> {
    const started = this.#clock()
    const cancel = new Cancel()
    const end = (reason: unknown): void => cancel.cancel(reason)
    this.#onClose.add(end)
    try {
      const answer = await node.transport.post('getnodeinfo', [], { timeoutMs, cancel })
      this.noteNodeInfo(node, getnodeinfo.fromWire(answer.result, undefined, {}))
      this.#recordSuccess(node, this.#clock() - started)
    } catch (err) {
      if (!this.#closed && err instanceof Error) this.#recordFailure(node, err)
      throw err
    } finally {
      this.#onClose.delete(end)
    }
  }

  /** Probes closed-circuit nodes every interval, jittered ±20 % so that many clients do not beat in step. */
  #scheduleProbes (timeoutMs: number): void {
    const delay = this.#options.probeIntervalMs * (0.8 + 0.4 * Math.random())
    this.#probeTimer = setTimeout(() => {
      for (const node of this.#nodes) {
        if (node.health.circuit === 'closed') this.#probe(node, timeoutMs).catch(() => {})
      }
      this.#scheduleProbes(timeoutMs)
    }, delay)
    this.#probeTimer.unref()
  }

  /** An open circuit is probed once its cooldown ends (half-open); the probe closes or reopens it. */
  #scheduleRetry (node: PoolNode): void {
    if (this.#closed || this.#retryTimers.has(node)) return
    const timer = setTimeout(() => {
      this.#retryTimers.delete(node)
      if (node.health.circuit !== 'open') return
      node.health.circuit = 'half-open'
      this.#probe(node, Math.min(this.#options.probeIntervalMs, 5000)).catch(() => {})
    }, Math.max(0, node.health.retryAt - this.#clock()))
    timer.unref()
    this.#retryTimers.set(node, timer)
  }
}

function summarize (method: string, failures: RpcClientError[], deadlineMs: number): RpcClientError {
  const reasons = failures.map(failure => failure.message).join('; ')
  const cause = new AggregateError(failures, `${failures.length} attempts failed`)
  if (failures.every(failure => failure.code === 'RPC_ERR_TIMEOUT')) {
    return new RpcTimeoutError(method, `No Pocketnet node answered ${method} in time${reasons ? `: ${reasons}` : ` (deadline ${deadlineMs} ms)`}`, { timeoutMs: deadlineMs, cause })
  }
  return new RpcUnavailableError(method, `No Pocketnet node could answer ${method}: ${reasons}`, { cause })
}
