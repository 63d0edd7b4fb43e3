/**
 * The payments store's costs, behind its choice of database (src/db/embedded-database.ts): the
 * time to open the embedded store (first start, with initdb, and later ones), the memory it keeps
 * (RSS after opening and at the end, peak RSS), and what writing costs (createInvoice, and
 * recordObservation of a payment in a block), on the embedded database and on a PostgreSQL
 * server; and, when pointed at a better-sqlite3 install (BENCH_SQLITE_MODULE=<its folder>), the
 * same INSERT on SQLite for comparison. Each scenario runs in a process of its own, so that one's
 * memory does not count in the next's. Not part of `npm test`.
 *
 *   npx tsx bench/payments-store.ts                 # embedded, and a server started here (Debian's postgresql)
 *   DATABASE_URL=postgres://… npx tsx bench/payments-store.ts   # that server instead
 */
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createPaymentStore } from '../src/payments/create-payment-store.js'
import { paymentTransaction } from '../test/payments/chain-transactions.js'
import { startPostgres } from '../test/helpers/start-postgres.js'

const INVOICES = 3000
const OBSERVATIONS = 1000
const WARM_UP = 300
const RECEIVER = 'mwtvjM7XYJ59cbotx8ZerEJtnzmeshwH9G'

interface Figures { [name: string]: number | string }

const mb = (bytes: number): number => Math.round(bytes / 1e6)
function peakRssMb (): number {
  return Math.round(Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) / 1000)
}

function quantiles (samples: number[]): { p50: number, p99: number, max: number } {
  const sorted = [...samples].sort((a, b) => a - b)
  const at = (q: number): number => Number((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number).toFixed(3))
  return { p50: at(0.5), p99: at(0.99), max: Number((sorted.at(-1) as number).toFixed(3)) }
}

async function timed (count: number, work: (i: number) => Promise<unknown> | unknown): Promise<number[]> {
  const samples: number[] = []
  for (let i = 0; i < count; i++) {
    const start = performance.now()
    await work(i)
    samples.push(performance.now() - start)
  }
  return samples
}

/** One store scenario: open, then create invoices and record payments for some. */
async function storeScenario (options: { dataDir?: string, databaseUrl?: string }): Promise<Figures> {
  const rssBefore = process.memoryUsage().rss
  const started = performance.now()
  const store = await createPaymentStore(options)
  const openMs = Math.round(performance.now() - started)
  const rssOpen = process.memoryUsage().rss
  const request = { amountSat: 150_000_000, receiver: RECEIVER, expiresInS: 900, confirmations: 6, metadata: { order: 'bench' } }
  await timed(WARM_UP, () => store.invoices.createInvoice(request))
  const invoices: Array<{ id: string, memo: string }> = []
  const create = await timed(INVOICES, async () => invoices.push(await store.invoices.createInvoice(request)))
  const observe = await timed(OBSERVATIONS, async i => {
    const invoice = invoices[i] as { id: string, memo: string }
    const txid = randomBytes(32).toString('hex')
    await store.invoices.recordObservation(invoice.id, { txid, transaction: paymentTransaction({ txid, amountSat: 150_000_000, memo: invoice.memo, height: 1000 }), tipHeight: 1000 })
  })
  await store.close()
  const c = quantiles(create)
  const o = quantiles(observe)
  return {
    openMs,
    rssBeforeMb: mb(rssBefore),
    rssOpenMb: mb(rssOpen),
    rssEndMb: mb(process.memoryUsage().rss),
    peakRssMb: peakRssMb(),
    createP50Ms: c.p50,
    createP99Ms: c.p99,
    createMaxMs: c.max,
    observeP50Ms: o.p50,
    observeP99Ms: o.p99,
  }
}

