/**
 * `npm run bench:storage`, its storage half (issue #36): the embedded database (PGlite, in a
 * temporary DATA_DIR) seeded with BENCH_STORAGE_USERS (10,000) users × BENCH_STORAGE_KEYS (100)
 * keys by bulk SQL, then the service as `buildApp` makes it, in this process, answering
 * `GET` and `PUT /api/me/storage/{key}` over loopback HTTP to a client in a process of its own,
 * one request at a time, for BENCH_STORAGE_SIGNED_IN (200) users signed in with real signatures,
 * each request a random one of them and a random key of theirs.
 *
 * Service time: `reply.elapsedTime` in an onResponse hook, Fastify's time from the moment it took
 * the request (before the route's hooks: the rate limit, sign-in's token check) to the moment the
 * answer's last byte was handed to the socket; what the network and the client add is not in
 * it. The client's round trip is reported beside it. Then the same operations on `app.storage`
 * alone (no HTTP, no sign-in), to tell the database's share from the rest.
 *
 * On two CPUs or more this process (the service) runs on the server CPU and the client on the
 * load CPU (bench/harness.ts). It runs under the start script's V8 flags, as the service ships
 * (run without them, it starts itself again with them): its PGlite's WebAssembly is compiled as
 * they say, which the tail of a request follows (bench/results.md, "Where a write's tail came
 * from"). Writes its table into bench/results.md, between the storage markers.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { Agent, request as httpRequest } from 'node:http'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { addressOf, sdkSign, testKey } from '../devnode/bastyon-host.js'
import { createEmulator } from '../devnode/server.js'
import type { onRequestHookHandler, onResponseHookHandler } from 'fastify'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { openDatabase } from '../src/db/open-database.js'
import { mirroredByReplay } from '../src/fast-path/hook-ledger.js'
import { copyTemplateTo } from '../scripts/pglite-template.js'
import { CPUS, START_ARGS, cpuMicros, cpuSeconds, stop } from './harness.js'
import { writeResultsSection } from './results-file.js'

const USERS = Number(process.env.BENCH_STORAGE_USERS ?? 10_000)
const KEYS = Number(process.env.BENCH_STORAGE_KEYS ?? 100)
const SIGNED_IN = Math.min(USERS, Number(process.env.BENCH_STORAGE_SIGNED_IN ?? 200))
const REQUESTS = Number(process.env.BENCH_STORAGE_REQUESTS ?? 5000)
/**
 * Requests of each kind sent before the timed ones: what a service that has run a while has
 * behind it. V8 compiles the path's functions with TurboFan over the first thousands of requests
 * after a start, on threads that share the service's one CPU here; by 6000 pairs it has all but
 * stopped (bench/results.md, "A warm service"). The first STARTING of each kind are reported apart.
 */
const WARM_UP = Number(process.env.BENCH_STORAGE_WARM_UP ?? 6000)
/** The requests of each kind right after the start whose p99 is reported beside the warm one. */
const STARTING = Math.min(WARM_UP, 1000)
const APP_ID = 'bench.storage.app'
/** The V8 flags of the start script (package.json), without the script it runs. */
const SERVICE_FLAGS = START_ARGS.filter(arg => arg.startsWith('--'))
/** About what a mini-app keeps under a key: a small object (here 60 to 70 bytes as JSON). */
const valueOf = (user: number, key: number, round: number): unknown => ({ score: user * 7 + key, level: key % 30, round, tags: ['bench', `k${key}`], done: key % 2 === 0 })

interface Plan { url: string, requests: Array<{ method: 'GET' | 'PUT', path: string, token: string, body?: string }> }

