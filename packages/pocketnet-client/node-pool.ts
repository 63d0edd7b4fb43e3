/**
 * The nodes a client talks to: health probes, rating, selection, failover and hedging within
 * one deadline per call.
 *
 * - Health: every node is probed with getnodeinfo at start and every `probeIntervalMs`
 *   (jittered), which records latency, height, tip hash and version (`onNodeTip` hears each report).
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
 * - A call for one named node (`RunOptions.node`: a second opinion, where another node's answer
 *   would not do) goes there only if it is usable, and neither fails over nor hedges.
 */
import { Cancel } from './cancel.js'
import { agreedTip, NO_TIP, standingOf, type ChainStanding, type AgreedTip } from './chain-tip.js'
import { RpcClosedError, RpcNodeError, RpcOverloadedError, RpcTimeoutError, RpcUnavailableError, isRpcClientError, type RpcClientError } from './errors.js'
import { getnodeinfo, type NodeInfo } from './methods/getnodeinfo.js'
import { DEFAULT_HEALTH_POLICY, LatencyWindow, NodeHealth, type CircuitState } from './node-health.js'
import { NoSlot, NodeSlots, type OverloadReason } from './node-slots.js'
import { REAL_TIMERS, type TimerHandle, type Timers } from './timers.js'
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
  /** The hash of its tip, as its latest getnodeinfo gave it. */
  blockHash: string | undefined
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

/** What one node said of its tip: a probe's getnodeinfo, or a caller's. */
export interface NodeTipReport {
  /** "node 2" */
  node: string
  height: number
  /** Lowercase hex; undefined when the node gave no 64-hex hash. */
  blockHash: string | undefined
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
  /** Default: Node's timers, unreferenced (timers.ts). */
  timers?: Timers
  /** A number in [0, 1); default Math.random. For the power of two choices and the probes' jitter. */
  random?: () => number
  onAttempt?: ((event: AttemptEvent) => void) | undefined
  onOverload?: ((event: OverloadEvent) => void) | undefined
  /** Called when the agreed chain height grows. */
  onNewBlock?: ((height: number) => void) | undefined
  /** Called with each node's report of its tip, once the pool has taken it into account. Must not throw. */
  onNodeTip?: ((report: NodeTipReport) => void) | undefined
}

export interface RunOptions {
  deadlineMs: number
  attemptTimeoutMs: number
  /**
   * Only this node (its name in {@link NodePool.snapshot}), only while it is usable: no failover,
   * no hedge. For asking a second node what the first said, where any other answer would not do.
   */
  node?: string | undefined
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
/** A probe's interval varies by ±20 %, so that many clients do not probe in step. */
const PROBE_JITTER = 0.2
/** A half-open circuit's probe gets at most this long (or the probe interval, if shorter). */
const HALF_OPEN_PROBE_TIMEOUT_MS = 5000
/** Reason given to attempts that lost a hedge race or whose call ended. */
const CALL_SETTLED = Symbol('call settled')
/** Reason given to calls waiting for a node whose circuit opened. */
const NODE_FAILED = Symbol('node failed')

/** Tiers of nodes, best first: a call goes to the best tier that has a node it has not tried. */
const enum Tier {
  /** Circuit closed, in step with the chain tip. */
  Usable = 0,
  /** Circuit closed, but lagging or ahead of the tip. */
  OutOfStep = 1,
  /** Circuit open or half-open: tried only when nothing better is left. */
  Failing = 2,
}

/** What a call needs of its pool: placement, timing and what to record. */
interface CallHost {
  readonly clock: () => number
  readonly timers: Timers
  readonly hedging: boolean
  readonly onAttempt: PoolOptions['onAttempt']
  readonly onOverload: PoolOptions['onOverload']
  place (exclude: ReadonlySet<PoolNode>, deadline: number, hedge: boolean, only: PoolNode | undefined): Placement | Refusal | undefined
  hedgeDelayMs (): number
  recordSuccess (node: PoolNode, latencyMs: number): void
  recordFailure (node: PoolNode, err: RpcClientError): void
  /** The call settled: it no longer needs ending when the pool closes. */
  forget (call: PoolCall<unknown>): void
}

/** One try of a call on one node: waiting for a slot there (`queued`), then `sent`. */
interface CallAttempt {
  readonly node: PoolNode
  readonly hedge: boolean
  readonly cancel: Cancel
  state: 'queued' | 'sent'
}

/**
 * One call through the pool, from its first attempt until it settles. A call is `pending` until
 * it settles, once: `succeeded` with the first answer, or `failed` with an answer about the
 * request, or when no node is left that could answer in time. While pending it has one attempt,
 * or two while a hedge runs. The transitions, each a method below:
 * - start: the first attempt goes to the best node ({@link NodePool} `#place`), now or once a
 *   slot there is free; or the call fails at once (no node could take it in time).
 * - an attempt answers: the call succeeds; the other attempt is cancelled.
 * - an attempt fails for the node's sake (transport, timeout, an RPC error not about the
 *   request): the node is rated down and the call fails over to a node it has not tried.
 * - an attempt fails for the request's sake (an RPC error about it): the call fails with it.
 * - a queued attempt is refused its slot (expired, or its node's circuit opened): fail over.
 * - failing over finds no node, and no attempt is left running: the call fails with what the
 *   attempts said (conclude below).
 * - the hedge timer fires while one attempt runs: a second attempt, on another usable node.
 * A call for one node (`only`) has that node to place on and nothing else: its first failure
 * leaves no node to fail over to, and no hedge is armed.
 */
class PoolCall<T> {
  readonly promise: Promise<T>
  readonly #host: CallHost
  readonly #method: string
  readonly #attempt: Attempt<T>
  readonly #run: RunOptions
  readonly #deadline: number
  readonly #only: PoolNode | undefined
  readonly #tried = new Set<PoolNode>()
  readonly #running = new Map<PoolNode, CallAttempt>()
  readonly #failures: RpcClientError[] = []
  #refusal: Refusal | undefined
  #queuedMs = 0
  #hedgeTimer: TimerHandle | undefined
  #state: 'pending' | 'succeeded' | 'failed' = 'pending'
  #resolve!: (value: T) => void
  #reject!: (err: unknown) => void

