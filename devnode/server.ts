/**
 * An offline Pocketnet node over real HTTP: the public read RPC with a node's wire format,
 * a generated dataset, a chain that moves when told (blocks with transactions and social events,
 * re-orgs), the wallet side (txunspent, estimatesmartfee, and sendrawtransaction on the write path
 * `/post/`, which checks signed payments and puts them in the mempool), the node's WebSocket on a
 * port of its own, injectable faults, and, when asked, controls over HTTP that pay, fund, mine and
 * re-org (controls.ts).
 * For development (`npm run devnode`, `npm run demo`), tests and benchmarks.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { DEFAULT_HEIGHT, getDefaultDataset, type Dataset } from './data/generate.js'
import { ChainHistory, type ChainBlock, type ChainNotification, type ChainTransaction, type NewNotification, type NewTransaction } from './chain.js'
import { createControls, fundAddress, type ControlOptions } from './controls.js'
import { ActiveFault, answerWithFault, type Fault, type FaultScope } from './faults.js'
import { DEFAULT_FEE_RATE_PER_KB, READ_ONLY_METHODS, RpcError, SEND_METHODS, callMethod, sendRawTransaction, type ChainState } from './methods/index.js'
import { createNodeWebSocket, type WebSocketControls } from './websocket.js'

export type { Fault, FaultScope } from './faults.js'
export type { ControlOptions } from './controls.js'
export { CONTROLS_PATH, DEVNODE_WALLET, PAYMENT_FEE_SAT } from './controls.js'
export { DEFAULT_FEE_RATE_PER_KB } from './methods/index.js'
export { ChainHistory } from './chain.js'
export type { ChainBlock, ChainNotification, ChainOutput, ChainTransaction, NewNotification, NewTransaction, SocialEventType } from './chain.js'
export type { WebSocketControls, WebSocketMode, WebSocketRegistration } from './websocket.js'
export type { AccountRecord, CommentRecord, Dataset, PostRecord, UserRecord } from './data/generate.js'

export interface EmulatorOptions {
  /** Default 0: a free port. */
  port?: number
  host?: string
  /** Reported by getnodeinfo; below 0.22.1 paging params are read as strings. Default 0.22.7. */
  version?: string
  /** The tip's height at the start. Ignored with `chain`. */
  height?: number
  /**
   * The chain to serve. Default: a chain of its own. Emulators given the same chain agree on
   * every block (a node switch), and each pushes the blocks connected on it to its own sockets.
   */
  chain?: ChainHistory
  /** The WebSocket's port. Default 0: a free port. */
  wsPort?: number
  /** Added before every answer. */
  latencyMs?: number
  /**
   * What estimatesmartfee answers, satoshi per 1,000 bytes (null: no estimate, the node's
   * `errors` answer). Default DEFAULT_FEE_RATE_PER_KB.
   */
  feeRatePerKb?: number | null
  /** Mine a block every N ms. Default: only when mineBlock() is called. */
  blockIntervalMs?: number
  dataset?: Dataset
  /** Most calls kept in `calls` (the oldest half goes beyond it), so a long-running emulator stays small. Default 100000. */
  recordLimit?: number
  /**
   * Serve the RPC through a work queue as a real node does (its libevent HTTP server): a few
   * worker threads (default 4) take requests in arrival order, each holding its worker for its
   * whole service time (`latencyMs` plus a `latency` fault); up to `depth` more (default 16)
   * wait in line, and a request arriving while that many wait is refused at once with HTTP 500
   * and the plain-text body `Work queue depth exceeded`. Absent: every request is served at once.
   */
  workQueue?: WorkQueueModel
  /**
   * Controls over HTTP under `/devnode/` (controls.ts): `POST /devnode/pay`, `/devnode/fund`, `/devnode/mine`,
   * `/devnode/disconnect`, `/devnode/reconnect`, `/devnode/feerate`, for loopback clients that are not browsers (`{ remote: true }`: any
   * client). Default off: those paths are then a node's, and answer as it does.
   */
  controls?: boolean | ControlOptions
}

export interface FundedCoin {
  txid: string
  vout: number
  amountSat: number
  /** The block mined for it. */
  height: number
  hash: string
}

export interface WorkQueueModel {
  /** Worker threads. Default 4. */
  threads?: number
  /** Most requests waiting for a worker. Default 16. */
  depth?: number
}

