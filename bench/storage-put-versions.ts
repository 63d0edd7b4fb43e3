/**
 * Per-user storage's write, `storage_put`, as migration 7 made it against its current version
 * (migration 10), called in turn on one embedded database in one process, the order swapped every
 * round, so that a noisy machine weighs on both alike. The database as `npm run bench:storage`
 * seeds it: BENCH_STORAGE_USERS (10,000) owners × 100 keys, the keys of BENCH_STORAGE_SIGNED_IN
 * (200) of them written. Prints each version's p50 / p90 / p99 / mean and WAL bytes per call, and
 * the ratios; the figures are in bench/results.md, "A write without the second write of its
 * totals". Run it under the start script's flags, as the service runs:
 * `node --retain-maps-for-n-gc=1000 --wasm-tiering-budget=20000 --import tsx bench/storage-put-versions.ts`.
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase } from '../src/db/open-database.js'
import { USER_STORAGE } from '../src/db/migrations/0007-user-storage.js'
import { copyTemplateTo } from '../scripts/pglite-template.js'

const OWNERS = Number(process.env.BENCH_STORAGE_USERS ?? 10_000)
const WRITTEN = Math.min(OWNERS, Number(process.env.BENCH_STORAGE_SIGNED_IN ?? 200))
const KEYS = 100
const CALLS = Number(process.env.BENCH_STORAGE_REQUESTS ?? 4000)
const WARM_UP = Number(process.env.BENCH_STORAGE_WARM_UP ?? 1000)

/** Migration 7's function under a name of its own, beside the current `storage_put`. */
const FIRST_VERSION = (/CREATE FUNCTION storage_put \([\s\S]*?\n\$\$;/.exec(USER_STORAGE.sql)?.[0] ?? '')
  .replace('CREATE FUNCTION storage_put (', 'CREATE FUNCTION storage_put_migration_7 (')
if (FIRST_VERSION === '') throw new Error('migration 7 holds no storage_put')
const VERSIONS = { 'migration 7': 'storage_put_migration_7', 'migration 10': 'storage_put' }
type Version = keyof typeof VERSIONS

const startLoad = loadavg()[0]?.toFixed(2)
const dir = mkdtempSync(join(tmpdir(), 'bench-storage-put-'))
await copyTemplateTo(dir)
const db = await openDatabase({ dataDir: dir })
try {
  await db.exec(FIRST_VERSION)
  const seeding = performance.now()
  for (let from = 1; from <= OWNERS; from += 1000) {
    const to = Math.min(OWNERS, from + 999)
    await db.transaction(async sql => {
      await sql.query("INSERT INTO storage_usage (space, owner) SELECT 'user', 'owner-' || n FROM generate_series($1::integer, $2::integer) n", [from, to])
      await sql.query(`INSERT INTO storage_items (space, owner, key, value, size, version, updated_at_ms)
        SELECT 'user', 'owner-' || n, 'key-' || k, v.value, octet_length('key-' || k) + octet_length(v.value), substr(md5(n || '/' || k), 1, 16), 1800000000000
        FROM generate_series($1::integer, $2::integer) n CROSS JOIN generate_series(1, ${KEYS}) k
        CROSS JOIN LATERAL (SELECT json_build_object('score', n * 7 + k, 'level', k % 30, 'round', 0, 'tags', json_build_array('bench', 'k' || k), 'done', k % 2 = 0)::text AS value) v`, [from, to])
      await sql.query(`UPDATE storage_usage u SET keys = t.keys, bytes = t.bytes
        FROM (SELECT owner, count(*)::integer AS keys, sum(size) AS bytes FROM storage_items
              WHERE space = 'user' AND owner IN (SELECT 'owner-' || n FROM generate_series($1::integer, $2::integer) n) GROUP BY owner) t
        WHERE u.space = 'user' AND u.owner = t.owner`, [from, to])
    })
  }
  await db.exec('ANALYZE storage_items; ANALYZE storage_usage; CHECKPOINT')
  console.log(`seeded ${OWNERS} owners × ${KEYS} keys in ${((performance.now() - seeding) / 1000).toFixed(1)} s`)

  const walPosition = async (): Promise<number> => Number((await db.query<{ at: string }>("SELECT pg_current_wal_insert_lsn() - '0/0'::pg_lsn AS at")).rows[0]?.at)
  // A fixed random sequence: the same plan every run.
  let state = 36
  const random = (n: number): number => { state = (state * 1_103_515_245 + 12_345) % 2_147_483_648; return state % n }
  const times: Record<Version, number[]> = { 'migration 7': [], 'migration 10': [] }
  const wal: Record<Version, number> = { 'migration 7': 0, 'migration 10': 0 }
  for (let round = 0; round < WARM_UP + CALLS; round++) {
    const order: Version[] = round % 2 === 0 ? ['migration 7', 'migration 10'] : ['migration 10', 'migration 7']
    for (const version of order) {
      const owner = `owner-${1 + random(WRITTEN)}`
      const key = `key-${1 + random(KEYS)}`
      const json = JSON.stringify({ score: round, level: round % 30, round, tags: ['bench', key], done: round % 2 === 0 })
      const timed = round >= WARM_UP
      const walBefore = timed ? await walPosition() : 0
      const started = performance.now()
      const { rows: [done] } = await db.query<{ outcome: string }>(`SELECT * FROM ${VERSIONS[version]}($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        ['user', owner, key, json, Buffer.byteLength(key) + Buffer.byteLength(json), randomBytes(12).toString('base64url'), Date.now(), null, false, 1024, 1_048_576])
      const elapsed = performance.now() - started
      if (done?.outcome !== 'written') throw new Error(`${version}: ${JSON.stringify(done)}`)
      if (timed) {
        times[version].push(elapsed)
        wal[version] += await walPosition() - walBefore
      }
    }
  }

  const at = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN
  const summary = (version: Version): { p50: number, p90: number, p99: number, mean: number } => {
    const sorted = [...times[version]].sort((a, b) => a - b)
    return { p50: at(sorted, 0.5), p90: at(sorted, 0.9), p99: at(sorted, 0.99), mean: sorted.reduce((sum, ms) => sum + ms, 0) / sorted.length }
  }
  const [before, after] = [summary('migration 7'), summary('migration 10')]
  console.log(`load average at the start ${startLoad}; node ${process.execArgv.filter(arg => /^--(?!import|require)/.test(arg)).join(' ')}`)
  for (const version of Object.keys(VERSIONS) as Version[]) {
    const { p50, p90, p99, mean } = summary(version)
    console.log(`${version}: p50 ${p50.toFixed(3)} / p90 ${p90.toFixed(3)} / p99 ${p99.toFixed(3)} / mean ${mean.toFixed(3)} ms; WAL ${Math.round(wal[version] / CALLS)} bytes per call`)
  }
  console.log(`migration 10 over migration 7: p50 ${(after.p50 / before.p50).toFixed(2)}, mean ${(after.mean / before.mean).toFixed(2)}, WAL ${(wal['migration 10'] / wal['migration 7']).toFixed(2)}`)
} finally {
  await db.close()
  rmSync(dir, { recursive: true, force: true })
}