  constructor (host: CallHost, method: string, attempt: Attempt<T>, run: RunOptions, only: PoolNode | undefined) {
    this.#host = host
    this.#method = method
    this.#attempt = attempt
    this.#run = run
    this.#only = only
    this.#deadline = host.clock() + run.deadlineMs
    this.promise = new Promise<T>((resolve, reject) => {
      this.#resolve = resolve
      this.#reject = reject
    })
  }

  get settled (): boolean {
    return this.#state !== 'pending'
  }

  start (): void {
    if (!this.#launch(false)) this.#fail(this.#conclusion())
  }

  /** Ends the call with `reason` (the pool is closing). */
  end (reason: unknown): void {
    this.#fail(reason)
  }

  /** A new attempt on the best node the call has not tried; false when none can take it in time. */
  #launch (hedge: boolean): boolean {
    if (this.#deadline - this.#host.clock() < 1) return false
    const placement = this.#host.place(this.#tried, this.#deadline, hedge, this.#only)
    if (placement === undefined) return false
    if ('noSlot' in placement) {
      this.#refusal = placement
      this.#host.onOverload?.({ node: placement.node.transport.name, method: this.#method, reason: 'full', waitedMs: 0 })
      return false
    }
    const attempt: CallAttempt = { node: placement.node, hedge, cancel: new Cancel(), state: 'queued' }
    this.#tried.add(attempt.node)
    this.#running.set(attempt.node, attempt)
    if (!placement.queued) {
      this.#send(attempt, 0)
      return true
    }
    const since = this.#host.clock()
    attempt.node.slots.acquire(this.#deadline, attempt.cancel).then(() => {
      const waitedMs = this.#host.clock() - since
      this.#queuedMs += waitedMs
      this.#send(attempt, waitedMs)
    }, (reason: unknown) => this.#slotDenied(attempt, reason))
    return true
  }

  /** The attempt has its slot: off to the node, its timer starting now. */
  #send (attempt: CallAttempt, waitedMs: number): void {
    attempt.state = 'sent'
    // From the moment the call is sent: a hedge is for a slow node, not for our own queue.
    if (this.#host.hedging && this.#only === undefined && !attempt.hedge && this.#running.size === 1) this.#armHedge()
    const { node } = attempt
    const started = this.#host.clock()
    const timeoutMs = Math.min(this.#run.attemptTimeoutMs, Math.floor(this.#deadline - started))
    const done = (outcome: AttemptOutcome, answered: boolean): number => {
      this.#running.delete(node)
      const durationMs = this.#host.clock() - started
      node.slots.release(this.#method, answered ? durationMs : undefined)
      this.#host.onAttempt?.({ node: node.transport.name, method: this.#method, outcome, durationMs, hedge: attempt.hedge, queuedMs: waitedMs })
      return durationMs
    }
    this.#attempt(node, timeoutMs, attempt.cancel).then(value => {
      this.#host.recordSuccess(node, done('ok', true))
      this.#succeed(value)
    }, (err: unknown) => {
      if (attempt.cancel.reason === CALL_SETTLED) {
        // Overtaken by the other attempt, or the call ended: what it had used is a lower bound of its latency.
        const elapsed = done('cancelled', false)
        if (this.#state === 'succeeded') node.health.recordOvertaken(elapsed)
        return
      }
      if (!isRpcClientError(err)) {
        done('transport', false)
        this.#fail(err)
        return
      }
      if (err instanceof RpcNodeError && !err.retryable) {
        // A real answer about the request: the node is fine.
        this.#host.recordSuccess(node, done('rpc-error', true))
        this.#fail(err)
        return
      }
      const timedOut = err.code === 'RPC_ERR_TIMEOUT'
      // Cut short by what was left of the call's deadline, not by the node's own time limit: no
      // reason to think less of the node. Recorded before the slot is given back, which would
      // otherwise send a waiting call to the node that just failed.
      if (!(timedOut && timeoutMs < this.#run.attemptTimeoutMs)) this.#host.recordFailure(node, err)
      done(timedOut ? 'timeout' : err instanceof RpcNodeError ? 'rpc-error' : 'transport', err instanceof RpcNodeError)
      this.#failures.push(err)
      this.#failOver()
    })
  }

  /** A queued attempt got no slot: its node failed (another node, at once), or the wait could not end in time. */
  #slotDenied (attempt: CallAttempt, reason: unknown): void {
    this.#running.delete(attempt.node)
    if (reason instanceof NoSlot) {
      this.#queuedMs += reason.waitedMs
      this.#refusal = { node: attempt.node, noSlot: reason }
      this.#host.onOverload?.({ node: attempt.node.transport.name, method: this.#method, reason: reason.reason, waitedMs: reason.waitedMs })
    } else if (reason !== NODE_FAILED) {
      // Cancelled: the call settled, or the pool is closing.
      return
    }
    this.#failOver()
  }

  /** Another node, or, once nothing is left running, the call fails with what its attempts said. */
  #failOver (): void {
    if (this.settled) return
    if (!this.#launch(false) && this.#running.size === 0) this.#fail(this.#conclusion())
  }

  /** A second attempt after the hedge delay, while one runs; tried again a delay later when no node had room. */
  #armHedge (): void {
    this.#host.timers.clearTimeout(this.#hedgeTimer)
    const delayMs = this.#host.hedgeDelayMs()
    if (this.#deadline - this.#host.clock() <= delayMs) return
    this.#hedgeTimer = this.#host.timers.setTimeout(() => {
      if (!this.settled && this.#running.size === 1 && !this.#launch(true)) this.#armHedge()
    }, delayMs)
  }

  #succeed (value: T): void {
    if (!this.#settle('succeeded')) return
    this.#resolve(value)
  }

  #fail (err: unknown): void {
    if (!this.#settle('failed')) return
    this.#reject(err)
  }

  /** Moves to a final state once, cancelling what still runs. */
  #settle (state: 'succeeded' | 'failed'): boolean {
    if (this.settled) return false
    this.#state = state
    this.#host.timers.clearTimeout(this.#hedgeTimer)
    this.#host.forget(this as PoolCall<unknown>)
    for (const attempt of this.#running.values()) attempt.cancel.cancel(CALL_SETTLED)
    return true
  }

  #conclusion (): RpcClientError {
    return conclude(this.#method, this.#failures, this.#refusal, this.#queuedMs, this.#run.deadlineMs)
  }
}

export class NodePool {
  readonly #nodes: PoolNode[]
  readonly #options: PoolOptions
  readonly #clock: () => number
  readonly #timers: Timers
  readonly #random: () => number
  readonly #latency = new LatencyWindow()
  readonly #retryTimers = new Map<PoolNode, TimerHandle>()
  /** The calls in flight, ended when the pool closes. */
  readonly #calls = new Set<PoolCall<unknown>>()
  /** What ends each probe in flight when the pool closes. */
  readonly #probes = new Set<Cancel>()
  readonly #host: CallHost
  #closed = false
  #probeTimer: TimerHandle | undefined
  #tip: AgreedTip = NO_TIP

  constructor (options: PoolOptions) {
    this.#options = options
    this.#clock = options.clock ?? (() => performance.now())
    this.#timers = options.timers ?? REAL_TIMERS
    this.#random = options.random ?? Math.random
    this.#nodes = options.nodes.map((url, index) => ({
      transport: new NodeTransport(url, {
        name: `node ${index + 1}`,
        // One more than the slots: the health probe goes beside the calls.
        connections: options.connectionsPerNode + 1,
        maxResponseBytes: options.maxResponseBytes,
      }),
      health: new NodeHealth(DEFAULT_HEALTH_POLICY),
      slots: new NodeSlots(options.connectionsPerNode, this.#clock, options.nodeThreads, this.#timers),
    }))
    this.#host = {
      clock: this.#clock,
      timers: this.#timers,
      hedging: options.hedging,
      onAttempt: options.onAttempt,
      onOverload: options.onOverload,
      place: (exclude, deadline, hedge, only) => this.#place(exclude, deadline, hedge, only),
      hedgeDelayMs: () => this.#hedgeDelayMs(),
      recordSuccess: (node, latencyMs) => this.#recordSuccess(node, latencyMs),
      recordFailure: (node, err) => this.#recordFailure(node, err),
      forget: call => this.#calls.delete(call),
    }
  }