export interface WorkQueueStats {
  /** Requests holding a worker now. */
  active: number
  /** Requests waiting for a worker now. */
  waiting: number
  /** High-water marks since the start or the last resetWorkQueueStats(). */
  maxActive: number
  maxWaiting: number
  /** Refused with `Work queue depth exceeded`. */
  rejected: number
  /** Held a worker and let it go: answered, or their client left. */
  served: number
}

export interface RecordedCall {
  method: string
  /** As parsed from the request, unchanged. */
  params: unknown
  id: unknown
  at: number
}

export interface Emulator {
  url: string
  port: number
  calls: RecordedCall[]
  callsTo (method: string): RecordedCall[]
  clearCalls (): void
  /** Replaces the current fault (null removes it). */
  setFault (fault: Fault | null, scope?: FaultScope): void
  readonly height: number
  /** Connects a block holding the transactions and social events added since the last one. */
  mineBlock (): void
  /** The chain served, shared with the emulators given the same one. */
  chain: ChainHistory
  /** Adds a transaction to the next block. */
  addTransaction (transaction: NewTransaction): ChainTransaction
  /**
   * Pays `amountSat` to `address` from the emulator's wallet in a block mined at once (with whatever
   * else waits in the mempool): a coin the address can spend, listed by txunspent from now on.
   */
  fund (address: string, amountSat: number): FundedCoin
  /** What estimatesmartfee answers from now on: satoshi per 1,000 bytes, or null for no estimate. */
  setFeeRate (feeRatePerKb: number | null): void
  /** Adds a social event (a comment, a score, a subscription …) to the next block. */
  addNotification (notification: NewNotification): ChainNotification
  /**
   * Disconnects the tip (a re-org): the height goes down by one, and the next mineBlock() puts a
   * block with another hash there. Nothing is pushed, as on a real node. What the block held is
   * answered without a block and never mined again (as on 0.22.7), unless reconnectBlock() brings
   * the block back or a transaction's bytes are sent again (sendrawtransaction on `/post/`).
   */
  disconnectBlock (): ChainBlock
  /** Connects the block disconnected last again, while the tip is still its parent (`reconsiderblock`). */
  reconnectBlock (): ChainBlock
  /** The node's WebSocket: its URL and the test controls (drop, stall, refuse). */
  webSocket: WebSocketControls
  dataset: Dataset
  /** Replaces the work-queue model for requests that arrive from now on (null: serve all at once). */
  setWorkQueue (model: WorkQueueModel | null): void
  workQueue (): WorkQueueStats
  /** Restarts the high-water marks and counters; what is active or waiting now stays. */
  resetWorkQueueStats (): void
  /** Stops listening and drops open connections (hanging ones too); state is kept. */
  stop (): Promise<void>
  /** Listens again on the same port. */
  start (): Promise<void>
  close (): Promise<void>
}

const MAX_BODY_BYTES = 1024 * 1024

function sendJson (response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body)
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
  response.end(text)
}

interface WorkQueueLimits { threads: number, depth: number }
/** A worker's release, or why the request got none. */
type Worker = (() => void) | 'refused' | 'gone'

function workQueueLimits (model: WorkQueueModel): WorkQueueLimits {
  const limits = { threads: model.threads ?? 4, depth: model.depth ?? 16 }
  if (!Number.isInteger(limits.threads) || limits.threads < 1) throw new RangeError(`workQueue.threads must be a whole number from 1, not ${limits.threads}`)
  if (!Number.isInteger(limits.depth) || limits.depth < 0) throw new RangeError(`workQueue.depth must be a whole number from 0, not ${limits.depth}`)
  return limits
}

async function readBody (request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of request) {
    size += (chunk as Buffer).length
    if (size > MAX_BODY_BYTES) return undefined
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}