/** The client, in a process of its own: the plan's requests one after the other, each one's round trip in ms. */
async function clientProcess (planFile: string): Promise<void> {
  const plan = JSON.parse(readFileSync(planFile, 'utf8')) as Plan
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const roundTrips: number[] = []
  for (const step of plan.requests) {
    const started = performance.now()
    const status = await new Promise<number>((resolve, reject) => {
      const call = httpRequest(`${plan.url}${step.path}`, {
        method: step.method,
        agent,
        headers: { authorization: `Bearer ${step.token}`, ...(step.body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(step.body) }) },
      }, response => {
        response.resume()
        response.on('end', () => resolve(response.statusCode ?? 0))
      })
      call.on('error', reject)
      call.end(step.body)
    })
    roundTrips.push(performance.now() - started)
    if (status !== 200) throw new Error(`${step.method} ${step.path}: ${status}`)
  }
  agent.destroy()
  console.log(JSON.stringify({ roundTrips }))
}

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN
const ms = (value: number): string => value.toFixed(value < 1 ? 3 : 2)
const pct = (share: number): string => `${Math.round(share * 100)} %`

function quantiles (samples: number[]): { p50: number, p99: number, max: number } {
  const sorted = [...samples].sort((a, b) => a - b)
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted.at(-1) ?? NaN }
}

/** Seeds `dataDir` by bulk SQL: every user's usage row and keys, the signed-in users' owners their real addresses. */
async function seed (dataDir: string, owners: string[]): Promise<number> {
  const started = performance.now()
  const db = await openDatabase({ dataDir })
  try {
    await db.query('CREATE TEMPORARY TABLE bench_owners (n integer PRIMARY KEY, owner text NOT NULL)')
    await db.query('INSERT INTO bench_owners SELECT n, owner FROM unnest($1::text[]) WITH ORDINALITY AS o(owner, n)', [owners])
    // One user at a time would be 10,000 statements: a few hundred users per statement instead.
    const BATCH = Math.max(1, Math.floor(100_000 / KEYS))
    for (let from = 1; from <= owners.length; from += BATCH) {
      await db.transaction(async sql => {
        await sql.query('INSERT INTO storage_usage (space, owner, keys, bytes) SELECT \'user\', owner, 0, 0 FROM bench_owners WHERE n BETWEEN $1 AND $2', [from, from + BATCH - 1])
        await sql.query(`INSERT INTO storage_items (space, owner, key, value, size, version, updated_at_ms)
          SELECT 'user', o.owner, 'key-' || k, v.value, octet_length('key-' || k) + octet_length(v.value), substr(md5(o.n || '/' || k), 1, 16), 1800000000000
          FROM bench_owners o CROSS JOIN generate_series(1, $3::integer) AS k
          CROSS JOIN LATERAL (SELECT json_build_object('score', o.n * 7 + k, 'level', k % 30, 'round', 0, 'tags', json_build_array('bench', 'k' || k), 'done', k % 2 = 0)::text AS value) v
          WHERE o.n BETWEEN $1 AND $2`, [from, from + BATCH - 1, KEYS])
        await sql.query(`UPDATE storage_usage u SET keys = t.keys, bytes = t.bytes
          FROM (SELECT i.owner, count(*)::integer AS keys, sum(i.size) AS bytes FROM storage_items i JOIN bench_owners o ON o.owner = i.owner
                WHERE i.space = 'user' AND o.n BETWEEN $1 AND $2 GROUP BY i.owner) t
          WHERE u.space = 'user' AND u.owner = t.owner`, [from, from + BATCH - 1])
      })
    }
    await db.exec('ANALYZE storage_items; ANALYZE storage_usage; CHECKPOINT')
    const { rows } = await db.query<{ keys: number }>('SELECT count(*)::integer AS keys FROM storage_items')
    if (rows[0]?.keys !== owners.length * KEYS) throw new Error(`seeded ${rows[0]?.keys} keys, expected ${owners.length * KEYS}`)
  } finally {
    await db.close()
  }
  return performance.now() - started
}