/** The same invoice INSERT on SQLite (better-sqlite3, WAL), with `synchronous` as given. */
function sqliteScenario (modulePath: string, dir: string, synchronous: string): Figures {
  const rssBefore = process.memoryUsage().rss
  const Sqlite = createRequire(import.meta.url)(modulePath) as new (file: string) => {
    pragma (text: string): unknown
    exec (text: string): void
    prepare (text: string): { run (...values: unknown[]): unknown }
    close (): void
  }
  const started = performance.now()
  const db = new Sqlite(join(dir, 'payments.db'))
  db.pragma('journal_mode = WAL')
  db.pragma(`synchronous = ${synchronous}`)
  db.exec(`CREATE TABLE IF NOT EXISTS invoices (id text PRIMARY KEY, amount_sat integer NOT NULL, receiver text NOT NULL, memo text NOT NULL UNIQUE,
    metadata text NOT NULL, state text NOT NULL, confirmations_required integer NOT NULL, expires_at_ms integer NOT NULL, created_at_ms integer NOT NULL, updated_at_ms integer NOT NULL)`)
  const openMs = Math.round(performance.now() - started)
  const rssOpen = process.memoryUsage().rss
  const insert = db.prepare("INSERT INTO invoices VALUES (?, ?, ?, ?, ?, 'pending', 6, ?, ?, ?)")
  const create = (): unknown => insert.run(`inv_${randomBytes(16).toString('base64url')}`, 150_000_000, RECEIVER, `pk_${randomBytes(12).toString('base64url')}`, JSON.stringify({ order: 'bench' }), Date.now() + 900_000, Date.now(), Date.now())
  for (let i = 0; i < WARM_UP; i++) create()
  const samples: number[] = []
  for (let i = 0; i < INVOICES; i++) {
    const start = performance.now()
    create()
    samples.push(performance.now() - start)
  }
  db.close()
  const c = quantiles(samples)
  return { openMs, rssBeforeMb: mb(rssBefore), rssOpenMb: mb(rssOpen), rssEndMb: mb(process.memoryUsage().rss), peakRssMb: peakRssMb(), createP50Ms: c.p50, createP99Ms: c.p99, createMaxMs: c.max }
}

async function child (scenario: string, target: string): Promise<void> {
  let figures: Figures
  if (scenario === 'embedded') figures = await storeScenario({ dataDir: target })
  else if (scenario === 'server') figures = await storeScenario({ databaseUrl: target })
  else if (scenario.startsWith('sqlite-')) figures = sqliteScenario(process.env.BENCH_SQLITE_MODULE as string, target, scenario.slice('sqlite-'.length).toUpperCase())
  else throw new Error(`unknown scenario ${scenario}`)
  process.stdout.write(JSON.stringify(figures))
}

function run (scenario: string, target: string): Figures {
  const output = execFileSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', scenario, target], { encoding: 'utf8', maxBuffer: 1 << 20 })
  return JSON.parse(output) as Figures
}

async function main (): Promise<void> {
  const cleanups: Array<() => unknown> = []
  const rows: Array<[string, Figures]> = []
  try {
    const dataDir = mkdtempSync(join(tmpdir(), 'bench-payments-'))
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }))
    rows.push(['embedded (PGlite), first start: initdb, migrations', run('embedded', dataDir)])
    rows.push(['embedded (PGlite), next start', run('embedded', dataDir)])
    let url = process.env.DATABASE_URL ?? ''
    if (url === '') url = await (await startPostgres({ after: fn => cleanups.push(fn) })).freshDatabase()
    rows.push(['PostgreSQL server (pg), loopback', run('server', url)])
    if (process.env.BENCH_SQLITE_MODULE) {
      for (const synchronous of ['full', 'normal']) {
        const dir = mkdtempSync(join(tmpdir(), 'bench-sqlite-'))
        cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
        rows.push([`SQLite (better-sqlite3), WAL, synchronous=${synchronous.toUpperCase()}: the INSERT alone`, run(`sqlite-${synchronous}`, dir)])
      }
    }
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup()
  }
  console.log(`Node ${process.version}, ${new Date().toISOString().slice(0, 10)}; ${INVOICES} invoices after ${WARM_UP} not counted, ${OBSERVATIONS} payments recorded; one process per row.\n`)
  console.log('| Store | open ms | RSS before open MB | RSS after open MB | RSS at the end MB | peak RSS MB | createInvoice p50 / p99 / max ms | recordObservation p50 / p99 ms |')
  console.log('|---|---|---|---|---|---|---|---|')
  for (const [name, f] of rows) {
    const observe = f.observeP50Ms === undefined ? '' : `${f.observeP50Ms} / ${f.observeP99Ms}`
    console.log(`| ${name} | ${f.openMs} | ${f.rssBeforeMb} | ${f.rssOpenMb} | ${f.rssEndMb} | ${f.peakRssMb} | ${f.createP50Ms} / ${f.createP99Ms} / ${f.createMaxMs} | ${observe} |`)
  }
}

if (process.argv[2] === '--child') await child(process.argv[3] as string, process.argv[4] as string)
else await main()
