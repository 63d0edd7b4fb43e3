/**
 * Syncing the chain, for the node event source: reading the blocks not reported yet, each with
 * what it carried for the addresses and posts of interest, and reporting them in order, a block
 * once and only after everything about it was read; re-orgs found by comparing hashes
 * (docs/node-events.md, "Catching up after any gap" and "Re-orgs"). What asks for a read is the
 * owner's business (a block announced, a poll, a keep-alive, a node's word on its tip: the socket
 * keeper's, socket-keeper.ts). Read top to bottom by its states:
 *
 * - `idle`: everything announced is reported; waiting to be asked.
 * - `reading`: blocks are being read and reported (`getlastblocks`, then `getnotifications` per
 *   block when something is of interest), up to the highest height announced. Asked again
 *   meanwhile (another block, a node's word), it reads once more right after, never two reads at
 *   once (coalescing-run.ts).
 * - `waitingToRetry`: the last read failed (a node not there yet, a call that failed, an answer
 *   without the protocol's fields); nothing was reported for what it could not read. It reads
 *   again after `retryDelayMs`, or at once when asked before.
 * - `closed`: close() was called. Calls in flight are aborted; nothing is reported after it.
 *
 * A node's word on its tip (noteNodeTip) that contradicts the chain reported makes the next read
 * look for a re-org, and names what showed it.
 */
import type { ChainEvent } from './chain-event.js'
import { blockActivity, type Interest } from './block-notifications.js'
import { NodeEventError } from './errors.js'
import { ReportedChain, type BlockRef, type LastReported } from './reported-chain.js'
import type { ResolvedSourceOptions } from './source-options.js'
import { blockHash, wholeNumber } from './wire-values.js'
import { CoalescingRun } from '../coalescing-run.js'
import type { TimerHandle } from '../timers.js'
import type { NodeTipReport } from '../node-pool.js'

export type SyncState = 'idle' | 'reading' | 'waitingToRetry' | 'closed'

/**
 * What showed a re-org: `resume`, the block resumed from is not on the node's chain (found at the
 * start); `node-report`, a node's getnodeinfo gave another tip than the chain reported (a re-org
 * that left the height unchanged, or a chain that now ends lower); `new-blocks`, reading new
 * blocks showed a height whose hash changed.
 */
export type ReorgCause = 'resume' | 'node-report' | 'new-blocks'

/** The syncing's counters since its start, for metrics. */
export interface SyncCounts {
  /** `getlastblocks` calls (reading up to the tip, catching up, looking for a fork). */
  blockCalls: number
  /** `getnotifications` calls, one per block reported while something is of interest. */
  notificationCalls: number
  /** Events handed to onEvent, by kind. */
  emitted: Record<ChainEvent['kind'], number>
  /** Blocks never reported: beyond maxCatchUpBlocks after a gap. */
  skippedBlocks: number
  /** Answer entries skipped for want of the protocol's fields. */
  badMessages: number
  /** Re-orgs reported, by what showed them. */
  reorgsFound: Record<ReorgCause, number>
}

/** Where a re-org's walk back stopped: a block both chains hold, the first block this run reported, or the catch-up bound. */
type ReorgBottom = 'agreed' | 'first-reported' | 'bound'

/** A height whose block is not the one reported: its new hash, none when the node's chain ends below it. */
interface Mismatch {
  height: number
  oldBlockHash: string
  newBlockHash: string | undefined
}

/** getlastblocks gives at most this many blocks per call. */
const MAX_BLOCKS_PER_CALL = 100
/** Blocks read to see where the chain ends when no height is announced. */
const TIP_WINDOW = 3
/** Blocks read below a height whose hash changed, to find where the chains part; doubles while they do. */
const FORK_PROBE = 4

type SyncOptions = Pick<ResolvedSourceOptions, 'api' | 'onEvent' | 'addressesOfInterest' | 'contentOfInterest' | 'resumeFrom' | 'maxCatchUpBlocks' | 'retryDelayMs' | 'timers'>

