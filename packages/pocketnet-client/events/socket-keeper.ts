/**
 * Keeping the node event source's one WebSocket (docs/node-events.md, "One socket, and which node
 * holds it"): which node holds it, opening it again after a loss, moving it off a node that fell
 * out of step, and polling for blocks whenever none is registered. What the socket and the polls
 * bring is told to the owner, which reads the blocks (chain-sync.ts). Read top to bottom by its
 * states, in the order a keeper meets them:
 *
 * - `down`: no socket. Blocks are polled every `pollIntervalMs`, and an attempt is set for later:
 *   at once at the start, else after a backoff that doubles with each failure in a row (from
 *   `reconnectMinMs` to `reconnectMaxMs`, half of it random).
 * - `connecting`: a node is chosen (a usable one not passed over lately) and its socket is on its
 *   way: the node's WebSocket port looked up, then the socket (node-socket.ts) opened and
 *   registering. Still polling. A failure on the way goes back to `down`, and the node is passed
 *   over for `nodeCooldownMs` while another can be tried.
 * - `open`: the socket registered. No polling: the node announces each block. At each keep-alive
 *   the socket moves (`down`, then `connecting` to another node) when its node fell out of step or
 *   its circuit opened while another node is usable. A socket lost goes back to `down`.
 * - `closed`: close() was called. No socket, no timer, nothing told after it.
 *
 * Polling is the state's consequence, not a state of its own: it runs exactly while the keeper is
 * `down` or `connecting`. `NodeSocket`'s own states (`registering`, `registered`, `ended`) are one
 * socket's, from its opening to its end; the keeper outlives its sockets and opens the next.
 */
import { backoffDelayMs } from '../backoff.js'
import { NodeEventError } from './errors.js'
import { NodeSocket } from './node-socket.js'
import type { ResolvedSourceOptions } from './source-options.js'
import { reportedWebSocketPort, webSocketUrl } from './web-socket-url.js'
import type { TimerHandle } from '../timers.js'
import type { NodeSnapshot, NodeTipReport } from '../node-pool.js'

export type SocketState = 'connecting' | 'open' | 'down' | 'closed'

/** What the keeper tells its owner: each is something that happened, the owner decides what to read. */
export interface SocketKeeperHooks {
  /** The socket registered: blocks that connected while none was held are to be read. */
  onOpen (): void
  /** The node announced a block. */
  onBlockAnnounced (height: number): void
  /** A poll is due (no socket registered). */
  onPoll (): void
  /** A keep-alive went out on the registered socket. */
  onKeepAlive (): void
  /** A node's word on its tip, heard when it was asked for its WebSocket port. */
  onNodeTip (report: NodeTipReport): void
  /** A problem, for logs; the keeper goes on by itself. */
  report (err: NodeEventError): void
}

/** The keeper's counters since its start, for metrics. */
export interface SocketCounts {
  /** Sockets that registered. */
  socketsOpened: number
  /** Sockets that registered after an earlier one was lost. */
  reconnects: number
  /** Socket attempts that failed, and sockets lost. */
  socketFailures: number
  /** `getnodeinfo` calls to a node itself for its WebSocket port. */
  portLookups: number
  /** Socket frames skipped for want of the protocol's fields. */
  badMessages: number
}

type KeeperOptions = Pick<ResolvedSourceOptions, 'api' | 'webSocketUrl' | 'watchAddress' | 'timers' | 'clock' | 'random'
  | 'connectTimeoutMs' | 'pingIntervalMs' | 'silenceTimeoutMs' | 'reconnectMinMs' | 'reconnectMaxMs' | 'pollIntervalMs' | 'nodeCooldownMs'>

