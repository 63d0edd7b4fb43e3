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
 * - A height whose hash changed is reported as `reorg`, then the new blocks. So is a chain followed
 *   that is not the node's: a block resumed from that the node's chain does not hold, or a node's
 *   getnodeinfo (the pool's probes) giving another tip hash at a height followed, which is how a
 *   re-org that leaves the height unchanged, announced by no node, is seen at once.
 * - Without a socket (no node accepts one, a proxy in front) the source polls; it never stops.
 */
import type { ChainEvent } from './chain-event.js'
import { backoffDelayMs } from '../backoff.js'
import { blockActivity, type Interest } from './block-notifications.js'
import { NodeEventError } from './errors.js'
import { FollowedChain, type BlockRef } from './followed-chain.js'
import type { AnnouncedBlock } from './node-messages.js'
import { NodeSocket } from './node-socket.js'
import { resolveSourceOptions, type NodeEventSourceOptions, type ResolvedSourceOptions } from './source-options.js'
import { blockHash, wholeNumber } from './wire-values.js'
import { reportedWebSocketPort, webSocketUrl } from './web-socket-url.js'
import type { TimerHandle } from '../timers.js'
import type { NodeSnapshot, NodeTipReport } from '../node-pool.js'

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
  /** Re-orgs reported, by what showed them. */
  reorgsFound: Record<ReorgCause, number>
}

/**
 * What showed a re-org: `resume`, the block resumed from is not on the node's chain (found at the
 * start); `node-report`, a node's getnodeinfo gave another tip than the chain followed (a re-org
 * that left the height unchanged, or a chain that now ends lower); `new-blocks`, reading new
 * blocks showed a height whose hash changed.
 */
export type ReorgCause = 'resume' | 'node-report' | 'new-blocks'

/** Where a re-org's walk back stopped: a block both chains hold, the first block this run reported, or the catch-up bound. */
type ReorgBottom = 'agreed' | 'first-reported' | 'bound'

/** A height whose block is not the one followed: its new hash, none when the node's chain ends below it. */
interface Mismatch {
  height: number
  oldBlockHash: string
  newBlockHash: string | undefined
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
    reorgsFound: { resume: 0, 'node-report': 0, 'new-blocks': 0 },
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
  /** The block followed is the one resumed from, and no node has shown it on its chain yet. */
  #resumed: boolean
  /**
   * The lowest height this run reported (it started at the tip): nothing below it can have changed
   * for the consumer. Undefined after resumeFrom: a previous run reported the blocks below.
   */
  #reportedFrom: number | undefined
  /** Each node's last word on its tip, with the chain's change count when it came. */
  readonly #reports = new Map<string, { height: number, atChange: number }>()
  /** A node's word contradicted the chain followed: the next read is about it. */
  #suspect: ReorgCause | undefined
  readonly #unwatch: (() => void) | undefined

  constructor (options: ResolvedSourceOptions) {
    this.#options = options
    this.#chain = new FollowedChain(Math.max(options.maxCatchUpBlocks, MAX_BLOCKS_PER_CALL) + 1)
    if (options.resumeFrom !== undefined) this.#chain.reset(options.resumeFrom)
    this.#resumed = options.resumeFrom !== undefined
    this.#unwatch = options.api.watchNodeTips?.(report => this.#onNodeTip(report))
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
      reorgsFound: { ...this.#counts.reorgsFound },
    }
  }

