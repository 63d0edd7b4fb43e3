/**
 * The nodes a client talks to: health probes, rating, selection, failover and hedging within
 * one deadline per call.
 *
 * - Health: every node is probed with getnodeinfo at start and every `probeIntervalMs`
 *   (jittered), which records latency, height and version.
 * - Chain tip: the height the answering nodes agree on (chain-tip.ts), never one node's word, so
 *   that a node lying about its height takes no traffic by it.
 * - Selection: among usable nodes (circuit closed, within `maxLagBlocks` of the agreed tip) that
 *   have a free slot, two are drawn at random and the better-rated one is taken (power of two
 *   choices), so that load spreads but slow or failing nodes get less.
 * - Capacity: each node takes a bounded number of calls at once (node-slots.ts); when none has
 *   room, the call waits for the node where it would be answered soonest, or is refused at once
 *   with RPC_ERR_OVERLOADED when it could not be answered in time (load shedding). Waiting for
 *   a slot is never the node's time: the attempt's timer starts when the call is sent, and
 *   neither waiting nor a refusal changes a node's rating.
 * - A failure opens the node's circuit: no traffic until a background probe succeeds
 *   (cooldown 1 s, doubling to 30 s). If no node is usable, the others are tried anyway.
 * - Failover: transport failures, timeouts and RPC errors that do not blame the request move
 *   the call to another node; an RPC error about the request is returned at once.
 * - Hedging: when an attempt has not answered after the observed p95 latency (100 ms–1 s), the
 *   call, once sent, is also sent to a second usable node where it fits as a new call would
 *   (tried again a delay later when none has room); the first success wins and the other is
 *   aborted. A hedge buys speed, so it never goes to a node out of step with the tip.
 */
import { Cancel } from './cancel.js'
import { agreedTip, NO_TIP, standingOf, type ChainStanding, type ChainTip } from './chain-tip.js'
import { RpcClosedError, RpcNodeError, RpcOverloadedError, RpcTimeoutError, RpcUnavailableError, isRpcClientError, type RpcClientError } from './errors.js'
import { getnodeinfo, type NodeInfo } from './methods/getnodeinfo.js'
import { DEFAULT_HEALTH_POLICY, LatencyWindow, NodeHealth, type CircuitState } from './node-health.js'
import { NoSlot, NodeSlots, type OverloadReason } from './node-slots.js'
import { NodeTransport } from './transport.js'

/** What a readiness check, a metric or a log may know about one node. */
export interface NodeSnapshot {
  name: string
  url: string
  /** Known good: answered, circuit closed, in step with the agreed chain tip. */
  usable: boolean
  circuit: CircuitState
  /** Against the agreed tip: `lagging` and `ahead` nodes take calls only when no node in step can. */
  chain: ChainStanding
  version: string | undefined
  height: number | undefined
  latencyMs: number | undefined
  errorRate: number
  consecutiveFailures: number
  /** The code of the last failure (`RPC_ERR_TIMEOUT`, ...): our own word, never the node's text. */
  lastErrorCode: string | undefined
  /** Calls sent and not yet answered. */
  inFlight: number
  /** How many calls it is given at once now (adapts between nodeThreads and connectionsPerNode). */
  concurrencyLimit: number
  /** Calls waiting for a slot on it. */
  queued: number
}

export type AttemptOutcome = 'ok' | 'rpc-error' | 'transport' | 'timeout' | 'cancelled'

/** One attempt on one node, for metrics. */
export interface AttemptEvent {
  node: string
  method: string
  outcome: AttemptOutcome
  durationMs: number
  hedge: boolean
  /** How long the call waited for a slot on the node before it was sent. */
  queuedMs: number
}

/** A call that got no slot on a node: refused at once (`full`), or after waiting until it could no longer be answered in time (`expired`). */
export interface OverloadEvent {
  node: string
  method: string
  reason: OverloadReason
  waitedMs: number
}