export class ChainSync {
  readonly counts: SyncCounts = {
    blockCalls: 0,
    notificationCalls: 0,
    emitted: { block: 0, reorg: 0, transaction: 0, notification: 0 },
    skippedBlocks: 0,
    badMessages: 0,
    reorgsFound: { resume: 0, 'node-report': 0, 'new-blocks': 0 },
  }

  readonly #options: SyncOptions
  readonly #report: (err: NodeEventError) => void
  readonly #chain: ReportedChain
  /** Stops the calls in flight at close(). */
  readonly #abort = new AbortController()
  readonly #reads: CoalescingRun
  #state: SyncState = 'idle'
  /** The next read, while `waitingToRetry`. */
  #retryTimer: TimerHandle | undefined
  /** The highest height a node announced. */
  #target: number | undefined
  /** The block reported is the one resumed from, and no node has shown it on its chain yet. */
  #resumed: boolean
  /**
   * The lowest height this run reported (it started at the tip): nothing below it can have changed
   * for the consumer. Undefined after resumeFrom: a previous run reported the blocks below.
   */
  #reportedFrom: number | undefined
  /** Each node's last word on its tip, with the chain's change count when it came. */
  readonly #reports = new Map<string, { height: number, atChange: number }>()
  /** A node's word contradicted the chain reported: the next read is about it. */
  #suspect: ReorgCause | undefined