  async close (): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    this.#state = 'closed'
    this.#unwatch?.()
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
      const reported = await reportedWebSocketPort(node.url, { node: node.name, timeoutMs: connectTimeoutMs, timers, signal: this.#abort.signal })
      port = reported.port
      this.#ports.set(node.url, port)
      if (reported.tip !== undefined) this.#onNodeTip({ node: node.name, ...reported.tip })
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

  /**
   * A node's word on its tip (the pool's probes, any getnodeinfo through the client, the port
   * look-up): another hash at a height followed, or every node's chain ending below the block
   * followed, is a re-org the socket will never announce (docs/node-events.md, "Re-orgs"); read
   * at once. A block the socket did not announce is read at once too.
   */
  #onNodeTip (report: NodeTipReport): void {
    if (this.#closed) return
    this.#reports.set(report.node, { height: report.height, atChange: this.#chain.changes })
    const tip = this.#chain.tip
    if (tip === undefined) return
    const followed = report.blockHash === undefined ? undefined : this.#chain.hashAt(report.height)
    if ((followed !== undefined && followed !== report.blockHash) || (report.height < tip.height && this.#nodesBelow(tip.height))) {
      this.#suspect = 'node-report'
      this.#requestSync()
      return
    }
    const best = this.#options.api.bestHeight
    if (best !== undefined && best > tip.height) this.#requestSync(best)
  }

  /**
   * Whether every node answering now puts its tip below `height`: by its word given since the tip
   * followed last changed (an older word may predate the block), or, for the block resumed from,
   * by its latest. A node a block behind the one that announced the tip does not make it so.
   */
  #nodesBelow (height: number): boolean {
    const present = this.#options.api.nodes().filter(node => node.circuit === 'closed' && node.height !== undefined)
    return present.length > 0 && present.every(node => {
      const report = this.#reports.get(node.name)
      const said = this.#resumed ? node.height : report?.atChange === this.#chain.changes ? report.height : undefined
      return said !== undefined && said < height
    })
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
    // What asked for this read, should it find a re-org: a node's word, else the read itself.
    const suspect = this.#suspect
    this.#suspect = undefined
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
        case 'behind': {
          // The node's chain ends below the block followed: it lags a block behind the node that
          // announced it, or the block is not on its chain, which every node's word then says too.
          const above = this.#aboveTheChain(blocks)
          if (above !== undefined) {
            await this.#reorg(above, blocks, this.#causeOf(suspect))
            if (this.#reached()) return
            continue
          }
          if (target !== undefined && target > tip.height) throw this.#notYet(target)
          return
        }
        case 'unreached':
          this.#target = Math.max(this.#target ?? 0, comparison.nodeTip)
          if (comparison.nodeTip - tip.height > this.#options.maxCatchUpBlocks) this.#skipTo(comparison.nodeTip - this.#options.maxCatchUpBlocks)
          continue
        case 'forked':
          await this.#reorg(comparison, blocks, this.#causeOf(suspect))
          if (this.#reached()) return
          continue
        case 'linked':
          // The node's chain goes through the block followed.
          this.#resumed = false
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
    this.#reportedFrom = tip.height
    this.#chain.record(tip)
    this.#emit({ kind: 'block', height: tip.height, blockHash: tip.blockHash, time: tip.time })
    if (this.#target !== undefined && this.#target > tip.height) this.#syncAgain = true
  }

  /** Gives up the blocks up to `height` (more than can be read back): reported as EVENTS_ERR_GAP. */
  #skipTo (height: number): void {
    const from = (this.#chain.tip?.height ?? height) + 1
    this.#counts.skippedBlocks += height - from + 1
    this.#chain.reset({ height, blockHash: undefined })
    this.#resumed = false
    this.#report(new NodeEventError('EVENTS_ERR_GAP', `Blocks ${from} to ${height} were missed and are more than maxCatchUpBlocks (${this.#options.maxCatchUpBlocks}): they are skipped`, { skipped: { fromHeight: from, toHeight: height } }))
  }

  #causeOf (suspect: ReorgCause | undefined): ReorgCause {
    return this.#resumed ? 'resume' : suspect ?? 'new-blocks'
  }

  /**
   * The lowest block followed above the end of the node's chain (`blocks`, read up to its tip),
   * when every node's word puts its tip below the block followed too; else undefined (a node
   * lagging, or nothing followed known there).
   */
  #aboveTheChain (blocks: BlockRef[]): Mismatch | undefined {
    const tip = this.#chain.tip
    const end = blocks.at(-1)?.height
    if (tip === undefined || end === undefined || !this.#nodesBelow(tip.height)) return undefined
    const height = Math.max(end + 1, this.#chain.lowest ?? tip.height)
    const oldBlockHash = this.#chain.hashAt(height)
    return oldBlockHash === undefined ? undefined : { height, oldBlockHash, newBlockHash: undefined }
  }

  /**
   * A re-org found at `found`: walks back to the highest block both chains hold (reading further
   * down, doubling, while they still part), within maxCatchUpBlocks of the node's tip; reports
   * `reorg` for the height above it and forgets that height and everything above; then reports
   * the node's blocks read on the way. When no block the source knows is on the node's chain
   * within that bound (it resumed from a block of another chain), the chains are taken to part at
   * the bound, and everything above it is read again.
   */
  async #reorg (found: Mismatch, answer: BlockRef[], cause: ReorgCause): Promise<void> {
    const nodeTip = (answer.at(-1) as BlockRef).height
    const floor = Math.max(1, nodeTip - this.#options.maxCatchUpBlocks + 1)
    const theirs = new Map(answer.map(block => [block.height, block]))
    let fork = found
    /** Where the walk stopped: at a block both chains hold, below the first block reported, or at the bound. */
    let bottom: ReorgBottom = 'bound'
    let probe = FORK_PROBE
    for (let height = found.height - 1; height >= floor && !this.#closed; height--) {
      const ours = this.#chain.hashAt(height)
      if (ours === undefined) {
        // Below the first block this run reported (it started at the tip), nothing was reported
        // that could have changed.
        if (this.#reportedFrom !== undefined && height < this.#reportedFrom) bottom = 'first-reported'
        break
      }
      if (!theirs.has(height)) {
        const count = Math.min(MAX_BLOCKS_PER_CALL, probe, height - floor + 1)
        for (const block of await this.#lastBlocks(count, height)) if (block.height <= height) theirs.set(block.height, block)
        probe *= 2
      }
      const block = theirs.get(height)
      if (block === undefined) break
      if (block.blockHash === ours) {
        bottom = 'agreed'
        break
      }
      fork = { height, oldBlockHash: ours, newBlockHash: block.blockHash }
    }
    if (this.#closed) return
    if (bottom !== 'bound') {
      this.#chain.truncate(fork.height)
    } else {
      const height = Math.min(fork.height, floor)
      if (!theirs.has(height) && height <= nodeTip) {
        const upTo = Math.min(nodeTip, height + MAX_BLOCKS_PER_CALL - 1)
        for (const block of await this.#lastBlocks(upTo - height + 1, upTo)) theirs.set(block.height, block)
        if (this.#closed) return
      }
      fork = { height, oldBlockHash: this.#chain.hashAt(height) ?? fork.oldBlockHash, newBlockHash: theirs.get(height)?.blockHash }
      this.#chain.reset({ height: height - 1, blockHash: undefined })
    }
    this.#resumed = false
    this.#counts.reorgsFound[cause]++
    this.#report(new NodeEventError('EVENTS_ERR_OFF_CHAIN', reorgMessage(found, fork, bottom, cause, nodeTip, this.#options.maxCatchUpBlocks)))
    this.#emit({ kind: 'reorg', height: fork.height, oldBlockHash: fork.oldBlockHash, ...(fork.newBlockHash === undefined ? {} : { newBlockHash: fork.newBlockHash }) })
    // Heights announced above the end of a chain that got shorter were the old chain's.
    this.#target = found.newBlockHash === undefined ? nodeTip : Math.max(this.#target ?? 0, nodeTip)
    // What was read shows the blocks that replace the ones forgotten: reported at once.
    const after = this.#chain.compare(runFrom(theirs, theirs.has(fork.height - 1) ? fork.height - 1 : fork.height))
    if (after.kind === 'linked') for (const block of after.fresh) await this.#reportBlock(block)
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

/** The blocks of `blocks` from `height` up, up to the first missing height. */
function runFrom (blocks: ReadonlyMap<number, BlockRef>, height: number): BlockRef[] {
  const run: BlockRef[] = []
  for (let next = height; blocks.has(next); next++) run.push(blocks.get(next) as BlockRef)
  return run
}

/** The warn line for a re-org: what showed it, and from where the chain is read again. */
function reorgMessage (found: Mismatch, fork: Mismatch, bottom: ReorgBottom, cause: ReorgCause, nodeTip: number, maxCatchUpBlocks: number): string {
  const what = found.newBlockHash === undefined
    ? `the node's chain ends at ${nodeTip}, below block ${found.height} (${found.oldBlockHash})`
    : `block ${found.height} is ${found.newBlockHash} on the node's chain, not ${found.oldBlockHash}`
  const by = cause === 'resume' ? 'The block resumed from is not on the node\'s chain' : cause === 'node-report' ? 'A node reports another tip than the chain followed' : 'A block followed changed'
  const where = bottom === 'agreed'
    ? `the chains agree below ${fork.height}`
    : bottom === 'first-reported' ? 'the first block reported' : `no block followed is on the node's chain within maxCatchUpBlocks (${maxCatchUpBlocks}) of its tip`
  return `${by}: ${what}. Reported as a re-org from ${fork.height} (${where}); the blocks from there are read again`
}
