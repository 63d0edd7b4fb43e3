/**
 * The service's one database (DATABASE_URL, else the embedded one in DATA_DIR), shared by every
 * capability that keeps state: payments, per-user storage, entitlements. `app.database.open()`
 * opens and migrates it on first call and answers every later call with the same connection.
 *
 * Nothing opens it unless a capability asks: a service without payments and without a signed-in
 * user's state never loads a driver. A capability that needs it from the start (the payments'
 * watcher) opens it in an `onReady` hook, which has no timeout, not while plugins register,
 * under Fastify's pluginTimeout (a new embedded database runs initdb: seconds of CPU). The others
 * open it on their first request.
 *
 * The embedded database vacuums itself once open, as a server's autovacuum would
 * (embedded-autovacuum.ts); each run that did something is logged with how long it took.
 */
import fp from 'fastify-plugin'
import type { Database } from './database.js'
import type { AutovacuumReport } from './embedded-autovacuum.js'
import { DatabaseError } from './errors.js'
import { openDatabase } from './open-database.js'

declare module 'fastify' {
  interface FastifyInstance {
    database: ServiceDatabase
  }
}

export interface ServiceDatabase {
  /**
   * The database, opened and migrated on the first call; rejects with the DatabaseError of a failed
   * open (each call tries again), and with `DB_ERR_OPTIONS` on the embedded database with several
   * workers (WEB_CONCURRENCY above 1 without DATABASE_URL).
   */
  open (): Promise<Database>
  /** Whether it is open (metrics, readiness). */
  readonly isOpen: boolean
}

export default fp(async (app) => {
  const config = app.miniAppConfig
  let opening: Promise<Database> | undefined
  let opened: Database | undefined
  let closed = false
  // The embedded database's vacuuming holds it while it runs: each run says what it took.
  const reportAutovacuum = (report: AutovacuumReport): void => {
    if ('error' in report) app.log.warn({ err: report.error }, 'the embedded database could not be vacuumed; the next run tries again')
    else app.log.info({ ...report.run, ms: Math.round(report.run.ms) }, `the embedded database vacuumed, analyzed or froze its tables in ${Math.round(report.run.ms)} ms`)
  }

  const database: ServiceDatabase = {
    open () {
      if (closed) return Promise.reject(new Error('the database is closed: the app is closing'))
      // The configuration refuses this when payments or storage are on; server code that grants or
      // stores with both off would reach it here, where the first worker would take the data
      // directory and every other fail on its lock.
      if (config.WEB_CONCURRENCY > 1 && config.DATABASE_URL === '') {
        return Promise.reject(new DatabaseError('DB_ERR_OPTIONS', `WEB_CONCURRENCY is ${config.WEB_CONCURRENCY} and DATABASE_URL is empty: the embedded database can be opened by one process only, so several workers need DATABASE_URL`))
      }
      opening ??= openDatabase(config.DATABASE_URL === '' ? { dataDir: config.DATA_DIR, autovacuum: { report: reportAutovacuum } } : { databaseUrl: config.DATABASE_URL })
        .then(db => { opened = db; return db }, (err: unknown) => {
          // The next call tries again (a server that was down may be up).
          opening = undefined
          throw err
        })
      return opening
    },
    get isOpen () { return opened !== undefined },
  }
  app.decorate('database', database)

  // Registered before every capability that uses it, so closed after them (Fastify runs onClose
  // hooks of one instance in reverse order of registration).
  app.addHook('onClose', async () => {
    closed = true
    const pending = opening
    if (pending === undefined) return
    await pending.then(db => db.close(), () => {})
  })
}, { name: 'database' })