export interface PoolOptions {
  nodes: string[]
  connectionsPerNode: number
  /** What a node serves at once: each node's limit starts here and never goes below. Default 4. */
  nodeThreads?: number
  maxResponseBytes: number
  probeIntervalMs: number
  maxLagBlocks: number
  hedging: boolean
  /** Milliseconds; default performance.now. */
  clock?: () => number
  onAttempt?: ((event: AttemptEvent) => void) | undefined
  onOverload?: ((event: OverloadEvent) => void) | undefined
  /** Called when the agreed chain height grows. */
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
  readonly slots: NodeSlots
}

/** Where a call goes: a node, with a slot taken (`queued` false) or to wait for one. */
interface Placement {
  node: PoolNode
  queued: boolean
}

/** No node could take the call in time; `node` is where it would have waited least. */
interface Refusal {
  node: PoolNode
  noSlot: NoSlot
}

const START_GRACE_MIN_MS = 50
const START_GRACE_MAX_MS = 500
const HEDGE_MIN_MS = 100
const HEDGE_MAX_MS = 1000
/** Reason given to attempts that lost a hedge race or whose call ended. */
const CALL_SETTLED = Symbol('call settled')
/** Reason given to calls waiting for a node whose circuit opened. */
const NODE_FAILED = Symbol('node failed')

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
  #tip: ChainTip = NO_TIP

  constructor (options: PoolOptions) {
    this.#options = options
    this.#clock = options.clock ?? (() => performance.now())
    const policy = { ...DEFAULT_HEALTH_POLICY }
    this.#nodes = options.nodes.map((url, index) => ({
      transport: new NodeTransport(url, {
        name: `node ${index + 1}`,
        // One more than the slots: the health probe goes beside the calls.
        connections: options.connectionsPerNode + 1,
        maxResponseBytes: options.maxResponseBytes,
      }),
      health: new NodeHealth(policy),
      slots: new NodeSlots(options.connectionsPerNode, this.#clock, options.nodeThreads),
    }))
  }

  /** The chain height the answering nodes agree on (chain-tip.ts); undefined while none answers. */
  get bestHeight (): number | undefined {
    return this.#tip.height
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
    let refusal: Refusal | undefined
    let queuedMs = 0
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
      const giveUp = (): void => finish(conclude(method, failures, refusal, queuedMs, options.deadlineMs))

      const send = (node: PoolNode, cancel: Cancel, hedge: boolean, waitedMs: number): void => {
        // From the moment the call is sent: a hedge is for a slow node, not for our own queue.
        if (this.#options.hedging && !hedge && running.size === 1) armHedge()
        const started = this.#clock()
        const timeoutMs = Math.min(options.attemptTimeoutMs, Math.floor(deadline - started))
        node.health.inFlight++
        const done = (outcome: AttemptOutcome, answered: boolean): number => {
          node.health.inFlight--
          running.delete(node)
          const durationMs = this.#clock() - started
          node.slots.release(method, answered ? durationMs : undefined)
          this.#options.onAttempt?.({ node: node.transport.name, method, outcome, durationMs, hedge, queuedMs: waitedMs })
          return durationMs
        }
        attempt(node, timeoutMs, cancel).then(value => {
          this.#recordSuccess(node, done('ok', true))
          succeeded = true
          finish(undefined, value)
        }, (err: unknown) => {
          if (cancel.reason === CALL_SETTLED) {
            const elapsed = done('cancelled', false)
            if (succeeded) node.health.recordOvertaken(elapsed)
            return
          }
          if (!isRpcClientError(err)) {
            done('transport', false)
            finish(err)
            return
          }
          if (err instanceof RpcNodeError && !err.retryable) {
            // A real answer about the request: the node is fine.
            this.#recordSuccess(node, done('rpc-error', true))
            finish(err)
            return
          }
          const timedOut = err.code === 'RPC_ERR_TIMEOUT'
          // Cut short by what was left of the call's deadline, not by the node's own time limit:
          // no reason to think less of the node. Recorded before the slot is given back, which
          // would otherwise send a waiting call to the node that just failed.
          if (!(timedOut && timeoutMs < options.attemptTimeoutMs)) this.#recordFailure(node, err)
          done(timedOut ? 'timeout' : err instanceof RpcNodeError ? 'rpc-error' : 'transport', err instanceof RpcNodeError)
          failures.push(err)
          if (settled) return
          if (!launch(false) && running.size === 0) giveUp()
        })
      }

      const launch = (hedge: boolean): boolean => {
        if (deadline - this.#clock() < 1) return false
        const placement = this.#place(tried, deadline, hedge)
        if (placement === undefined) return false
        if ('noSlot' in placement) {
          refusal = placement
          this.#options.onOverload?.({ node: placement.node.transport.name, method, reason: 'full', waitedMs: 0 })
          return false
        }
        const { node, queued } = placement
        tried.add(node)
        const cancel = new Cancel()
        running.set(node, cancel)
        if (!queued) {
          send(node, cancel, hedge, 0)
        } else {
          const since = this.#clock()
          node.slots.acquire(deadline, cancel).then(() => {
            const waitedMs = this.#clock() - since
            queuedMs += waitedMs
            send(node, cancel, hedge, waitedMs)
          }, (reason: unknown) => {
            running.delete(node)
            if (reason === NODE_FAILED) {
              // Its circuit opened while the call waited: another node, at once.
              if (!settled && !launch(false) && running.size === 0) giveUp()
              return
            }
            if (!(reason instanceof NoSlot)) return
            queuedMs += reason.waitedMs
            refusal = { node, noSlot: reason }
            this.#options.onOverload?.({ node: node.transport.name, method, reason: reason.reason, waitedMs: reason.waitedMs })
            if (settled) return
            if (!launch(false) && running.size === 0) giveUp()
          })
        }
        return true
      }

      // Tried again a hedge delay later when no node had room for it.
      const armHedge = (): void => {
        clearTimeout(hedgeTimer)
        const delayMs = this.#hedgeDelayMs()
        if (deadline - this.#clock() <= delayMs) return
        hedgeTimer = setTimeout(() => {
          if (!settled && running.size === 1 && !launch(true)) armHedge()
        }, delayMs)
      }

      if (!launch(false)) giveUp()
    })
  }

  /** Records what a node said of itself (from a probe or a caller's getnodeinfo), and notices new blocks. */
  noteNodeInfo (node: PoolNode, info: NodeInfo): void {
    node.health.version = info.version
    // Its latest word replaces the last, lower or not: a node that restarted lower is lower.
    node.health.height = info.lastblock.height
    this.#updateTip()
  }

  snapshot (): NodeSnapshot[] {
    return this.#nodes.map(({ transport, health, slots }) => {
      const chain = this.#standing(health)
      return {
        name: transport.name,
        url: transport.url,
        usable: health.seen && health.circuit === 'closed' && chain === 'in-step',
        circuit: health.circuit,
        chain,
        version: health.version,
        height: health.height,
        latencyMs: health.latencyMs === undefined ? undefined : Math.round(health.latencyMs * 10) / 10,
        errorRate: Math.round(health.errorRate * 1000) / 1000,
        consecutiveFailures: health.consecutiveFailures,
        lastErrorCode: health.lastError,
        inFlight: slots.inFlight,
        concurrencyLimit: slots.limit,
        queued: slots.queued,
      }
    })
  }

  /** Ends every call and probe in flight with `reason`, then closes every connection. */
  async close (reason: unknown = new RpcClosedError('close')): Promise<void> {
    this.#closed = true
    for (const end of this.#onClose) end(reason)
    this.#onClose.clear()
    for (const node of this.#nodes) node.slots.clear(reason)
    clearTimeout(this.#probeTimer)
    for (const timer of this.#retryTimers.values()) clearTimeout(timer)
    this.#retryTimers.clear()
    await Promise.all(this.#nodes.map(node => node.transport.close()))
  }

  /**
   * Where a call goes. Within the best tier (nodes in step with the tip, then lagging or ahead
   * ones, then open circuits; a hedge only to the first):
   * a node with a free slot, by power of two choices, unless waiting for a slot on a better-rated
   * node costs less; else the node where it would be answered soonest, if it can wait that long;
   * else a refusal (none for a hedge).
   */
  #place (exclude: Set<PoolNode>, deadline: number, hedge: boolean): Placement | Refusal | undefined {
    let bestTier = 3
    let candidates: PoolNode[] = []
    for (const node of this.#nodes) {
      if (exclude.has(node)) continue
      const { health } = node
      const tier = health.circuit !== 'closed' ? 2 : this.#standing(health) !== 'in-step' ? 1 : 0
      if (tier < bestTier) {
        bestTier = tier
        candidates = [node]
      } else if (tier === bestTier) {
        candidates.push(node)
      }
    }
    // A hedge buys speed: never at the price of an answer from a node out of step with the tip.
    if (hedge && bestTier > 0) return undefined
    const free = twoChoices(candidates.filter(node => node.slots.free))
    // A free slot on a node rated slow (it hangs, it crawls) can cost more than a short wait on a
    // fast one: a waiting call is weighed by its wait plus the node's rating.
    let soonest: { node: PoolNode, costMs: number } | undefined
    let refusal: Refusal | undefined
    for (const candidate of candidates) {
      const wait = candidate.slots.expectedWait(deadline)
      if (wait === undefined) continue
      if (wait.waitMs <= wait.allowedMs) {
        const costMs = wait.waitMs + candidate.health.score()
        if (soonest === undefined || costMs < soonest.costMs) soonest = { node: candidate, costMs }
      } else if (refusal === undefined || wait.waitMs - wait.allowedMs < refusal.noSlot.expectedWaitMs - refusal.noSlot.allowedWaitMs) {
        refusal = { node: candidate, noSlot: new NoSlot('full', wait.waitMs, wait.allowedMs, 0) }
      }
    }
    if (free !== undefined && (soonest === undefined || free.health.score() <= soonest.costMs)) {
      free.slots.tryAcquire()
      return { node: free, queued: false }
    }
    if (soonest !== undefined) return { node: soonest.node, queued: true }
    // A hedge is a second chance, not a call: no node refused anything.
    if (hedge) return undefined
    if (refusal !== undefined) for (const candidate of candidates) candidate.slots.noteRefused()
    return refusal
  }

  #hedgeDelayMs (): number {
    const p95 = this.#latency.p95() ?? HEDGE_MAX_MS
    return Math.min(HEDGE_MAX_MS, Math.max(HEDGE_MIN_MS, p95))
  }

  #recordSuccess (node: PoolNode, latencyMs: number): void {
    const wasClosed = node.health.circuit === 'closed'
    node.health.recordSuccess(latencyMs)
    this.#latency.add(latencyMs)
    if (!wasClosed) this.#updateTip()
  }

  #recordFailure (node: PoolNode, err: Error & { code?: unknown }): void {
    node.health.recordFailure(typeof err.code === 'string' ? err.code : 'ERROR', this.#clock())
    node.slots.clear(NODE_FAILED)
    this.#scheduleRetry(node)
    this.#updateTip()
  }

  #standing (health: NodeHealth): ChainStanding {
    return standingOf(health.height, this.#tip, this.#options.maxLagBlocks)
  }

  /**
   * The tip from the present reports: nodes whose circuit is closed, by their latest word. A node
   * that fails or goes away takes its word with it, so no height outlives the nodes that said it.
   */
  #updateTip (): void {
    const heights: number[] = []
    for (const { health } of this.#nodes) {
      if (health.circuit === 'closed' && health.height !== undefined) heights.push(health.height)
    }
    const previous = this.#tip.height
    this.#tip = agreedTip(heights, this.#options.maxLagBlocks)
    const height = this.#tip.height
    if (previous !== undefined && height !== undefined && height > previous) this.#options.onNewBlock?.(height)
  }

  async #probe (node: PoolNode, timeoutMs: number): Promise<void> {
    const started = this.#clock()
    const cancel = new Cancel()
    const end = (reason: unknown): void => cancel.cancel(reason)
    this.#onClose.add(end)
    try {
      const answer = await node.transport.post('getnodeinfo', [], { timeoutMs, cancel })
      this.noteNodeInfo(node, getnodeinfo.fromWire(answer.result, undefined, {}))
      const latencyMs = this.#clock() - started
      this.#recordSuccess(node, latencyMs)
      node.slots.noteProbe(latencyMs)
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

/** Two drawn at random, the better rated taken. */
function twoChoices (nodes: PoolNode[]): PoolNode | undefined {
  if (nodes.length <= 1) return nodes[0]
  const first = Math.floor(Math.random() * nodes.length)
  const second = (first + 1 + Math.floor(Math.random() * (nodes.length - 1))) % nodes.length
  const a = nodes[first] as PoolNode
  const b = nodes[second] as PoolNode
  return a.health.score() <= b.health.score() ? a : b
}

/**
 * The error of a call that no node answered. Overload (503 in the service) when a node refused
 * it for capacity, or when it spent part of its deadline waiting for a slot and then ran out of
 * time: a client should come back later. Otherwise the nodes failed.
 */
function conclude (method: string, failures: RpcClientError[], refusal: Refusal | undefined, queuedMs: number, deadlineMs: number): RpcClientError {
  const cutShort = failures.length > 0 && queuedMs > 0 && failures.every(failure => failure.code === 'RPC_ERR_TIMEOUT')
  if (refusal === undefined && !cutShort) return summarize(method, failures, deadlineMs)
  const tried = failures.map(failure => failure.message).join('; ')
  const cause = new AggregateError(failures, `${failures.length} attempts failed`)
  if (refusal === undefined) {
    return new RpcOverloadedError(method,
      `The Pocketnet nodes are at capacity: ${method} waited ${Math.round(queuedMs)} ms for a free connection, then ${tried}`, { retryAfterMs: 1000, cause })
  }
  const { node, noSlot } = refusal
  const name = node.transport.name
  const why = noSlot.reason === 'expired'
    ? `no connection to ${name} became free within ${Math.round(noSlot.waitedMs)} ms, while ${method} could still be answered before its deadline`
    : `${method} would wait about ${Math.round(noSlot.expectedWaitMs)} ms for a free connection to ${name}, more than the ${Math.max(0, Math.round(noSlot.allowedWaitMs))} ms it can afford`
  const retryAfterMs = noSlot.reason === 'expired' ? 1000 : Math.max(1000, Math.ceil(noSlot.expectedWaitMs - noSlot.allowedWaitMs))
  return new RpcOverloadedError(method, `The Pocketnet nodes are at capacity: ${why}${tried ? `; ${tried}` : ''}`, { retryAfterMs, cause })
}

function summarize (method: string, failures: RpcClientError[], deadlineMs: number): RpcClientError {
  const reasons = failures.map(failure => failure.message).join('; ')
  const cause = new AggregateError(failures, `${failures.length} attempts failed`)
  if (failures.every(failure => failure.code === 'RPC_ERR_TIMEOUT')) {
    return new RpcTimeoutError(method, `No Pocketnet node answered ${method} in time${reasons ? `: ${reasons}` : ` (deadline ${deadlineMs} ms)`}`, { timeoutMs: deadlineMs, cause })
  }
  return new RpcUnavailableError(method, `No Pocketnet node could answer ${method}: ${reasons}`, { cause })
}
