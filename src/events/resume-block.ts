/**
 * Where a new holder of the ingest lease resumes (REDIS_URL): the last block the instance holding
 * it reported, kept in Redis beside the lease (`events:ingest:tip`), so that an instance taking
 * over without having seen a block itself reads back from there instead of starting at the tip.
 */
import type { BlockPosition, RedisLink } from 'pocketnet-client'

const KEY = 'events:ingest:tip'
const BLOCK_HASH = /^[0-9a-f]{64}$/

export class ResumeBlock {
  readonly #link: RedisLink
  readonly #keepMs: number

  /** `keepMs`: how long a block noted is kept for the next holder. */
  constructor (link: RedisLink, keepMs: number) {
    this.#link = link
    this.#keepMs = keepMs
  }

  /** Notes the last block this instance reported (fire and forget). */
  note (block: BlockPosition): void {
    this.#link.run('ingest-tip', redis => redis.set(this.#link.keyPrefix + KEY, `${block.height}:${block.blockHash}`, 'PX', this.#keepMs)).catch(() => {})
  }

  /** The last block noted, when Redis has one. */
  async read (): Promise<BlockPosition | undefined> {
    const value = await this.#link.run('ingest-tip', redis => redis.get(this.#link.keyPrefix + KEY))
    const [height, blockHash] = (value ?? '').split(':')
    const block = { height: Number(height), blockHash: blockHash ?? '' }
    return Number.isSafeInteger(block.height) && block.height >= 1 && BLOCK_HASH.test(block.blockHash) ? block : undefined
  }
}
