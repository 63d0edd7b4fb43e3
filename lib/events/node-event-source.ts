/**
 * The node event source: what happens on the chain, as typed events, for one process, at the
 * cost of ONE node WebSocket and at most two calls per block (docs/node-events.md).
 *
 * - The socket goes to a healthy node of the client's pool (in step, circuit closed) and only
 *   says "a block connected": the source then reads the blocks it has not reported
 *   (`getlastblocks`, which also shows whether the chain still goes through the last block
 *   reported) and, when addresses or posts are of interest, the block's notifications for every
 *   address at once (`getnotifications [height]`), filtered here. No socket per address.
 * - Any gap (a dropped socket, a node switch, a restart with `resumeFrom`) is read back from the
 *   last block reported, in order, up to `maxCatchUpBlocks`; a block is reported once, with its
 *   events, and only after everything about it was read.
 * - A height whose hash changed is reported as `reorg`, then the new blocks.
 * - Without a socket (no node accepts one, a proxy in front) the source polls; it never stops.
 */
import type { ChainEvent } from './chain-event.js'
import { backoffDelayMs } from './backoff.js'
import { blockActivity, type Interest } from './block-notifications.js'
import { NodeEventError } from './errors.js'
import { FollowedChain, type BlockRef, type Comparison } from './followed-chain.js'
import type { AnnouncedBlock } from './node-messages.js'
import { NodeSocket } from './node-socket.js'
import { resolveSourceOptions, type NodeEventSourceOptions, type ResolvedSourceOptions } from './source-options.js'
import { blockHash, wholeNumber } from './wire-values.js'
import { reportedWebSocketPort, webSocketUrl } from './web-socket-url.js'
import type { TimerHandle } from '../timers.js'
import type { NodeSnapshot } from '../node-pool.js'

export type SocketState = 'connecting' | 'open' | 'down' | 'closed'

/** The source's state and counters since its start, for metrics. */
export interface NodeEventSourceStats {
  socket: SocketState
  /** The node holding the socket or being connected to ("node 2"). */
  node: string | undefined
  /** Blocks are being polled (no socket held). */
  polling: boolean
  /** Blocks are being read now (following the tip or catching up). */
  catchingUp: boolean
  /** The last block reported. */
  height: number | undefined
  blockHash: string | undefined
  /** Sockets that registered. */
  socketsOpened: number
  /** Sockets that registered after an earlier one was lost. */
  reconnects: number
  /** Socket attempts that failed, and sockets lost. */
  socketFailures: number
  /** `getlastblocks` calls (following the tip, catching up, looking for a fork). */
  blockCalls: number
  /** `getnotifications` calls, one per block reported while something is of interest. */
  notificationCalls: number
  /** `getnodeinfo` calls to a node itself for its WebSocket port. */
  portLookups: number
  /** Events handed to onEvent, by kind. */
  emitted: Record<ChainEvent['kind'], number>
  /** Blocks never reported: beyond maxCatchUpBlocks after a gap. */
  skippedBlocks: number
  /** Messages and answer entries skipped for want of the protocol's fields. */
  badMessages: number
}

export interface NodeEventSource {
  stats (): NodeEventSourceStats
  /** Stops everything: the socket, the timers, the calls in flight. No event after it. Idempotent. */
  close (): Promise<void>
}

/** getlastblocks gives at most this many blocks per call. */
const MAX_BLOCKS_PER_CALL = 100
/** Blocks read to see where the chain ends when no height is announced. */
const TIP_WINDOW = 3
/** Blocks read below a height whose hash changed, to find where the chains part; doubles while they do. */
const FORK_PROBE = 4

/**
 * Starts following the chain: a socket to a node of `options.api`'s pool, polling meanwhile.
 * Reports to `options.onEvent`; never throws after the options are checked.
 * @throws TypeError naming the option when an option is invalid
 * @example
 * const source = createNodeEventSource({ api, onEvent: event => console.log(event), addressesOfInterest: () => watched })
 * // … later
 * await source.close()
 */
export function createNodeEventSource (options: NodeEventSourceOptions): NodeEventSource {
  return new ChainFollower(resolveSourceOptions(options))
}

