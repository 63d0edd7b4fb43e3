/**
 * PocketNetProxyApi: typed RPC methods over a pool of Pocketnet nodes.
 * A call validates its params, encodes them per node (see methods/method-spec.ts), and
 * fails over between nodes within one deadline (see node-pool.ts).
 */
import { ResultCache } from './cache.js'
import { isRpcClientError, RpcClosedError, RpcNodeError } from './errors.js'
import { getnodeinfo, type NodeInfo } from './methods/getnodeinfo.js'
import { getuserprofile, type GetUserProfileParams, type UserProfile } from './methods/getuserprofile.js'
import type { CallContext, MethodSpec } from './methods/method-spec.js'
import { search, type SearchParams, type SearchResult, type SearchType } from './methods/search.js'
import { RPC_TABLE } from './methods/table.js'
import type { TableRpc } from './methods/table-rpc.js'
import { checkShape, forNodeVersion, tableParams, type TableMethod } from './methods/table-spec.js'
import { NodePool, type NodeSnapshot, type NodeTipReport, type RunOptions } from './node-pool.js'
import { resolveOptions, type ClientOptions, type ResolvedOptions } from './options.js'
import { SharedAnswers } from './redis/shared-answers.js'
import { BroadcastError, broadcastAnswerKind, unavailable, type BroadcastErrorCode, type BroadcastResult } from './wallet/broadcast.js'
import { transactionId } from './wallet/transaction.js'

export interface CallOptions {
  /** Abandons the call; the promise rejects with the signal's reason. */
  signal?: AbortSignal
  /**
   * Asks a node even when the answer cache holds an answer (a payment's confirmations, a
   * transaction a re-org may have moved): the answer is not kept either. Default false.
   */
  fresh?: boolean
  /**
   * Asks this node only (its `name` in {@link PocketNetProxyApi.nodes}, "node 2"): for a second
   * opinion, such as a payment read again from another node. No failover, no hedge, no cache
   * (as with `fresh`). A node that is not usable now fails the call at once with
   * RPC_ERR_UNAVAILABLE; one that fails it fails it with the usual codes. A name of no node is a
   * TypeError.
   */
  node?: string
}

/**
 * The typed RPC methods. Names are the node's own method names. Three are typed by hand; every
 * other usable method comes from the node's method table ({@link TableRpc}, generated).
 */
export interface PocketNetRpc extends TableRpc {
  /**
   * Calls `getnodeinfo`: the node's version, chain and last block.
   * @throws RPC_ERR_TIMEOUT, RPC_ERR_UNAVAILABLE, RPC_ERR_NODE
   * @example const { lastblock } = await api.rpc.getnodeinfo()
   */
  getnodeinfo (options?: CallOptions): Promise<NodeInfo>
  /**
   * Calls `getuserprofile`: the profiles of the registered accounts among `address`, sorted by
   * address. An unknown address is simply absent from the list.
   * @throws RPC_ERR_INVALID_PARAMS for a malformed address, and the transport codes
   * @example const [profile] = await api.rpc.getuserprofile({ address: 'P8bb…', shortForm: 'basic' })
   */
  getuserprofile (params: GetUserProfileParams, options?: CallOptions): Promise<UserProfile[]>
  /**
   * Calls `search`. `pageStart` is a page index; `type: 'content'` gives posts and videos as
   * `{ results, total, hasMore }`, the node's other types give its own answer.
   * @throws RPC_ERR_INVALID_PARAMS, and the transport codes
   * @example const { results, hasMore } = await api.rpc.search({ keyword: 'café', type: 'content', pageStart: 0, pageSize: 20 })
   */
  search<T extends SearchType> (params: SearchParams<T>, options?: CallOptions): Promise<SearchResult<T>>
}

export class PocketNetProxyApi {
  /** Typed RPC methods: `api.rpc.getnodeinfo()`, `api.rpc.getuserprofile(...)`, `api.rpc.search(...)`. */
  readonly rpc: PocketNetRpc
  readonly #options: ResolvedOptions
  readonly #context: CallContext
  readonly #pool: NodePool
  readonly #cache: ResultCache
  readonly #shared: SharedAnswers | undefined
  readonly #runOptions: RunOptions
  #closed = false

