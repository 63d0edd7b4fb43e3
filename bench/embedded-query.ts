/**
 * A statement with parameters on the embedded database: PGlite's own `query()` (six calls into
 * its WebAssembly module) against src/db/extended-query.ts (one call), with and without PGlite's
 * sync of its files after each statement (the service runs without: embedded-database.ts), in
 * one process, in alternating rounds so that a noisy machine weighs on all alike. The path
 * without the sync runs on a second database seeded the same way (two ExtendedQuery on one
 * session would name their prepared statements alike). Statements: a
 * `SELECT $1::integer`, per-user storage's read of a key and its write (`storage_put`), the
 * store's own SQL texts, on BENCH_EMBEDDED_OWNERS (300) owners × 100 keys. Prints p50/p99 of each
 * and the ratios; the figures are in bench/results.md, "The embedded database in one exchange
 * per statement".
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { NodeFS } from '@electric-sql/pglite/nodefs'
import { ExtendedQuery } from '../src/db/extended-query.js'
import { USER_STORAGE } from '../src/db/migrations/0007-user-storage.js'

const OWNERS = Number(process.env.BENCH_EMBEDDED_OWNERS ?? 300)
const KEYS = 100
const CALLS = Number(process.env.BENCH_EMBEDDED_CALLS ?? 2000)
const ROUNDS = Number(process.env.BENCH_EMBEDDED_ROUNDS ?? 4)

const GET = 'SELECT value, version, updated_at_ms FROM storage_items WHERE space = $1 AND owner = $2 AND key = $3'
const PUT = 'SELECT * FROM storage_put($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)'

async function seeded (dir: string): Promise<PGlite> {
  const pglite = await PGlite.create({ fs: new NodeFS(dir), startParams: [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'] })
  await pglite.exec(USER_STORAGE.sql)
  await pglite.exec(`
INSERT INTO storage_usage (space, owner, keys, bytes) SELECT 'user', 'owner' || o, ${KEYS}, ${KEYS} * 40 FROM generate_series(1, ${OWNERS}) o;
INSERT INTO storage_items (space, owner, key, value, size, version, updated_at_ms)
  SELECT 'user', 'owner' || o, 'key' || k, '{"n":' || lpad(k::text, 3, '0') || ',"pad":"xxxxxxxxxxxxxxxxxxxxxx"}',
    octet_length('key' || k) + octet_length('{"n":' || lpad(k::text, 3, '0') || ',"pad":"xxxxxxxxxxxxxxxxxxxxxx"}'), 'AAAAAAAAAAAAAAAA', 0
  FROM generate_series(1, ${OWNERS}) o, generate_series(1, ${KEYS}) k;
UPDATE storage_usage u SET bytes = (SELECT sum(size) FROM storage_items i WHERE i.owner = u.owner);
`)
  return pglite
}

const dirs = [mkdtempSync(join(tmpdir(), 'bench-embedded-query-')), mkdtempSync(join(tmpdir(), 'bench-embedded-query-'))] as const
const pglite = await seeded(dirs[0])
const unsynced = await seeded(dirs[1])
const extended = new ExtendedQuery(pglite)
const extendedUnsynced = new ExtendedQuery(unsynced, { syncFiles: false })

type Run = (text: string, params: unknown[]) => Promise<unknown>
const paths: Record<string, Run> = {
  'pglite.query()': (text, params) => pglite.query(text, params),
  'one call': (text, params) => extended.query(text, params),
  'one call, no sync': (text, params) => extendedUnsynced.query(text, params),
}

let written = 0
const statements: Record<string, () => [string, unknown[]]> = {
  'SELECT $1::integer': () => ['SELECT $1::integer AS one', [1]],
  'storage get': () => [GET, ['user', `owner${1 + Math.floor(Math.random() * OWNERS)}`, `key${1 + Math.floor(Math.random() * KEYS)}`]],
  'storage put': () => {
    const key = `key${1 + Math.floor(Math.random() * KEYS)}`
    const json = `{"n":${written++},"pad":"yyyyyyyyyyyyyyyyyyyyyy"}`
    return [PUT, ['user', `owner${1 + Math.floor(Math.random() * OWNERS)}`, key, json, Buffer.byteLength(key) + Buffer.byteLength(json), `v${String(written).padStart(15, '0')}`, Date.now(), null, false, 1000, 1_000_000]]
  },
}

const samples = new Map<string, number[]>()
const loadBefore = loadavg()[0]!
for (let round = 0; round < ROUNDS; round++) {
  // Each round runs the paths in the other order.
  const order = Object.keys(paths)
  for (let turn = 0; turn < round % order.length; turn++) order.push(order.shift()!)
  for (const [statement, next] of Object.entries(statements)) {
    for (const path of order) {
      const run = paths[path]!
      const times = samples.get(`${statement}|${path}`) ?? []
      samples.set(`${statement}|${path}`, times)
      for (let i = 0; i < CALLS + 100; i++) {
        const [text, params] = next()
        const start = process.hrtime.bigint()
        await run(text, params)
        if (i >= 100) times.push(Number(process.hrtime.bigint() - start) / 1e6)
      }
    }
  }
}
await pglite.close()
await unsynced.close()
for (const dir of dirs) rmSync(dir, { recursive: true, force: true })

function percentile (sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!
}
console.log(`Node ${process.version}, ${OWNERS} owners × ${KEYS} keys, ${ROUNDS} rounds × ${CALLS} calls of each, load average ${loadBefore.toFixed(2)} → ${loadavg()[0]!.toFixed(2)}`)
console.log('| Statement | `pglite.query()` p50 / p99 | one call p50 / p99 | one call, no sync p50 / p99 | one call over `query()`, p50 / p99 | no sync over one call, p50 / p99 |')
console.log('|---|---|---|---|---|---|')
const ratio = (a: number, b: number): string => (a / b).toFixed(2)
for (const statement of Object.keys(statements)) {
  const [query, one, noSync] = Object.keys(paths).map(path => samples.get(`${statement}|${path}`)!.sort((a, b) => a - b)).map(sorted => [percentile(sorted, 0.5), percentile(sorted, 0.99)] as const)
  const cell = ([p50, p99]: readonly [number, number]): string => `${p50.toFixed(3)} / ${p99.toFixed(3)} ms`
  console.log(`| ${statement} | ${cell(query!)} | ${cell(one!)} | ${cell(noSync!)} | ${ratio(one![0], query![0])} / ${ratio(one![1], query![1])} | ${ratio(noSync![0], one![0])} / ${ratio(noSync![1], one![1])} |`)
}
