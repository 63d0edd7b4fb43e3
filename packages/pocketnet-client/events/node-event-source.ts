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
 *
 * Two lifecycles, one file and one state enum each; this file only wires them together:
 * - keeping the socket (socket-keeper.ts): `down` → `connecting` → `open` → `down` … `closed`,
 *   polling while no socket is open;
 * - syncing the chain (chain-sync.ts): `idle` → `reading` → `idle` or `waitingToRetry` … `closed`.
 */
import type { ChainEvent } from './chain-event.js'
import { ChainSync, type ReorgCause } from './chain-sync.js'
import type { NodeEventError } from './errors.js'
import { SocketKeeper, type SocketState } from './socket-keeper.js'
import { resolveSourceOptions, type NodeEventSourceOptions, type ResolvedSourceOptions } from './source-options.js'

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

export interface NodeEventSource {
  stats (): NodeEventSourceStats
  /** Stops everything: the socket, the timers, the calls in flight. No event after it. Idempotent. */
  close (): Promise<void>
}

/**
 * Starts ingesting the chain: a socket to a node of `options.api`'s pool, polling meanwhile.
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

/**
 * The two lifecycles wired together: what the socket keeper hears asks the chain sync for a
 * read. Each has its own states (socket-keeper.ts, chain-sync.ts); this only connects them.
 */
class ChainFollower implements NodeEventSource {
  readonly #options: ResolvedSourceOptions
  readonly #sync: ChainSync
  readonly #keeper: SocketKeeper
  readonly #unwatch: (() => void) | undefined
  #closed = false

  constructor (options: ResolvedSourceOptions) {
    this.#options = options
    const report = (err: NodeEventError): void => this.#report(err)
    const sync = this.#sync = new ChainSync(options, report)
    this.#keeper = new SocketKeeper(options, {
      // Whatever connected while no socket was held is read now.
      onOpen: () => sync.read(),
      onBlockAnnounced: height => sync.read(height),
      onPoll: () => sync.read(options.api.bestHeight),
      onKeepAlive: () => sync.readIfPoolIsAhead(),
      onNodeTip: tip => sync.noteNodeTip(tip),
      report,
    })
    this.#unwatch = options.api.watchNodeTips?.(tip => sync.noteNodeTip(tip))
    this.#sync.read()
    this.#keeper.start()
  }

  stats (): NodeEventSourceStats {
    const tip = this.#sync.tip
    const socket = this.#keeper.counts
    const sync = this.#sync.counts
    return {
      socket: this.#keeper.state,
      node: this.#keeper.node,
      polling: this.#keeper.polling,
      catchingUp: this.#sync.state === 'reading',
      height: tip?.height,
      blockHash: tip?.blockHash,
      socketsOpened: socket.socketsOpened,
      reconnects: socket.reconnects,
      socketFailures: socket.socketFailures,
      blockCalls: sync.blockCalls,
      notificationCalls: sync.notificationCalls,
      portLookups: socket.portLookups,
      emitted: { ...sync.emitted },
      skippedBlocks: sync.skippedBlocks,
      badMessages: socket.badMessages + sync.badMessages,
      reorgsFound: { ...sync.reorgsFound },
    }
  }

  async close (): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    this.#unwatch?.()
    this.#sync.close()
    this.#keeper.close()
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