async function measure (cleanups: Array<() => unknown>): Promise<void> {
  const startLoad = loadavg()[0]?.toFixed(2)
  if (CPUS) execFileSync('taskset', ['-a', '-p', '-c', CPUS.server, String(process.pid)], { stdio: 'ignore' })
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-storage-'))
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }))
  await copyTemplateTo(dataDir)

  const keys = Array.from({ length: SIGNED_IN }, (_, i) => testKey(`bench storage user ${i}`))
  const addresses = keys.map(key => addressOf(key))
  const owners = Array.from({ length: USERS }, (_, i) => addresses[i] ?? `bench-user-${i}`)
  const seedMs = await seed(dataDir, owners)
  console.log(`seeded ${USERS} users × ${KEYS} keys in ${(seedMs / 1000).toFixed(1)} s`)

  // Sign-in needs no node, /api/me/storage neither; the emulator only gives the client a node to name.
  const node = await createEmulator({ port: 0 })
  cleanups.push(() => node.close())
  const config = loadConfig({
    ...process.env,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    POCKETNET_NODES: node.url,
    BASTYON_APP_ID: APP_ID,
    DATA_DIR: dataDir,
    DATABASE_URL: '',
    EVENTS_INGEST: 'false',
    RATE_LIMIT_MAX: '100000000',
    AUTH_RATE_LIMIT_MAX: '1000000',
    AUTH_SIGNATURE_CHECKS_PER_S: '1000000',
    AUTH_MAX_SESSIONS: String(SIGNED_IN * 2),
  })
  const app = await buildApp(config)
  cleanups.push(() => app.close())
  const serviceMs: Record<'GET' | 'PUT', number[]> = { GET: [], PUT: [] }
  const serviceCpuMs: Record<'GET' | 'PUT', number[]> = { GET: [], PUT: [] }
  // The process's CPU time at each request's start: one request at a time, so its CPU time is the request's own (and the GC's).
  const cpuAtStart = new WeakMap<object, NodeJS.CpuUsage>()
  // Marked as mirrored: a replayed answer (never a storage one) has nothing to time here.
  app.addHook('onRequest', mirroredByReplay<onRequestHookHandler>(function cpuAtRequest (request, _reply, done) {
    cpuAtStart.set(request, process.cpuUsage())
    done()
  }))
  app.addHook('onResponse', mirroredByReplay<onResponseHookHandler>(function serviceTime (request, reply, done) {
    if (request.url.startsWith('/api/me/storage/') && (request.method === 'GET' || request.method === 'PUT')) {
      serviceMs[request.method].push(reply.elapsedTime)
      const cpu = process.cpuUsage(cpuAtStart.get(request))
      serviceCpuMs[request.method].push((cpu.user + cpu.system) / 1000)
    }
    done()
  }))
  await app.listen({ port: 0, host: '127.0.0.1' })
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`

  const tokens: string[] = []
  for (const key of keys) {
    const challenge = (await (await fetch(`${url}/api/auth/challenge`, { method: 'POST' })).json() as { data: { challenge: string } }).data.challenge
    const session = await fetch(`${url}/api/auth/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ signature: sdkSign(challenge, APP_ID, { key, issued: Date.now() }) }) })
    tokens.push((await session.json() as { data: { token: string } }).data.token)
  }
  // The database opens on the first request, not here: one request opens it before anything is timed.
  const opened = performance.now()
  await fetch(`${url}/api/me/storage/key-1`, { headers: { authorization: `Bearer ${tokens[0] as string}` } })
  const openMs = performance.now() - opened

  // A fixed random sequence: the same plan every run.
  let state = 36
  const random = (n: number): number => { state = (state * 1_103_515_245 + 12_345) % 2_147_483_648; return state % n }
  const requests: Plan['requests'] = []
  for (let i = 0; i < WARM_UP + REQUESTS; i++) {
    for (const method of ['GET', 'PUT'] as const) {
      const user = random(SIGNED_IN)
      const key = 1 + random(KEYS)
      requests.push({ method, path: `/api/me/storage/key-${key}`, token: tokens[user] as string, ...(method === 'PUT' ? { body: JSON.stringify({ value: valueOf(user + 1, key, i + 1) }) } : {}) })
    }
  }
  const planFile = join(dataDir, '..', `bench-storage-plan-${process.pid}.json`)
  writeFileSync(planFile, JSON.stringify({ url, requests } satisfies Plan))
  cleanups.push(() => rmSync(planFile, { force: true }))

  const cpuBefore = cpuSeconds().get(`cpu${CPUS?.server ?? ''}`)
  const ownBefore = cpuMicros(process.pid)
  const started = performance.now()
  const { child, output } = runClient(planFile)
  cleanups.push(() => stop(child))
  const roundTrips = (JSON.parse(await output) as { roundTrips: number[] }).roundTrips
  const elapsedS = (performance.now() - started) / 1000
  const cpuAfter = cpuSeconds().get(`cpu${CPUS?.server ?? ''}`)
  const ownS = (cpuMicros(process.pid) - ownBefore) / 1e6
  const serverCpu = cpuBefore !== undefined && cpuAfter !== undefined && CPUS
    ? `CPU ${CPUS.server} during the timed requests: busy ${pct((cpuAfter.busy - cpuBefore.busy) / (cpuAfter.total - cpuBefore.total))}, of which this process ${pct(ownS / (cpuAfter.busy - cpuBefore.busy))}; stolen by the hypervisor ${pct((cpuAfter.steal - cpuBefore.steal) / (cpuAfter.total - cpuBefore.total))}`
    : 'no CPU of its own (one CPU, or no taskset)'
  const timed = (method: 'GET' | 'PUT', samples = serviceMs): number[] => samples[method].slice(WARM_UP)
  const roundTripsOf = (method: 'GET' | 'PUT'): number[] => roundTrips.filter((_, i) => (i % 2 === 0 ? 'GET' : 'PUT') === method).slice(WARM_UP)

  // The same operations on app.storage alone: the database's part (and the JSON), without HTTP.
  const storage = app.storage
  if (storage === undefined) throw new Error('storage is off')
  const direct: Record<'get' | 'put', number[]> = { get: [], put: [] }
  for (let i = 0; i < WARM_UP + REQUESTS; i++) {
    const user = random(SIGNED_IN)
    const key = 1 + random(KEYS)
    const scope = storage.forUser(addresses[user] as string)
    let at = performance.now()
    await scope.get(`key-${key}`)
    if (i >= WARM_UP) direct.get.push(performance.now() - at)
    at = performance.now()
    await scope.put(`key-${key}`, valueOf(user + 1, key, -i))
    if (i >= WARM_UP) direct.put.push(performance.now() - at)
  }
  const database = await app.database.open()
  const { rows: [sizes] } = await database.query<{ keys: number, bytes: number }>("SELECT count(*)::integer AS keys, sum(size)::bigint AS bytes FROM storage_items WHERE space = 'user'")

  const rows: string[] = []
  const goal = (p99: number): string => p99 <= 2 ? '**met**' : '**missed**'
  for (const method of ['GET', 'PUT'] as const) {
    const service = quantiles(timed(method))
    const trip = quantiles(roundTripsOf(method))
    const cpu = quantiles(timed(method, serviceCpuMs))
    rows.push(`| \`${method} /api/me/storage/{key}\`: service time, p50 / p99 / max | ${ms(service.p50)} / ${ms(service.p99)} / ${ms(service.max)} ms | p99 ≤ 2 ms | ${goal(service.p99)} |`)
    rows.push(`| the same, the process's CPU time over it, p50 / p99 / max | ${ms(cpu.p50)} / ${ms(cpu.p99)} / ${ms(cpu.max)} ms | | |`)
    rows.push(`| the same, the client's round trip over loopback, p50 / p99 | ${ms(trip.p50)} / ${ms(trip.p99)} ms | | |`)
  }
  for (const method of ['GET', 'PUT'] as const) {
    const starting = quantiles(serviceMs[method].slice(0, STARTING))
    rows.push(`| \`${method}\` in the first ${STARTING} after the start (not counted above): service time, p50 / p99 / max | ${ms(starting.p50)} / ${ms(starting.p99)} / ${ms(starting.max)} ms | | |`)
  }
  for (const op of ['get', 'put'] as const) {
    const alone = quantiles(direct[op])
    rows.push(`| \`app.storage.forUser(address).${op}(key)\` alone (no HTTP, no sign-in check), p50 / p99 / max | ${ms(alone.p50)} / ${ms(alone.p99)} / ${ms(alone.max)} ms | | |`)
  }
  const date = new Date().toISOString().slice(0, 10)
  const text = [
    `Written by \`npm run bench:storage\` (Node ${process.version}, ${date}): the service built in the benchmark's process (\`buildApp\`${CPUS ? `, on CPU ${CPUS.server}` : ''}, under the start script's flags \`${SERVICE_FLAGS.join(' ')}\`) with sign-in and storage on, its embedded database (PGlite) in a temporary \`DATA_DIR\`, seeded by bulk SQL with ${USERS} users × ${KEYS} keys (${sizes?.keys} keys, ${Math.round(Number(sizes?.bytes) / 1e6)} MB of keys and values; seeding took ${(seedMs / 1000).toFixed(1)} s; the first request opened the database in ${Math.round(openMs)} ms). A client in a process of its own${CPUS ? ` on CPU ${CPUS.load}` : ''} sends ${REQUESTS} \`GET\` and ${REQUESTS} \`PUT\` (each a value of about 70 bytes), alternating, one at a time over one keep-alive connection, after ${WARM_UP} of each not counted, for ${SIGNED_IN} users signed in with real signatures, a random user and key each time: ${Math.round(2 * (WARM_UP + REQUESTS) / elapsedS)} requests/s. Load average at the start ${startLoad}; ${serverCpu}.`,
    '',
    '| Measure | Value | Goal (issue #36) | Verdict |',
    '|---|---|---|---|',
    ...rows,
    '',
    'Service time is Fastify\'s `reply.elapsedTime` read in an `onResponse` hook: from the moment Fastify took the request (before the rate limit and the sign-in check) to the moment the answer was handed to the socket. The CPU time is `process.cpuUsage()` between the first `onRequest` hook and that `onResponse` hook: with one request at a time it is the request\'s own work and any garbage collection during it, and the time other processes took from the CPU is not in it. The rows "in the first … after the start" are the untimed requests a service answers while V8 still compiles its path, for comparison. The rows "alone" time the same calls on `app.storage` in this process, after the HTTP run, with the same seeded database.',
  ].join('\n')
  console.log(text)
  if (process.env.BENCH_STORAGE_WRITE !== 'false') writeResultsSection('storage', '### Per-user storage (issue #36)\n\nCommand: `npm run bench:storage`.', text)
}

/** The client process on the load CPU; its output once it is done. */
function runClient (planFile: string): { child: ChildProcess, output: Promise<string> } {
  const args = ['--import', 'tsx', fileURLToPath(import.meta.url), '--client', planFile]
  const [command, argv] = CPUS ? ['taskset', ['-c', CPUS.load, process.execPath, ...args]] : [process.execPath, args]
  const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'inherit'] })
  let text = ''
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => { text += chunk })
  const output = new Promise<string>((resolve, reject) => {
    child.once('exit', code => code === 0 ? resolve(text) : reject(new Error(`the client exited with ${code}`)))
  })
  return { child, output }
}

if (process.argv[2] === '--client') {
  await clientProcess(process.argv[3] as string)
} else if (!SERVICE_FLAGS.every(flag => process.execArgv.includes(flag))) {
  const again = spawn(process.execPath, [...SERVICE_FLAGS, ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' })
  process.exitCode = await new Promise<number>(resolve => again.once('exit', code => resolve(code ?? 1)))
} else {
  const cleanups: Array<() => unknown> = []
  try {
    await measure(cleanups)
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup()
  }
}