  /** The nodes, in the order of the list given: for {@link noteNodeInfo} and for tests. */
  get nodes (): readonly PoolNode[] {
    return this.#nodes
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
    let timer: TimerHandle | undefined
    await Promise.race([
      Promise.allSettled(probes),
      new Promise(resolve => { timer = this.#timers.setTimeout(() => resolve(undefined), graceMs) }),
    ])
    this.#timers.clearTimeout(timer)
    this.#scheduleProbes(timeoutMs)
  }

  /**
   * Runs `attempt` on the best node, failing over and hedging, until one answers or the deadline
   * passes; with `options.node`, on that node alone (RPC_ERR_UNAVAILABLE at once when it is not
   * usable, a TypeError when no node has that name).
   */
  run<T> (method: string, attempt: Attempt<T>, options: RunOptions): Promise<T> {
    if (this.#closed) return Promise.reject(new RpcClosedError(method))
    let only: PoolNode | undefined
    if (options.node !== undefined) {
      only = this.#nodes.find(node => node.transport.name === options.node)
      if (only === undefined) return Promise.reject(new TypeError(`option node must name one of the nodes (${this.#nodes.map(node => node.transport.name).join(', ')}), not ${JSON.stringify(options.node)}`))
      const unusable = this.#whyUnusable(only)
      if (unusable !== undefined) {
        return Promise.reject(new RpcUnavailableError(method, `${options.node} cannot take ${method} now: ${unusable}`, { cause: new AggregateError([], 'no attempt was made') }))
      }
    }
    const call = new PoolCall(this.#host, method, attempt, options, only)
    this.#calls.add(call as PoolCall<unknown>)
    call.start()
    return call.promise
  }

  /** Records what a node said of itself (from a probe or a caller's getnodeinfo), and notices new blocks. */
  noteNodeInfo (node: PoolNode, info: NodeInfo): void {
    const hash = typeof info.lastblock.hash === 'string' && /^[0-9a-f]{64}$/i.test(info.lastblock.hash) ? info.lastblock.hash.toLowerCase() : undefined
    node.health.noteReport(info.version, info.lastblock.height, hash)
    this.#updateTip()
    this.#options.onNodeTip?.({ node: node.transport.name, height: info.lastblock.height, blockHash: hash })
  }

  snapshot (): NodeSnapshot[] {
    return this.#nodes.map(node => {
      const { transport, health, slots } = node
      const chain = this.#standing(health)
      return {
        name: transport.name,
        url: transport.url,
        usable: this.#whyUnusable(node) === undefined,
        circuit: health.circuit,
        chain,
        version: health.version,
        height: health.height,
        blockHash: health.blockHash,
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
    for (const call of [...this.#calls]) call.end(reason)
    for (const probe of this.#probes) probe.cancel(reason)
    this.#probes.clear()
    for (const node of this.#nodes) node.slots.clear(reason)
    this.#timers.clearTimeout(this.#probeTimer)
    for (const timer of this.#retryTimers.values()) this.#timers.clearTimeout(timer)
    this.#retryTimers.clear()
    await Promise.all(this.#nodes.map(node => node.transport.close()))
  }

  /** Why the node is not usable (answered, circuit closed, in step with the tip), or undefined when it is. */
  #whyUnusable ({ health }: PoolNode): string | undefined {
    if (!health.seen) return 'it has not answered yet'
    if (health.circuit !== 'closed') return `its circuit is ${health.circuit}`
    const standing = this.#standing(health)
    if (standing !== 'in-step') return `it is ${standing === 'lagging' ? 'lagging behind' : 'ahead of'} the chain tip`
    return undefined
  }

  #tierOf (health: NodeHealth): Tier {
    if (health.circuit !== 'closed') return Tier.Failing
    return this.#standing(health) === 'in-step' ? Tier.Usable : Tier.OutOfStep
  }

  /**
   * Where a call goes. Within the best tier that has a node not tried yet (a hedge: only among
   * usable nodes): a node with a free slot, by power of two choices, unless waiting for a slot on
   * a better-rated node costs less; else the node where it would be answered soonest, if it can
   * wait that long; else a refusal (none for a hedge). With `only`, that node or nothing.
   */
  #place (exclude: ReadonlySet<PoolNode>, deadline: number, hedge: boolean, only: PoolNode | undefined): Placement | Refusal | undefined {
    let bestTier = Tier.Failing + 1
    let candidates: PoolNode[] = []
    for (const node of this.#nodes) {
      if (exclude.has(node) || (only !== undefined && node !== only)) continue
      const tier = this.#tierOf(node.health)
      if (tier < bestTier) {
        bestTier = tier
        candidates = [node]
      } else if (tier === bestTier) {
        candidates.push(node)
      }
    }
    // A hedge buys speed: never at the price of an answer from a node out of step or failing.
    if (hedge && bestTier !== Tier.Usable) return undefined
    const free = this.#twoChoices(candidates.filter(node => node.slots.free))
    // A free slot on a node rated slow (it hangs, it crawls) can cost more than a short wait on a
    // fast one: a waiting call is weighed by its wait plus the node's rating.
    let soonest: { node: PoolNode, costMs: number } | undefined
    let refusal: Refusal | undefined
    for (const candidate of candidates) {
      const wait = candidate.slots.expectedWait(deadline)
      if (wait === undefined) continue
      if (wait.waitMs <= wait.allowedMs) {
        const costMs = wait.waitMs + scoreOf(candidate)
        if (soonest === undefined || costMs < soonest.costMs) soonest = { node: candidate, costMs }
      } else if (refusal === undefined || wait.waitMs - wait.allowedMs < refusal.noSlot.expectedWaitMs - refusal.noSlot.allowedWaitMs) {
        refusal = { node: candidate, noSlot: new NoSlot('full', wait.waitMs, wait.allowedMs, 0) }
      }
    }
    if (free !== undefined && (soonest === undefined || scoreOf(free) <= soonest.costMs)) {
      free.slots.tryAcquire()
      return { node: free, queued: false }
    }
    if (soonest !== undefined) return { node: soonest.node, queued: true }
    // A hedge is a second chance, not a call: no node refused anything.
    if (hedge) return undefined
    if (refusal !== undefined) for (const candidate of candidates) candidate.slots.noteRefused()
    return refusal
  }

  /** Two drawn at random, the better rated taken (power of two choices). */
  #twoChoices (nodes: PoolNode[]): PoolNode | undefined {
    if (nodes.length <= 1) return nodes[0]
    const first = Math.floor(this.#random() * nodes.length)
    const second = (first + 1 + Math.floor(this.#random() * (nodes.length - 1))) % nodes.length
    const a = nodes[first] as PoolNode
    const b = nodes[second] as PoolNode
    return scoreOf(a) <= scoreOf(b) ? a : b
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
    this.#probes.add(cancel)
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
      this.#probes.delete(cancel)
    }
  }

  /** Probes closed-circuit nodes every interval, jittered, so that many clients do not beat in step. */
  #scheduleProbes (timeoutMs: number): void {
    const delay = this.#options.probeIntervalMs * (1 - PROBE_JITTER + 2 * PROBE_JITTER * this.#random())
    this.#probeTimer = this.#timers.setTimeout(() => {
      for (const node of this.#nodes) {
        if (node.health.circuit === 'closed') this.#probe(node, timeoutMs).catch(() => {})
      }
      this.#scheduleProbes(timeoutMs)
    }, delay)
  }

  /** An open circuit is probed once its cooldown ends (half-open); the probe closes or reopens it. */
  #scheduleRetry (node: PoolNode): void {
    if (this.#closed || this.#retryTimers.has(node)) return
    const timer = this.#timers.setTimeout(() => {
      this.#retryTimers.delete(node)
      if (node.health.circuit !== 'open') return
      node.health.beginProbe()
      this.#probe(node, Math.min(this.#options.probeIntervalMs, HALF_OPEN_PROBE_TIMEOUT_MS)).catch(() => {})
    }, Math.max(0, node.health.retryAt - this.#clock()))
    this.#retryTimers.set(node, timer)
  }
}

/** A node's rating now: its health, weighed by the calls it has in flight. */
function scoreOf (node: PoolNode): number {
  return node.health.score(node.slots.inFlight)
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