class ChainFollower implements NodeEventSource {
  readonly #options: ResolvedSourceOptions
  readonly #chain: FollowedChain
  readonly #abort = new AbortController()
  readonly #counts: Omit<NodeEventSourceStats, 'socket' | 'node' | 'polling' | 'catchingUp' | 'height' | 'blockHash'> = {
    socketsOpened: 0,
    reconnects: 0,
    socketFailures: 0,
    blockCalls: 0,
    notificationCalls: 0,
    portLookups: 0,
    emitted: { block: 0, reorg: 0, transaction: 0, notification: 0 },
    skippedBlocks: 0,
    badMessages: 0,
  }

  #closed = false
  #state: SocketState = 'down'
  #socket: NodeSocket | undefined
  #socketNode: NodeSnapshot | undefined
  /** Socket attempts failed in a row. */
  #failures = 0
  readonly #cooldownUntil = new Map<string, number>()
  readonly #ports = new Map<string, number>()
  #reconnectTimer: TimerHandle | undefined
  #pollTimer: TimerHandle | undefined
  #retryTimer: TimerHandle | undefined
  /** The highest height a node announced. */
  #target: number | undefined
  #syncing = false
  #syncAgain = false

  constructor (options: ResolvedSourceOptions) {
    this.#options = options
    this.#chain = new FollowedChain(Math.max(options.maxCatchUpBlocks, MAX_BLOCKS_PER_CALL) + 1)
    if (options.resumeFrom !== undefined) this.#chain.reset(options.resumeFrom)
    this.#startPolling()
    this.#requestSync()
    this.#connectSoon()
  }

  stats (): NodeEventSourceStats {
    const tip = this.#chain.tip
    return {
      socket: this.#state,
      node: this.#socketNode?.name,
      polling: this.#pollTimer !== undefined,
      catchingUp: this.#syncing,
      height: tip?.height,
      blockHash: tip?.blockHash,
      ...this.#counts,
      emitted: { ...this.#counts.emitted },
    }
  }

  async close (): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    this.#state = 'closed'
    this.#abort.abort(new NodeEventError('EVENTS_ERR_CATCH_UP', 'The event source was closed'))
    const { timers } = this.#options
    for (const timer of [this.#reconnectTimer, this.#pollTimer, this.#retryTimer]) timers.clearTimeout(timer)
    this.#reconnectTimer = this.#pollTimer = this.#retryTimer = undefined
    this.#socket?.close()
    this.#socket = undefined
  }

  // ---- the socket ----------------------------------------------------------------------------

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
      this.#counts.portLookups++
      port = await reportedWebSocketPort(node.url, { node: node.name, timeoutMs: connectTimeoutMs, timers, signal: this.#abort.signal })
      this.#ports.set(node.url, port)
    }
    return webSocketUrl(node.url, port)
  }

  /** Connects in the background; every failure is handled inside. */
  #connectSoon (): void {
    this.#connect().catch(err => this.#report(new NodeEventError('EVENTS_ERR_SOCKET', 'Opening the WebSocket failed', { cause: err })))
  }

  async #connect (): Promise<void> {
    this.#reconnectTimer = undefined
    if (this.#closed) return
    const node = this.#pickNode()
    if (node === undefined) {
      this.#socketFailed(undefined, new NodeEventError('EVENTS_ERR_SOCKET', 'No node is healthy enough to hold the WebSocket'))
      return
    }
    this.#state = 'connecting'
    this.#socketNode = node
    let url: string
    try {
      url = await this.#urlFor(node)
    } catch (err) {
      if (!this.#closed) this.#socketFailed(node, err as NodeEventError)
      return
    }
    if (this.#closed) return
    let socket: NodeSocket
    try {
      socket = this.#openSocket(node, url)
    } catch (err) {
      // A URL the WebSocket client refuses (a webSocketUrl option's mistake).
      this.#socketFailed(node, new NodeEventError('EVENTS_ERR_SOCKET', `${node.name}'s WebSocket URL is not usable`, { node: node.name, cause: err }))
      return
    }
    this.#socket = socket
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
      onRegistered: () => this.#onRegistered(),
      onNewBlock: block => this.#onAnnounced(block),
      onBadMessage: err => {
        this.#counts.badMessages++
        this.#report(err)
      },
      onLost: err => {
        if (this.#socket !== socket) return
        this.#socket = undefined
        this.#socketFailed(node, err)
      },
      onTick: () => this.#onTick(node),
    })
    return socket
  }

  #onRegistered (): void {
    this.#counts.socketsOpened++
    if (this.#counts.socketsOpened > 1) this.#counts.reconnects++
    this.#failures = 0
    this.#state = 'open'
    this.#stopPolling()
    // Whatever connected while no socket was held is read now.
    this.#requestSync()
  }

  #onAnnounced (block: AnnouncedBlock): void {
    this.#requestSync(block.height)
  }

  /** Each keep-alive: blocks the pool saw that the socket did not announce, and a node that fell behind. */
  #onTick (node: NodeSnapshot): void {
    const { api } = this.#options
    const best = api.bestHeight
    const tip = this.#chain.tip
    if (best !== undefined && tip !== undefined && best > tip.height) this.#requestSync(best)
    const now = api.nodes().find(each => each.url === node.url)
    const unwell = now !== undefined && (now.circuit === 'open' || now.chain !== 'in-step')
    if (unwell && api.nodes().some(each => each.usable && each.url !== node.url)) {
      this.#socket?.close()
      this.#socket = undefined
      this.#socketFailed(node, new NodeEventError('EVENTS_ERR_SOCKET', `${node.name} is no longer in step with the chain: moving the WebSocket`, { node: node.name }))
    }
  }

  #socketFailed (node: NodeSnapshot | undefined, err: NodeEventError): void {
    this.#counts.socketFailures++
    this.#failures++
    this.#state = 'down'
    this.#socketNode = undefined
    if (node !== undefined) {
      this.#cooldownUntil.set(node.url, this.#options.clock() + this.#options.nodeCooldownMs)
      // The port may have moved with a restart: asked again next time.
      this.#ports.delete(node.url)
    }
    this.#report(err)
    this.#startPolling()
    const { timers, reconnectMinMs, reconnectMaxMs, random } = this.#options
    const delayMs = backoffDelayMs(this.#failures, { minMs: reconnectMinMs, maxMs: reconnectMaxMs, random })
    timers.clearTimeout(this.#reconnectTimer)
    this.#reconnectTimer = timers.setTimeout(() => this.#connectSoon(), delayMs)
  }

  // ---- polling -------------------------------------------------------------------------------

  #startPolling (): void {
    if (this.#pollTimer !== undefined || this.#closed) return
    const tick = (): void => {
      this.#pollTimer = this.#options.timers.setTimeout(tick, this.#options.pollIntervalMs)
      const best = this.#options.api.bestHeight
      this.#requestSync(best)
    }
    this.#pollTimer = this.#options.timers.setTimeout(tick, this.#options.pollIntervalMs)
  }

  #stopPolling (): void {
    this.#options.timers.clearTimeout(this.#pollTimer)
    this.#pollTimer = undefined
  }

  // ---- following the chain -------------------------------------------------------------------

  /** Reads what is not reported yet; one read at a time, another right after when asked meanwhile. */
  #requestSync (target?: number): void {
    if (this.#closed) return
    if (target !== undefined && (this.#target === undefined || target > this.#target)) this.#target = target
    if (this.#syncing) {
      this.#syncAgain = true
      return
    }
    this.#syncing = true
    // Never rejects: a failure is reported and retried inside.
    this.#runSync().catch(() => {})
  }

  async #runSync (): Promise<void> {
    try {
      do {
        this.#syncAgain = false
        await this.#syncOnce()
      } while (this.#syncAgain && !this.#closed)
    } catch (err) {
      if (this.#closed) return
      this.#report(err instanceof NodeEventError ? err : new NodeEventError('EVENTS_ERR_CATCH_UP', 'Reading blocks failed', { cause: err }))
      const { timers, retryDelayMs } = this.#options
      timers.clearTimeout(this.#retryTimer)
      this.#retryTimer = timers.setTimeout(() => {
        this.#retryTimer = undefined
        this.#requestSync()
      }, retryDelayMs)
    } finally {
      this.#syncing = false
    }
  }

  async #syncOnce (): Promise<void> {
    if (this.#chain.tip === undefined) {
      await this.#startAtTip()
      return
    }
    // Each round reports blocks, goes back below a fork, or learns how far the chain goes; the
    // bound only stops two nodes on two forks from sending the read back and forth for ever.
    const rounds = Math.ceil(this.#options.maxCatchUpBlocks / (MAX_BLOCKS_PER_CALL - 2)) + 8
    for (let round = 0; round < rounds && !this.#closed; round++) {
      const tip = this.#chain.tip as { height: number }
      const target = this.#target
      let blocks: BlockRef[]
      if (target !== undefined && target > tip.height && target - tip.height <= this.#options.maxCatchUpBlocks) {
        // From the block below the last reported: a one-block re-org shows without another call.
        const from = Math.max(1, tip.height - 1)
        const upTo = Math.min(target, from + MAX_BLOCKS_PER_CALL - 1)
        blocks = await this.#lastBlocks(upTo - from + 1, upTo)
        if (blocks.length === 0) throw this.#notYet(upTo)
      } else {
        blocks = await this.#lastBlocks(TIP_WINDOW, -1)
        // A height announced beyond where the chain ends (a node far ahead, or wrong) is not chased.
        const end = blocks.at(-1)?.height
        if (end !== undefined && this.#target !== undefined && this.#target > end) this.#target = end
      }
      const comparison = this.#chain.compare(blocks)
      switch (comparison.kind) {
        case 'behind':
          if (target !== undefined && target > tip.height) throw this.#notYet(target)
          return
        case 'unreached':
          this.#target = Math.max(this.#target ?? 0, comparison.nodeTip)
          if (comparison.nodeTip - tip.height > this.#options.maxCatchUpBlocks) this.#skipTo(comparison.nodeTip - this.#options.maxCatchUpBlocks)
          continue
        case 'forked': {
          const read = await this.#reorg(comparison, blocks)
          // What was read shows the blocks that replace the ones forgotten: reported at once.
          const after = this.#chain.compare(read)
          if (after.kind === 'linked') for (const block of after.fresh) await this.#reportBlock(block)
          if (this.#reached()) return
          continue
        }
        case 'linked':
          // Nothing new although more was announced: the node answering is not there yet.
          if (comparison.fresh.length === 0 && !this.#reached()) throw this.#notYet(this.#target ?? tip.height)
          for (const block of comparison.fresh) await this.#reportBlock(block)
          if (this.#reached()) return
          continue
      }
    }
  }

  /** Whether the last block reported is as high as any announced. */
  #reached (): boolean {
    return this.#target === undefined || this.#target <= (this.#chain.tip?.height ?? 0)
  }

  /** The first block: the tip, reported alone (what it carried happened before the source started). */
  async #startAtTip (): Promise<void> {
    const tip = (await this.#lastBlocks(1, -1)).at(-1)
    if (tip === undefined) throw this.#notYet(this.#target ?? 1)
    if (this.#closed) return
    this.#chain.record(tip)
    this.#emit({ kind: 'block', height: tip.height, blockHash: tip.blockHash, time: tip.time })
    if (this.#target !== undefined && this.#target > tip.height) this.#syncAgain = true
  }

  /** Gives up the blocks up to `height` (more than can be read back): reported as EVENTS_ERR_GAP. */
  #skipTo (height: number): void {
    const from = (this.#chain.tip?.height ?? height) + 1
    this.#counts.skippedBlocks += height - from + 1
    this.#chain.reset({ height, blockHash: undefined })
    this.#report(new NodeEventError('EVENTS_ERR_GAP', `Blocks ${from} to ${height} were missed and are more than maxCatchUpBlocks (${this.#options.maxCatchUpBlocks}): they are skipped`, { skipped: { fromHeight: from, toHeight: height } }))
  }

  /**
   * Finds the lowest height that changed (reading further down while the chains still part),
   * reports it, and forgets it and what is above. Returns the node's blocks read on the way.
   */
  async #reorg (found: Extract<Comparison, { kind: 'forked' }>, blocks: BlockRef[]): Promise<BlockRef[]> {
    let fork = found
    let answer = blocks
    let probe = FORK_PROBE
    while (fork.deeper && !this.#closed) {
      const lowest = this.#chain.lowest ?? fork.height
      const below = (answer[0] as BlockRef).height - 1
      const count = Math.min(MAX_BLOCKS_PER_CALL, probe, below - lowest + 1)
      if (count < 1) break
      const more = (await this.#lastBlocks(count, below)).filter(block => block.height <= below)
      if (more.length === 0) break
      answer = [...more, ...answer]
      const again = this.#chain.compare(answer)
      if (again.kind !== 'forked') break
      fork = again
      probe *= 2
    }
    if (this.#closed) return answer
    this.#emit({ kind: 'reorg', height: fork.height, oldBlockHash: fork.oldBlockHash, newBlockHash: fork.newBlockHash })
    this.#chain.truncate(fork.height)
    this.#target = Math.max(this.#target ?? 0, (answer.at(-1) as BlockRef).height)
    return answer
  }

  /** Reads what `block` carried for the addresses and posts of interest, then reports it all. */
  async #reportBlock (block: BlockRef): Promise<void> {
    const interest = this.#interest()
    let activity
    if (interest.addresses.size > 0 || interest.contents.size > 0) {
      this.#counts.notificationCalls++
      const answer = await this.#call('getnotifications', [block.height])
      try {
        activity = blockActivity(answer, block, interest)
        this.#counts.badMessages += activity.malformed
      } catch (err) {
        // A node that answers this block badly would answer it badly again: the block goes on without its events.
        this.#counts.badMessages++
        this.#report(err as NodeEventError)
      }
    }
    if (this.#closed) return
    this.#chain.record(block)
    this.#emit({ kind: 'block', height: block.height, blockHash: block.blockHash, time: block.time })
    for (const event of activity?.transactions ?? []) this.#emit(event)
    for (const event of activity?.notifications ?? []) this.#emit(event)
  }

  #interest (): Interest {
    const read = (source: (() => Iterable<string>) | undefined): ReadonlySet<string> => {
      if (source === undefined) return new Set()
      try {
        return new Set(source())
      } catch (err) {
        this.#report(new NodeEventError('EVENTS_ERR_LISTENER', 'An interest callback threw; nothing is of interest for this block', { cause: err }))
        return new Set()
      }
    }
    return { addresses: read(this.#options.addressesOfInterest), contents: read(this.#options.contentOfInterest) }
  }

  /** `getlastblocks [count, upTo]`, read: ascending, one per height. */
  async #lastBlocks (count: number, upTo: number): Promise<BlockRef[]> {
    this.#counts.blockCalls++
    const answer = await this.#call('getlastblocks', [count, upTo])
    if (!Array.isArray(answer)) throw this.#badAnswer('getlastblocks did not answer a list')
    const blocks = answer.map(entry => {
      const { height, hash, time } = (entry ?? {}) as Record<string, unknown>
      const block = { height: wholeNumber(height), blockHash: blockHash(hash), time: wholeNumber(time) }
      if (block.height === undefined || block.blockHash === undefined || block.time === undefined) throw this.#badAnswer('getlastblocks listed a block without a whole height, a 64-hex hash and a whole time')
      return block as BlockRef
    })
    return blocks.sort((a, b) => a.height - b.height)
  }

  async #call (method: string, params: unknown[]): Promise<unknown> {
    try {
      return await this.#options.api.callRaw(method, params, { signal: this.#abort.signal })
    } catch (err) {
      throw new NodeEventError('EVENTS_ERR_CATCH_UP', `${method} failed: ${(err as Error).message}`, { cause: err })
    }
  }

  #notYet (height: number): NodeEventError {
    return new NodeEventError('EVENTS_ERR_CATCH_UP', `The node answering has no block ${height} yet`)
  }

  #badAnswer (message: string): NodeEventError {
    this.#counts.badMessages++
    return new NodeEventError('EVENTS_ERR_BAD_MESSAGE', message)
  }

  #emit (event: ChainEvent): void {
    if (this.#closed) return
    this.#counts.emitted[event.kind]++
    try {
      this.#options.onEvent(event)
    } catch (err) {
      this.#report(new NodeEventError('EVENTS_ERR_LISTENER', 'onEvent threw', { cause: err }))
    }
  }

  #report (err: NodeEventError): void {
    if (this.#closed) return
    try {
      this.#options.onError?.(err)
    } catch {
      // A logger that throws must not stop the source.
    }
  }
}
