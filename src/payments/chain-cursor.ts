/**
 * Where the payments watcher is on the chain, in the database: the last block it handled. The event
 * ingest resumes from it at start (pocketnet-client's `resumeFrom`, up to its catch-up bound), so
 * blocks mined while no instance ingested the chain are read back and their payments to the
 * receiver found, not left for the front-end to report.
 */
import type { BlockPosition } from 'pocketnet-client'
import type { Database } from '../db/database.js'

const NAME = 'payments-watcher'

export class ChainCursor {
  readonly #db: Database
  readonly #now: () => number

  constructor (db: Database, now: () => number = Date.now) {
    this.#db = db
    this.#now = now
  }

  async read (): Promise<BlockPosition | undefined> {
    const { rows } = await this.#db.query<{ height: number, block_hash: string }>('SELECT height, block_hash FROM chain_cursors WHERE name = $1', [NAME])
    const row = rows[0]
    return row === undefined ? undefined : { height: row.height, blockHash: row.block_hash }
  }

  /** The block handled last (after a re-org, lower than before: the chain is read back from there). */
  async note (position: BlockPosition): Promise<void> {
    await this.#db.query(
      `INSERT INTO chain_cursors (name, height, block_hash, updated_at_ms) VALUES ($1, $2, $3, $4)
       ON CONFLICT (name) DO UPDATE SET height = EXCLUDED.height, block_hash = EXCLUDED.block_hash, updated_at_ms = EXCLUDED.updated_at_ms`,
      [NAME, position.height, position.blockHash, this.#now()]
    )
  }
}
