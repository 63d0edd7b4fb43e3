/**
 * A PostgreSQL server (`DATABASE_URL`), shared by several instances of the service: the same SQL
 * as the embedded database. Transactions run at READ COMMITTED with row locks and constraints
 * deciding races; one that loses a deadlock or a serialization conflict is run again.
 */
import pg from 'pg'
import type { Database, Sql } from './database.js'
import { sqlState } from './database.js'

const INT8_OID = 20
/** serialization_failure, deadlock_detected: the transaction can simply run again. */
const RETRY_STATES = new Set(['40001', '40P01'])
const MAX_ATTEMPTS = 5
/**
 * How long a new connection may take (TCP, TLS, authentication) before it fails: a server that
 * accepts and never answers would otherwise hold the start, and any query waiting for a
 * connection, for ever (pg waits without a bound by default).
 */
export const CONNECT_TIMEOUT_MS = 10_000

/** BIGINT as a number while it is a safe integer (as PGlite gives it), a bigint beyond. */
function parseInt8 (text: string): number | bigint {
  const value = BigInt(text)
  return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value
}

const types = {
  getTypeParser (oid: number, format?: 'text' | 'binary') {
    return oid === INT8_OID && format !== 'binary' ? parseInt8 : pg.types.getTypeParser(oid, format as 'text')
  },
} as pg.CustomTypesConfig

function sqlOf (target: pg.Pool | pg.PoolClient): Sql {
  return {
    async query<Row>(text: string, params: unknown[] = []) {
      const result = await target.query(text, params)
      return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 }
    },
    async exec (text: string) {
      // Without parameters, pg sends the simple query protocol, which runs several statements.
      await target.query(text)
    },
  }
}

export interface ServerDatabaseOptions {
  /** Connections kept open at most. Default 10. */
  maxConnections?: number
  /** An idle connection failed (the server went away): for logs; the pool replaces it. */
  onError?: (error: Error) => void
  /** Default CONNECT_TIMEOUT_MS. */
  connectTimeoutMs?: number
}

/** Connects to the PostgreSQL server at `url` (postgres://user:password@host:port/database). */
export async function openServerDatabase (url: string, options: ServerDatabaseOptions = {}): Promise<Database> {
  const pool = new pg.Pool({ connectionString: url, max: options.maxConnections ?? 10, connectionTimeoutMillis: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS, types })
  pool.on('error', error => options.onError?.(error))
  try {
    await pool.query('SELECT 1')
  } catch (error) {
    await pool.end()
    throw error
  }
  let closed = false
  return {
    kind: 'server',
    ...sqlOf(pool),
    async transaction (work) {
      const client = await pool.connect()
      // A connection whose ROLLBACK failed is in an unknown state: destroyed, not reused.
      let broken = false
      try {
        for (let attempt = 1; ; attempt++) {
          await client.query('BEGIN')
          try {
            const result = await work(sqlOf(client))
            await client.query('COMMIT')
            return result
          } catch (error) {
            try {
              await client.query('ROLLBACK')
            } catch {
              broken = true
              throw error
            }
            if (attempt >= MAX_ATTEMPTS || !RETRY_STATES.has(sqlState(error) ?? '')) throw error
          }
        }
      } finally {
        client.release(broken)
      }
    },
    async close () {
      if (closed) return
      closed = true
      await pool.end()
    },
  }
}
