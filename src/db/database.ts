/**
 * The one interface the service's storage code talks to, whichever database is behind it: the
 * embedded PostgreSQL (PGlite, in `DATA_DIR`) or a PostgreSQL server (`DATABASE_URL`). Both speak
 * the same SQL, so every query, constraint and migration is written once (docs/payments.md,
 * "Storage").
 */

export interface SqlResult<Row> {
  rows: Row[]
  /** Rows inserted, updated or deleted by the statement. */
  rowCount: number
}

/** Runs statements: the database itself, or one transaction of it. */
export interface Sql {
  /** One statement with `$1`-style parameters. BIGINT columns come back as numbers when safe. */
  query<Row = Record<string, unknown>>(text: string, params?: unknown[]): Promise<SqlResult<Row>>
  /** Several statements without parameters, such as a migration. */
  exec(text: string): Promise<void>
}

export type DatabaseKind = 'embedded' | 'server'

export interface Database extends Sql {
  readonly kind: DatabaseKind
  /**
   * Runs `work` in one transaction: committed when it resolves, rolled back when it throws. On a
   * server, a transaction that lost a deadlock or a serialization conflict is run again (so `work`
   * must only touch the database); the embedded database runs one transaction at a time.
   */
  transaction<T>(work: (sql: Sql) => Promise<T>): Promise<T>
  close(): Promise<void>
}

/** The SQLSTATE of a failed statement, when `error` is one (both drivers set `code`). */
export function sqlState (error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined
}

/** The constraint a failed statement broke, when it names one. */
export function violatedConstraint (error: unknown): string | undefined {
  const constraint = (error as { constraint?: unknown } | null)?.constraint
  return typeof constraint === 'string' ? constraint : undefined
}

/** unique_violation */
export const UNIQUE_VIOLATION = '23505'

/**
 * BIGINT as both drivers are set to return it: a number while safe, a bigint beyond (no amount
 * or time here comes near). Anything else is a bug in a query, and said so.
 */
export function safeInteger (value: unknown, column: string): number {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value
  throw new TypeError(`column ${column} holds ${typeof value === 'bigint' ? `${value} (beyond the safe integers)` : JSON.stringify(value)}, not a safe integer`)
}