  /**
   * Creates a client and waits until at least one node answered `getnodeinfo`.
   * @throws TypeError naming the option when an option is invalid
   * @throws RPC_ERR_UNAVAILABLE listing each node and why it failed, when none answered within
   *   {@link ClientOptions.startupTimeoutMs}
   * @example const api = await PocketNetProxyApi.create({ nodes: ['http://127.0.0.1:38081'] })
   */
  static async create (options: ClientOptions = {}): Promise<PocketNetProxyApi> {
    const api = new PocketNetProxyApi(resolveOptions(options))
    try {
      await api.#pool.start(api.#options.startupTimeoutMs)
    } catch (err) {
      await api.close()
      throw err
    }
    return api
  }

  /** The highest block height {@link noteBlock} has seen. */
  #blockNoted = 0
  readonly #tipListeners = new Set<(report: NodeTipReport) => void>()

  private constructor (options: ResolvedOptions) {
    this.#options = options
    this.#context = { network: options.network }
    this.#runOptions = { deadlineMs: options.deadlineMs, attemptTimeoutMs: options.attemptTimeoutMs }
    const clock = options.clock
    const shared = this.#shared = options.redis && new SharedAnswers({
      link: options.redis,
      deadlineMs: options.deadlineMs,
      fetchReserveMs: options.attemptTimeoutMs,
      onLookup: options.onSharedLookup,
      ...(clock ? { clock } : {}),
    })
    this.#cache = new ResultCache({
      ...options.cache,
      onLookup: options.onCacheLookup,
      shared,
      height: () => this.#pool.bestHeight,
      ...(clock ? { perf: { now: clock } } : {}),
    })
    this.#pool = new NodePool({ ...options, onNewBlock: height => this.noteBlock(height), onNodeTip: report => this.#heardTip(report) })
    const fromTable: Record<string, (params?: unknown, callOptions?: CallOptions) => Promise<unknown>> = {}
    for (const [name, method] of Object.entries(RPC_TABLE)) {
      fromTable[name] = (params, callOptions) => this.#callTable(name, method, params, callOptions)
    }
    this.rpc = {
      ...fromTable as unknown as TableRpc,
      getnodeinfo: (callOptions) => this.#call(getnodeinfo, undefined, callOptions),
      getuserprofile: (params, callOptions) => this.#call(getuserprofile, params, callOptions),
      search: <T extends SearchType>(params: SearchParams<T>, callOptions?: CallOptions) =>
        this.#call(search, params, callOptions) as Promise<SearchResult<T>>,
    }
  }

  /**
   * Calls any public method by name with positional params, for methods that have no typed
   * wrapper yet (docs/pocketnet-node.md lists where to find them). Params go as given: mind the
   * node's wire types. Answers are cached per method as {@link ClientOptions.cache} says.
   */
  async callRaw (method: string, params: unknown[] = [], options: CallOptions = {}): Promise<unknown> {
    this.#assertOpen(method)
    const load = (deadlineMs?: number) => this.#pool.run(method, async (node, timeoutMs, cancel) => {
      const answer = await node.transport.post(method, params, { timeoutMs, cancel })
      return { value: answer.result, bytes: answer.bytes }
    }, this.#runOptionsWithin(deadlineMs, options.node))
    return untilAborted(this.#cached(method, ResultCache.key(method, params), load, options), options.signal)
  }

  /**
   * Sends a signed transaction (hex) to the nodes' write path, `sendrawtransaction [hex, {}]` on
   * `/post/`: never cached, failed over to another node only when a node gave no answer about the
   * transaction. Sending the same bytes again is safe and answers the same txid, so a caller that
   * does not know whether a send went through sends again.
   * @returns the txid (computed here, and checked against the node's), `alreadyConfirmed` when a
   *   node already had it in a block
   * @throws BroadcastError `BROADCAST_ERR_CONFLICT`, `BROADCAST_ERR_INPUTS_SPENT`,
   *   `BROADCAST_ERR_REJECTED`, `BROADCAST_ERR_UNAVAILABLE`; WalletError `WALLET_ERR_TRANSACTION`
   *   for text that is not hex; RPC_ERR_CLOSED
   * @example const { txid } = await api.broadcastTransaction(payment.hex)
   */
  async broadcastTransaction (hex: string, options: Pick<CallOptions, 'signal' | 'node'> = {}): Promise<BroadcastResult> {
    const method = 'sendrawtransaction'
    this.#assertOpen(method)
    const txid = transactionId(hex)
    type Answer = { kind: 'sent', txid: unknown } | { kind: 'confirmed' } | { kind: BroadcastErrorCode, error: RpcNodeError }
    let answer: Answer
    try {
      answer = await untilAborted(this.#pool.run<Answer>(method, async (node, timeoutMs, cancel) => {
        try {
          const sent = await node.transport.post(method, [hex, {}], { timeoutMs, cancel, write: true })
          return { kind: 'sent', txid: sent.result }
        } catch (err) {
          // A node's word about the transaction itself is the answer: another node would say the same.
          if (!(err instanceof RpcNodeError)) throw err
          const kind = broadcastAnswerKind(err.rpcCode, err.rpcMessage) ?? (err.retryable ? undefined : 'BROADCAST_ERR_REJECTED')
          if (kind === undefined) throw err
          return kind === 'confirmed' ? { kind } : { kind, error: err }
        }
      }, this.#runOptionsWithin(undefined, options.node)), options.signal)
    } catch (err) {
      if (isRpcClientError(err) && err.code !== 'RPC_ERR_CLOSED') throw unavailable(txid, err)
      throw err
    }
    if (answer.kind === 'confirmed') return { txid, alreadyConfirmed: true }
    if (answer.kind === 'sent') {
      if (answer.txid !== txid) throw new BroadcastError('BROADCAST_ERR_REJECTED', txid, { rpcMessage: `the node answered another txid: ${String(answer.txid).slice(0, 80)}` })
      return { txid, alreadyConfirmed: false }
    }
    throw new BroadcastError(answer.kind, txid, { rpcCode: answer.error.rpcCode, rpcMessage: answer.error.rpcMessage, cause: answer.error })
  }

  /** The cache's answer (or a call in flight), or, with `fresh` or `node`, a call of its own. */
  #cached<T> (method: string, key: string, load: (deadlineMs?: number) => Promise<{ value: T, bytes: number }>, options: CallOptions): Promise<T> {
    // One node's own answer is asked for: another node's, cached or shared, would not do.
    if (options.fresh === true || options.node !== undefined) return load().then(answer => answer.value)
    return this.#cache.get(method, key, load)
  }

  /** A method of the node's table: params checked and placed by the table, the answer's shape checked before it is cached. */
  async #callTable (name: string, method: TableMethod, params: unknown, options: CallOptions = {}): Promise<unknown> {
    this.#assertOpen(name)
    const wire = tableParams(name, method, params)
    const load = (deadlineMs?: number) => this.#pool.run(name, async (node, timeoutMs, cancel) => {
      const answer = await node.transport.post(name, forNodeVersion(method, wire, node.health.version), { timeoutMs, cancel })
      return { value: checkShape(name, method, answer.result), bytes: answer.bytes }
    }, this.#runOptionsWithin(deadlineMs, options.node))
    return untilAborted(this.#cached(name, ResultCache.key(name, wire), load, options), options.signal)
  }

  /**
   * Tells the client that a block of `height` connected, as a node event source saw it
   * (packages/pocketnet-client/events/) or the pool's probes did: answers that depend on the chain tip
   * (getnodeinfo, getuserprofile) are dropped at once, the first time a height is seen, rather than
   * at the next probe. Dropping is all it does: which height the nodes agree on stays the pool's to
   * decide.
   */
  noteBlock (height: number): void {
    if (!Number.isSafeInteger(height) || height <= this.#blockNoted) return
    this.#blockNoted = height
    this.#cache.onNewBlock()
  }

  /**
   * Calls `listener` with each node's report of its tip (height and hash), from the pool's probes
   * and from any getnodeinfo called through this client: how a node event source learns, between
   * two blocks, that a node's tip is no longer the block it followed
   * (packages/pocketnet-client/events/). Returns the way to stop.
   */
  watchNodeTips (listener: (report: NodeTipReport) => void): () => void {
    this.#tipListeners.add(listener)
    return () => { this.#tipListeners.delete(listener) }
  }

  #heardTip (report: NodeTipReport): void {
    for (const listener of this.#tipListeners) {
      try {
        listener(report)
      } catch {
        // A listener's bug must not fail the probe that carried the report.
      }
    }
  }

  /** The state of each node, for readiness checks and metrics. URLs included: keep them away from clients. */
  nodes (): NodeSnapshot[] {
    return this.#pool.snapshot()
  }

  /** The chain height the answering nodes agree on (the highest two of them reach; one node alone is believed). */
  get bestHeight (): number | undefined {
    return this.#pool.bestHeight
  }

  get closed (): boolean {
    return this.#closed
  }

  /**
   * Whether `answer`, a value a call of this client returned, is still that call's fresh cached
   * answer: for a layer that keeps a rendering of it (an HTTP response) and serves that rendering
   * again without calling. Counts as a cache hit when true. False once the answer expired, was
   * evicted or dropped at a new block, or for an answer that was never cached.
   */
  isFreshAnswer (answer: object): boolean {
    return !this.closed && this.#cache.reuse(answer)
  }

  /** Cache entries and bytes, for metrics. */
  cacheStats (): { entries: number, bytes: number } {
    return { entries: this.#cache.size, bytes: this.#cache.bytes }
  }

  /** Aborts calls in flight and closes every connection. Idempotent. */
  async close (): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    // Cleared once the pool is closed: the calls in flight have failed with the close error by
    // then, so none of them can store an answer after the clear.
    await this.#pool.close(new RpcClosedError('close'))
    this.#cache.clear()
    this.#shared?.close()
  }

  async #call<P, R> (spec: MethodSpec<P, R>, params: P, options: CallOptions = {}): Promise<R> {
    this.#assertOpen(spec.name)
    const named = spec.toWire(params, this.#context)
    const method: TableMethod = RPC_TABLE[spec.name]
    const wire = tableParams(spec.name, method, named)
    const load = (deadlineMs?: number) => this.#pool.run(spec.name, async (node, timeoutMs, cancel) => {
      const answer = await node.transport.post(spec.name, forNodeVersion(method, wire, node.health.version), { timeoutMs, cancel })
      const value = spec.fromWire(answer.result, params, named)
      // A caller's getnodeinfo tells the pool about new blocks as well as its probes do.
      if (spec === getnodeinfo as unknown) this.#pool.noteNodeInfo(node, value as NodeInfo)
      return { value, bytes: answer.bytes }
    }, this.#runOptionsWithin(deadlineMs, options.node))
    // Shared with identical calls in flight, so one caller's abort must not cancel the upstream call.
    const key = ResultCache.key(spec.name, wire)
    return untilAborted(this.#cached(spec.name, key, load, options), options.signal)
  }

  /**
   * The run options, with a shorter deadline when part of the call's went on waiting for another
   * instance, and the one node asked for, if any.
   */
  #runOptionsWithin (deadlineMs: number | undefined, node: string | undefined): RunOptions {
    const run = deadlineMs === undefined || deadlineMs >= this.#runOptions.deadlineMs
      ? this.#runOptions
      : { deadlineMs, attemptTimeoutMs: Math.min(deadlineMs, this.#runOptions.attemptTimeoutMs) }
    return node === undefined ? run : { ...run, node }
  }

  #assertOpen (method: string): void {
    if (this.closed) throw new RpcClosedError(method)
  }
}

/** `promise`, or the signal's reason as soon as it aborts. */
function untilAborted<T> (promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}