export class SocketKeeper {
  readonly counts: SocketCounts = { socketsOpened: 0, reconnects: 0, socketFailures: 0, portLookups: 0, badMessages: 0 }
  readonly #options: KeeperOptions
  readonly #hooks: SocketKeeperHooks
  /** Stops a port look-up in flight at close(). */
  readonly #abort = new AbortController()
  #state: SocketState = 'down'
  /** The node chosen, while `connecting` or `open` (and the last one, once `closed`). */
  #node: NodeSnapshot | undefined
  /** Its socket, once opened (`connecting`, registering) and while `open`. */
  #socket: NodeSocket | undefined
  /** Socket attempts failed in a row: the backoff's count. */
  #failures = 0
  /** The next attempt, while `down`. */
  #attemptTimer: TimerHandle | undefined
  /** The next poll, while `down` or `connecting`. */
  #pollTimer: TimerHandle | undefined
  /** Nodes whose socket failed lately, passed over until then (clock milliseconds). */
  readonly #cooldownUntil = new Map<string, number>()
  /** Each node's WebSocket port, as it reported it; asked again after its socket failed. */
  readonly #ports = new Map<string, number>()

  constructor (options: KeeperOptions, hooks: SocketKeeperHooks) {
    this.#options = options
    this.#hooks = hooks
  }

  get state (): SocketState {
    return this.#state
  }

  /** The node holding the socket or being connected to ("node 2"). */
  get node (): string | undefined {
    return this.#node?.name
  }

  /** Whether blocks are polled: while no socket is registered. */
  get polling (): boolean {
    return this.#state === 'down' || this.#state === 'connecting'
  }

  /** Polls, and tries a socket at once. */
  start (): void {
    this.#become('down')
    this.#connect()
  }