export async function createEmulator (options: EmulatorOptions = {}): Promise<Emulator> {
  const dataset = options.dataset ?? getDefaultDataset()
  const history = options.chain ?? new ChainHistory({ height: options.height ?? DEFAULT_HEIGHT })
  const chain: ChainState = {
    version: options.version ?? '0.22.7',
    height: history.tip.height,
    blockHash: history.tip.hash,
    blockTime: history.tip.time,
    lag: 0,
    feeRatePerKb: options.feeRatePerKb === undefined ? DEFAULT_FEE_RATE_PER_KB : options.feeRatePerKb,
  }
  const followTip = (): void => {
    Object.assign(chain, { height: history.tip.height, blockHash: history.tip.hash, blockTime: history.tip.time })
  }
  const unlisten = history.listen({ connected: followTip, disconnected: followTip })
  const calls: RecordedCall[] = []
  const recordLimit = options.recordLimit ?? 100_000
  const record = (call: RecordedCall): void => {
    if (calls.length >= recordLimit) calls.splice(0, Math.ceil(recordLimit / 2))
    calls.push(call)
  }
  const sockets = new Set<Socket>()
  const setFeeRate = (feeRatePerKb: number | null): void => {
    if (feeRatePerKb !== null && (!Number.isSafeInteger(feeRatePerKb) || feeRatePerKb < 0)) throw new RangeError(`the fee rate must be a whole number of satoshi per 1,000 bytes from 0, or null, not ${feeRatePerKb}`)
    chain.feeRatePerKb = feeRatePerKb
  }
  setFeeRate(chain.feeRatePerKb ?? null)
  const controls = options.controls ? createControls(history, options.controls === true ? {} : options.controls, { setFeeRate }) : undefined
  let fault: ActiveFault | undefined
  let closed = false

  // Requests already in the queue drain by the last limits given, even once the model is off.
  let queueOn = options.workQueue !== undefined
  let limits = workQueueLimits(options.workQueue ?? {})
  let busy = 0
  const waiting: Array<{ run (): void, leave (): void }> = []
  const stats = { maxActive: 0, maxWaiting: 0, rejected: 0, served: 0 }

  /** Holds a worker until the returned release, or until the socket closes (a hung answer). */
  function occupy (socket: Socket): () => void {
    busy++
    stats.maxActive = Math.max(stats.maxActive, busy)
    let held = true
    const release = (): void => {
      if (!held) return
      held = false
      socket.off('close', release)
      busy--
      stats.served++
      startWaiters()
    }
    socket.once('close', release)
    return release
  }

  function startWaiters (): void {
    while (busy < limits.threads && waiting.length > 0) waiting.shift()?.run()
  }

  /**
   * A worker's release once the request holds one; 'refused' when the line is full, 'gone'
   * when the client left first.
   */
  function takeWorker (socket: Socket): Worker | Promise<Worker> {
    if (socket.destroyed) return 'gone'
    if (busy < limits.threads && waiting.length === 0) return occupy(socket)
    if (waiting.length >= limits.depth) {
      stats.rejected++
      return 'refused'
    }
    return new Promise(resolve => {
      const entry = {
        run () {
          socket.off('close', entry.leave)
          resolve(occupy(socket))
        },
        // A client that left must not take a worker later.
        leave () {
          waiting.splice(waiting.indexOf(entry), 1)
          resolve('gone')
        },
      }
      socket.once('close', entry.leave)
      waiting.push(entry)
      stats.maxWaiting = Math.max(stats.maxWaiting, waiting.length)
    })
  }

  /** The answer to one call on `path`; the write path (`/post/`) serves no read method but `help`, and the read path no write method. */
  function dispatch (path: string, method: string, params: unknown[], fault: Fault | undefined): unknown {
    const writePath = path.startsWith('/post/')
    if (writePath && READ_ONLY_METHODS.has(method)) throw new RpcError(-32601, 'Method not found', 404)
    if (writePath && SEND_METHODS.has(method)) return sendRawTransaction(history, params, { lose: fault?.kind === 'lose-broadcast' })
    return callMethod(dataset, chain, method, params, history, webSocket.port)
  }

  async function handle (request: IncomingMessage, response: ServerResponse): Promise<void> {
    // Not node calls: never recorded, queued, delayed or faulted.
    if (controls?.owns(request.url)) return controls.handle(request, response)
    if (request.method !== 'POST') {
      response.writeHead(405, { 'content-type': 'text/plain' })
      response.end('JSONRPC server handles only POST requests')
      return
    }
    const text = await readBody(request)
    if (text === undefined) {
      response.writeHead(413, { 'content-type': 'text/plain' })
      response.end('Request body too large')
      return
    }
    let body: { method?: unknown, params?: unknown, id?: unknown }
    try {
      body = JSON.parse(text)
      if (typeof body !== 'object' || body === null) throw new Error('not an object')
    } catch {
      record({ method: '', params: undefined, id: null, at: Date.now() })
      sendJson(response, 500, { result: null, error: { code: -32700, message: 'Parse error' }, id: null })
      return
    }
    const method = typeof body.method === 'string' ? body.method : ''
    const id = body.id ?? null
    record({ method, params: body.params, id, at: Date.now() })

    if (!queueOn) return answer(request, response, method, id, body.params)
    const socket = request.socket
    const worker = await takeWorker(socket)
    if (worker === 'gone') return
    if (worker === 'refused') {
      answerWithFault({ kind: 'work-queue' }, request, response, id)
      return
    }
    try {
      await answer(request, response, method, id, body.params)
    } finally {
      // Unanswered (a hang): the worker stays taken until the client goes.
      if (response.writableEnded || socket.destroyed) worker()
    }
  }

  async function answer (request: IncomingMessage, response: ServerResponse, method: string, id: unknown, rawParams: unknown): Promise<void> {
    if (options.latencyMs) await sleep(options.latencyMs)
    const active = fault?.take(method) ? fault.fault : undefined
    if (active?.kind === 'latency') await sleep(active.ms)
    if (active && answerWithFault(active, request, response, id)) return
    chain.lag = active?.kind === 'lag' ? active.blocks : 0
    try {
      const params = Array.isArray(rawParams) ? rawParams : []
      const result = dispatch(request.url ?? '/', method, params, active)
      if (active?.kind === 'drop-after-accept') {
        request.socket.destroy()
        return
      }
      sendJson(response, 200, { result, error: null, id })
    } catch (err) {
      const rpc = err instanceof RpcError ? err : new RpcError(-32603, 'Internal error')
      sendJson(response, rpc.status, { result: null, error: { code: rpc.code, message: rpc.message }, id })
    } finally {
      chain.lag = 0
    }
  }

  const server: Server = createServer((request, response) => {
    handle(request, response).catch(() => request.socket.destroy())
  })
  server.keepAliveTimeout = 10_000
  server.on('connection', socket => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })

  const listen = (port: number): Promise<number> => new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, options.host ?? '127.0.0.1', () => {
      server.off('error', reject)
      resolve((server.address() as { port: number }).port)
    })
  })
  const webSocket = await createNodeWebSocket({ chain: history, host: options.host ?? '127.0.0.1', port: options.wsPort ?? 0 })
  const port = await listen(options.port ?? 0).catch(async (err: unknown) => {
    unlisten()
    await webSocket.close()
    throw err
  })

  function mineBlock (): void {
    history.mine()
  }
  const miner = options.blockIntervalMs ? setInterval(mineBlock, options.blockIntervalMs).unref() : undefined

  async function stop (): Promise<void> {
    await webSocket.stop()
    if (!server.listening) return
    const closing = new Promise<void>(resolve => server.close(() => resolve()))
    for (const socket of sockets) socket.destroy()
    await closing
  }

  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    port,
    calls,
    callsTo: method => calls.filter(call => call.method === method),
    clearCalls: () => { calls.length = 0 },
    setFault (next, scope) {
      fault = next === null ? undefined : new ActiveFault(next, scope)
    },
    get height () {
      return chain.height
    },
    mineBlock,
    chain: history,
    addTransaction: transaction => history.addTransaction(transaction),
    addNotification: notification => history.addNotification(notification),
    fund: (address, amountSat) => fundAddress(history, address, amountSat),
    setFeeRate,
    disconnectBlock: () => history.disconnectTip(),
    reconnectBlock: () => history.reconnectTip(),
    webSocket,
    dataset,
    setWorkQueue (model) {
      queueOn = model !== null
      if (model === null) return
      limits = workQueueLimits(model)
      startWaiters()
    },
    workQueue: () => ({ active: busy, waiting: waiting.length, ...stats }),
    resetWorkQueueStats () {
      Object.assign(stats, { maxActive: busy, maxWaiting: waiting.length, rejected: 0, served: 0 })
    },
    stop,
    async start () {
      if (closed) throw new Error('The emulator is closed')
      if (!server.listening) await listen(port)
      await webSocket.start()
    },
    async close () {
      closed = true
      clearInterval(miner)
      unlisten()
      await stop()
      await webSocket.close()
    },
  }
}
