/**
 * The chain as the source has reported it: the hash of each recent height it emitted, and how a
 * node's view of the same heights (a `getlastblocks` answer) compares with it:
 * - `linked`: the node's chain goes through the last block reported; the blocks above it are new;
 * - `forked`: a height reported earlier has another hash now (a re-org) — the lowest such height
 *   within what the answer and the memory cover (the source reads further down to see whether it
 *   goes deeper);
 * - `unreached`: the answer does not reach down to the last height reported (more blocks are needed);
 * - `behind`: the node has not reached the last height reported, and agrees below it.
 *
 * A block hash commits to every block below it, so agreeing on one height is agreeing on all the
 * lower ones. Pure code: the source drives it.
 */
import type { BlockPosition } from './chain-event.js'
import { NodeEventError } from './errors.js'

/** A block as the node lists it: its position and time. */
export interface BlockRef extends BlockPosition {
  /** Seconds since the epoch. */
  time: number
}

/** The last height reported; its hash is unknown after a skip over more blocks than can be read back. */
export interface LastReported {
  height: number
  blockHash: string | undefined
}

export type Comparison =
  | { kind: 'linked', fresh: BlockRef[] }
  | { kind: 'forked', height: number, oldBlockHash: string, newBlockHash: string }
  | { kind: 'unreached', nodeTip: number }
  | { kind: 'behind' }

export class ReportedChain {
  readonly #capacity: number
  readonly #hashes = new Map<number, string>()
  #tip: LastReported | undefined
  #changes = 0

  /** `capacity`: how many recent heights to remember (how deep a re-org can be told apart). */
  constructor (capacity: number) {
    this.#capacity = capacity
  }

  get tip (): LastReported | undefined {
    return this.#tip
  }

  /** How many times the tip has changed: a node's word given since then is about this tip. */
  get changes (): number {
    return this.#changes
  }

  /** The hash reported for `height`, while it is remembered. */
  hashAt (height: number): string | undefined {
    return this.#hashes.get(height)
  }

  /** The lowest height remembered. */
  get lowest (): number | undefined {
    return this.#hashes.size === 0 ? undefined : (this.#tip?.height ?? 0) - this.#hashes.size + 1
  }

  /** Starts over from `tip` (a resume point, or the height after a skip), forgetting the rest. */
  reset (tip: LastReported): void {
    this.#hashes.clear()
    this.#changes++
    this.#tip = { ...tip }
    if (tip.blockHash !== undefined) this.#hashes.set(tip.height, tip.blockHash)
  }

  /** Notes that `block`, the next height (or the first), was reported. */
  record (block: BlockRef): void {
    if (this.#tip !== undefined && block.height !== this.#tip.height + 1) throw new RangeError(`block ${block.height} does not follow ${this.#tip.height}`)
    this.#hashes.set(block.height, block.blockHash)
    this.#hashes.delete(block.height - this.#capacity)
    this.#changes++
    this.#tip = { height: block.height, blockHash: block.blockHash }
  }

  /** Forgets `height` and everything above it: the tip goes back to the block below. */
  truncate (height: number): void {
    const tip = this.#tip
    if (tip === undefined || height > tip.height) return
    for (let each = height; each <= tip.height; each++) this.#hashes.delete(each)
    this.#changes++
    this.#tip = { height: height - 1, blockHash: this.#hashes.get(height - 1) }
  }

  /**
   * How `blocks` (a node's answer: ascending, one per height, no gap) compare with what was reported.
   * @throws EVENTS_ERR_BAD_MESSAGE when `blocks` skip or repeat a height
   */
  compare (blocks: readonly BlockRef[]): Comparison {
    const tip = this.#tip
    if (tip === undefined) throw new RangeError('nothing reported yet')
    blocks.forEach((block, index) => {
      if (index > 0 && block.height !== (blocks[index - 1] as BlockRef).height + 1) {
        throw new NodeEventError('EVENTS_ERR_BAD_MESSAGE', 'A node listed blocks that are not one per height in order')
      }
    })
    const first = blocks[0]
    const last = blocks.at(-1)
    if (first === undefined || last === undefined) return { kind: 'behind' }
    for (const block of blocks) {
      if (block.height > tip.height) break
      const reported = this.#hashes.get(block.height)
      if (reported === undefined || reported === block.blockHash) continue
      return { kind: 'forked', height: block.height, oldBlockHash: reported, newBlockHash: block.blockHash }
    }
    if (last.height < tip.height) return { kind: 'behind' }
    // Without the last reported height in the answer nothing shows the new blocks descend from it.
    const overlaps = first.height <= tip.height || (tip.blockHash === undefined && first.height === tip.height + 1)
    if (!overlaps) return { kind: 'unreached', nodeTip: last.height }
    return { kind: 'linked', fresh: blocks.filter(block => block.height > tip.height) }
  }
}
