/**
 * The chain events this instance has handed to its listeners lately, so that each is heard once
 * although it may come twice: from this instance's own ingest and from the shared log (another
 * instance ingested it too, while both ingested the chain), or from the shared log after a
 * hand-over of the ingest. Kept by block, for the last blocks heard (far more than a catch-up
 * reads back), however many events a block has.
 *
 * A re-org forgets the events of the heights it replaced: should a block come back (a re-org
 * undone), it is heard again, as the node event source reports it again.
 */
import type { ChainEvent } from 'pocketnet-client'
import { chainEventKey } from './chain-entries.js'

/** Blocks remembered: more than the node event source reads back after a gap (maxCatchUpBlocks, 100 by default). */
const DEFAULT_BLOCKS = 256

interface Heard { height: number, keys: Set<string> }

export class HeardChainEvents {
  readonly #capacity: number
  /** By block hash (a re-org by `reorg@<height>`), oldest first. */
  readonly #blocks = new Map<string, Heard>()

  constructor (blocks = DEFAULT_BLOCKS) {
    this.#capacity = blocks
  }

  /** Whether `event` is new here; notes it either way. */
  first (event: ChainEvent): boolean {
    const key = chainEventKey(event)
    const bucket = event.kind === 'reorg' ? `reorg@${event.height}` : event.blockHash
    if (this.#blocks.get(bucket)?.keys.has(key) === true) return false
    if (event.kind === 'reorg') {
      for (const [each, seen] of this.#blocks) if (seen.height >= event.height) this.#blocks.delete(each)
    }
    let seen = this.#blocks.get(bucket)
    if (seen === undefined) {
      this.#blocks.set(bucket, seen = { height: event.height, keys: new Set() })
      if (this.#blocks.size > this.#capacity) this.#blocks.delete(this.#blocks.keys().next().value as string)
    }
    seen.keys.add(key)
    return true
  }
}