  /** `report`: each problem, for logs; the syncing goes on by itself. */
  constructor (options: SyncOptions, report: (err: NodeEventError) => void) {
    this.#options = options
    this.#report = report
    this.#chain = new ReportedChain(Math.max(options.maxCatchUpBlocks, MAX_BLOCKS_PER_CALL) + 1)
    if (options.resumeFrom !== undefined) this.#chain.reset(options.resumeFrom)
    this.#resumed = options.resumeFrom !== undefined
    this.#reads = new CoalescingRun(() => this.#readOnce(), {
      onIdle: () => this.#readDone(),
      onError: err => this.#readFailed(err),
    })
  }

  get state (): SyncState {
    return this.#state
  }

  /** The last block reported. */
  get tip (): LastReported | undefined {
    return this.#chain.tip
  }

  /** Reads what is not reported yet, up to `upTo` at least when given: now, or once more after the read in flight. */
  read (upTo?: number): void {
    if (this.#closed) return
    if (upTo !== undefined && (this.#target === undefined || upTo > this.#target)) this.#target = upTo
    if (this.#state === 'waitingToRetry') {
      // Asked before the retry's time: the read goes now, and stands for the retry.
      this.#options.timers.clearTimeout(this.#retryTimer)
      this.#retryTimer = undefined
    }
    this.#state = 'reading'
    this.#reads.request()
  }

  /** Reads up to the pool's best height when it is above the last block reported (blocks the socket did not announce). */
  readIfPoolIsAhead (): void {
    const best = this.#options.api.bestHeight
    const tip = this.#chain.tip
    if (best !== undefined && tip !== undefined && best > tip.height) this.read(best)
  }

  /**
   * A node's word on its tip (the pool's probes, any getnodeinfo through the client, the port
   * look-up): another hash at a height reported, or every node's chain ending below the block
   * reported, is a re-org the socket will never announce (docs/node-events.md, "Re-orgs"); read
   * at once. A block the socket did not announce is read at once too.
   */
  noteNodeTip (report: NodeTipReport): void {
    if (this.#closed) return
    this.#reports.set(report.node, { height: report.height, atChange: this.#chain.changes })
    const tip = this.#chain.tip
    if (tip === undefined) return
    const reported = report.blockHash === undefined ? undefined : this.#chain.hashAt(report.height)
    if ((reported !== undefined && reported !== report.blockHash) || (report.height < tip.height && this.#nodesBelow(tip.height))) {
      this.#suspect = 'node-report'
      this.read()
      return
    }
    this.readIfPoolIsAhead()
  }

  /** Stops reading: the calls in flight are aborted, the retry cleared; nothing is reported after it. Idempotent. */
  close (): void {
    if (this.#closed) return
    this.#state = 'closed'
    this.#abort.abort(new NodeEventError('EVENTS_ERR_CATCH_UP', 'The event source was closed'))
    this.#options.timers.clearTimeout(this.#retryTimer)
    this.#retryTimer = undefined
    // The read in flight ends with the aborted calls; nothing waits for it.
    this.#reads.close().catch(() => {})
  }

  get #closed (): boolean {
    return this.#state === 'closed'
  }

  // ---- reading → idle, or → waitingToRetry ---------------------------------------------------

  #readDone (): void {
    if (!this.#closed) this.#state = 'idle'
  }

  #readFailed (err: unknown): void {
    if (this.#closed) return
    this.#report(err instanceof NodeEventError ? err : new NodeEventError('EVENTS_ERR_CATCH_UP', 'Reading blocks failed', { cause: err }))
    this.#state = 'waitingToRetry'
    const { timers, retryDelayMs } = this.#options
    timers.clearTimeout(this.#retryTimer)
    this.#retryTimer = timers.setTimeout(() => {
      this.#retryTimer = undefined
      this.read()
    }, retryDelayMs)
  }

  // ---- one read ------------------------------------------------------------------------------

  /** Reads and reports up to the highest height announced, or where the node's chain ends. */
  async #readOnce (): Promise<void> {
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
          // The node's chain ends below the block reported: it lags a block behind the node that
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
          // The node's chain goes through the block reported.
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
    // Blocks announced above the tip meanwhile: read right after.
    if (this.#target !== undefined && this.#target > tip.height) this.#reads.request()
  }

  /** Gives up the blocks up to `height` (more than can be read back): reported as EVENTS_ERR_GAP. */
  #skipTo (height: number): void {
    const from = (this.#chain.tip?.height ?? height) + 1
    this.counts.skippedBlocks += height - from + 1
    this.#chain.reset({ height, blockHash: undefined })
    this.#resumed = false
    this.#report(new NodeEventError('EVENTS_ERR_GAP', `Blocks ${from} to ${height} were missed and are more than maxCatchUpBlocks (${this.#options.maxCatchUpBlocks}): they are skipped`, { skipped: { fromHeight: from, toHeight: height } }))
  }

  #causeOf (suspect: ReorgCause | undefined): ReorgCause {
    return this.#resumed ? 'resume' : suspect ?? 'new-blocks'
  }

  /**
   * The lowest block reported above the end of the node's chain (`blocks`, read up to its tip),
   * when every node's word puts its tip below the block reported too; else undefined (a node
   * lagging, or nothing reported known there).
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
    this.counts.reorgsFound[cause]++
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
      this.counts.notificationCalls++
      const answer = await this.#call('getnotifications', [block.height])
      try {
        activity = blockActivity(answer, block, interest)
        this.counts.badMessages += activity.malformed
      } catch (err) {
        // A node that answers this block badly would answer it badly again: the block goes on without its events.
        this.counts.badMessages++
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
    this.counts.blockCalls++
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
    this.counts.badMessages++
    return new NodeEventError('EVENTS_ERR_BAD_MESSAGE', message)
  }

  #emit (event: ChainEvent): void {
    if (this.#closed) return
    this.counts.emitted[event.kind]++
    try {
      this.#options.onEvent(event)
    } catch (err) {
      this.#report(new NodeEventError('EVENTS_ERR_LISTENER', 'onEvent threw', { cause: err }))
    }
  }

  /**
   * Whether every node answering now puts its tip below `height`: by its word given since the tip
   * reported last changed (an older word may predate the block), or, for the block resumed from,
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
  const by = cause === 'resume' ? 'The block resumed from is not on the node\'s chain' : cause === 'node-report' ? 'A node reports another tip than the chain reported' : 'A block reported changed'
  const where = bottom === 'agreed'
    ? `the chains agree below ${fork.height}`
    : bottom === 'first-reported' ? 'the first block reported' : `no block reported is on the node's chain within maxCatchUpBlocks (${maxCatchUpBlocks}) of its tip`
  return `${by}: ${what}. Reported as a re-org from ${fork.height} (${where}); the blocks from there are read again`
}