  /** Cuts the socket and clears the timers; nothing is told after it. Idempotent. */
  close (): void {
    if (this.#state === 'closed') return
    this.#become('closed')
    this.#abort.abort(new NodeEventError('EVENTS_ERR_SOCKET', 'The event source was closed'))
    this.#options.timers.clearTimeout(this.#attemptTimer)
    this.#attemptTimer = undefined
    this.#socket?.close()
    this.#socket = undefined
  }

  /** Every change of state goes through here: polling follows it. */
  #become (next: SocketState): void {
    this.#state = next
    const { timers, pollIntervalMs } = this.#options
    if (this.polling) {
      // Polling goes on at its own pace through `down` and `connecting`.
      if (this.#pollTimer !== undefined) return
      const poll = (): void => {
        this.#pollTimer = timers.setTimeout(poll, pollIntervalMs)
        this.#hooks.onPoll()
      }
      this.#pollTimer = timers.setTimeout(poll, pollIntervalMs)
    } else {
      timers.clearTimeout(this.#pollTimer)
      this.#pollTimer = undefined
    }
  }

  // ---- down → connecting -----------------------------------------------------------------------

  /** Tries a socket in the background; every failure is handled inside. */
  #connect (): void {
    this.#attemptTimer = undefined
    this.#attempt().catch(err => this.#hooks.report(new NodeEventError('EVENTS_ERR_SOCKET', 'Opening the WebSocket failed', { cause: err })))
  }

  async #attempt (): Promise<void> {
    if (this.#state === 'closed') return
    const node = this.#pickNode()
    if (node === undefined) {
      this.#failed(undefined, new NodeEventError('EVENTS_ERR_SOCKET', 'No node is healthy enough to hold the WebSocket'))
      return
    }
    this.#node = node
    this.#become('connecting')
    let url: string
    try {
      url = await this.#urlFor(node)
    } catch (err) {
      if (this.#state === 'connecting') this.#failed(node, err as NodeEventError)
      return
    }
    if (this.#state !== 'connecting') return
    try {
      this.#socket = this.#openSocket(node, url)
    } catch (err) {
      // A URL the WebSocket client refuses (a webSocketUrl option's mistake).
      this.#failed(node, new NodeEventError('EVENTS_ERR_SOCKET', `${node.name}'s WebSocket URL is not usable`, { node: node.name, cause: err }))
    }
  }

  /** A node to hold the socket: a usable one not passed over lately, else the one passed over the longest ago. */
  #pickNode (): NodeSnapshot | undefined {
    const now = this.#options.clock()
    const nodes = this.#options.api.nodes()
    let choices = nodes.filter(node => node.usable)
    if (choices.length === 0) choices = nodes.filter(node => node.circuit !== 'open' && node.chain !== 'lagging')
    if (choices.length === 0) return undefined
    const rested = choices.filter(node => (this.#cooldownUntil.get(node.url) ?? -Infinity) <= now)
    if (rested.length > 0) return rested[Math.floor(this.#options.random() * rested.length)]
    return choices.reduce((best, node) => (this.#cooldownUntil.get(node.url) ?? 0) < (this.#cooldownUntil.get(best.url) ?? 0) ? node : best)
  }

  async #urlFor (node: NodeSnapshot): Promise<string> {
    const { webSocketUrl: given, connectTimeoutMs, timers } = this.#options
    if (given !== undefined) {
      const url = given({ name: node.name, url: node.url })
      if (url === undefined) throw new NodeEventError('EVENTS_ERR_SOCKET', `No WebSocket is known for ${node.name}`, { node: node.name })
      return url
    }
    let port = this.#ports.get(node.url)
    if (port === undefined) {
      this.counts.portLookups++
      const reported = await reportedWebSocketPort(node.url, { node: node.name, timeoutMs: connectTimeoutMs, timers, signal: this.#abort.signal })
      port = reported.port
      this.#ports.set(node.url, port)
      if (reported.tip !== undefined && this.#state !== 'closed') this.#hooks.onNodeTip({ node: node.name, ...reported.tip })
    }
    return webSocketUrl(node.url, port)
  }

  #openSocket (node: NodeSnapshot, url: string): NodeSocket {
    const { timers, clock, connectTimeoutMs, pingIntervalMs, silenceTimeoutMs, watchAddress } = this.#options
    const socket: NodeSocket = new NodeSocket({
      url,
      node: node.name,
      watchAddress,
      timers,
      clock,
      connectTimeoutMs,
      pingIntervalMs,
      silenceTimeoutMs,
      onRegistered: () => this.#opened(),
      onNewBlock: block => this.#hooks.onBlockAnnounced(block.height),
      onBadMessage: err => {
        this.counts.badMessages++
        this.#hooks.report(err)
      },
      onLost: err => {
        if (this.#socket !== socket) return
        this.#socket = undefined
        this.#failed(node, err)
      },
      onTick: () => this.#keptAlive(node),
    })
    return socket
  }

  // ---- connecting → open ---------------------------------------------------------------------

  #opened (): void {
    this.counts.socketsOpened++
    if (this.counts.socketsOpened > 1) this.counts.reconnects++
    this.#failures = 0
    this.#become('open')
    this.#hooks.onOpen()
  }

  /** Each keep-alive: the owner's check for blocks not announced, then whether the node is still fit to hold the socket. */
  #keptAlive (node: NodeSnapshot): void {
    this.#hooks.onKeepAlive()
    const { api } = this.#options
    const now = api.nodes().find(each => each.url === node.url)
    const unwell = now !== undefined && (now.circuit === 'open' || now.chain !== 'in-step')
    if (unwell && api.nodes().some(each => each.usable && each.url !== node.url)) {
      this.#socket?.close()
      this.#socket = undefined
      this.#failed(node, new NodeEventError('EVENTS_ERR_SOCKET', `${node.name} is no longer in step with the chain: moving the WebSocket`, { node: node.name }))
    }
  }

  // ---- → down ----------------------------------------------------------------------------------

  /** An attempt failed or the socket was lost: `node` is passed over for a while, and another attempt set after the backoff. */
  #failed (node: NodeSnapshot | undefined, err: NodeEventError): void {
    this.counts.socketFailures++
    this.#failures++
    this.#node = undefined
    if (node !== undefined) {
      this.#cooldownUntil.set(node.url, this.#options.clock() + this.#options.nodeCooldownMs)
      // The port may have moved with a restart: asked again next time.
      this.#ports.delete(node.url)
    }
    this.#become('down')
    this.#hooks.report(err)
    const { timers, reconnectMinMs, reconnectMaxMs, random } = this.#options
    const delayMs = backoffDelayMs(this.#failures, { minMs: reconnectMinMs, maxMs: reconnectMaxMs, random })
    timers.clearTimeout(this.#attemptTimer)
    this.#attemptTimer = timers.setTimeout(() => this.#connect(), delayMs)
  }
}
