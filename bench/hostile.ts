/**
 * `npm run bench:hostile`: whether a flood of deeply nested JSON bodies slows the API for
 * everyone else (issue #24). The attack: connections posting a ~900 KB `[[[…]]]` array
 * again and again, half to a URL no route answers, half to a route that takes a body
 * (`POST /api/auth/challenge`, sign-in on). Before the fix each body cost the event loop ~590 ms
 * of JSON.parse and the API answered 503.
 *
 * Two settings, each with a service of its own:
 * - one client: the attack as it comes, from one address (the flood connects from
 *   127.0.0.2) against the default rate limits; the API's requests come through a trusted proxy
 *   (127.0.0.1, TRUST_PROXY) with an X-Forwarded-For address of their own each, so that they
 *   stand for many clients, none of them near its limit;
 * - many addresses: the rate limits lifted, as if every flood request came from an address of
 *   its own: what the body handling alone costs.
 *
 * The built service (as `npm start` runs it, alone on its CPU) in front of one emulated node.
 * In rounds, API requests offered at a fixed rate (Poisson arrivals, from this process), alone and
 * then beside the flood, which runs in a process of its own on the load CPU (this file, with the
 * argument `flood`).
 * Two API requests: `GET /api/nodeinfo`, answered by the fast path once cached, and the same with
 * a query string of its own each time (`?n=…`), which the fast path never saw, so Fastify's
 * whole pipeline answers it from the client's answer cache. Reported: p50, p99 and statuses of
 * each, and the p99 beside the flood over the p99 alone (target: at most 2×). Writes its table into
 * bench/results.md, between the hostile markers.
 *
 * As a control, the same connections asking `GET /nope` with no body: what any client asking as
 * fast as it can costs, body or not.
 *
 * Knobs: BENCH_ROUNDS (3), BENCH_DURATION_S (10), BENCH_FLOOD_CONNECTIONS (6), BENCH_API_RATE (200),
 * BENCH_SERVICE_DIR (a built tree to run instead of this one, e.g. a copy of an earlier commit),
 * BENCH_SETTINGS (`one client,many addresses`).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { Agent, request } from 'node:http'
import { connect } from 'node:net'
import { fileURLToPath } from 'node:url'
import { writeResultsSection } from './results-file.js'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10)
const FLOOD_CONNECTIONS = Number(process.env.BENCH_FLOOD_CONNECTIONS ?? 6)
/** API requests offered per second while measuring. */
const API_RATE = Number(process.env.BENCH_API_RATE ?? 200)
const DEPTH = 450_000
/** A built tree to run instead of this one (for a figure before a change); default this one. */
const SERVICE_DIR = process.env.BENCH_SERVICE_DIR
/** Where the flood connects from: one client, apart from the API's proxy (127.0.0.1). */
const FLOOD_ADDRESS = '127.0.0.2'

/**
 * The flood: `connections` loops, each posting the nested body on a fresh connection, reading
 * the answer (or the close), and again, until SIGTERM; then prints the statuses it got as JSON.
 */
async function flood (port: number, connections: number, kind: FloodKind): Promise<void> {
  const body = Buffer.from('['.repeat(DEPTH) + ']'.repeat(DEPTH))
  const statuses: Record<string, number> = {}
  const stopped = new AbortController()
  process.once('SIGTERM', () => stopped.abort())
  const post = (path: string): Promise<void> => new Promise(resolve => {
    const socket = connect({ port, host: '127.0.0.1', localAddress: FLOOD_ADDRESS })
    let head = ''
    let counted = false
    const done = (): void => {
      if (counted) return
      counted = true
      const status = /^HTTP\/1\.1 (\d+)/.exec(head)?.[1] ?? 'no answer'
      statuses[status] = (statuses[status] ?? 0) + 1
      socket.destroy()
      resolve()
    }
    socket.on('connect', () => {
      if (kind === 'plain') {
        socket.write('GET /nope HTTP/1.1\r\nHost: bench\r\n\r\n')
        return
      }
      socket.write(`POST ${path} HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`)
      socket.write(body)
    })
    socket.on('data', chunk => {
      head += chunk
      if (head.includes('\r\n\r\n')) done()
    })
    // The service refusing the rest of the body resets the connection: the attacker's problem.
    socket.on('error', () => {})
    socket.on('close', done)
  })
  await Promise.all(Array.from({ length: connections }, async (_, i) => {
    while (!stopped.signal.aborted) await post(i % 2 === 0 ? '/nope' : '/api/auth/challenge')
  }))
  console.log(JSON.stringify(statuses))
}

/** The nested bodies of the attack, or, as a control, the same connections asking `GET /nope`. */
type FloodKind = 'nested' | 'plain'

if (process.argv[2] === 'flood') {
  await flood(Number(process.argv[3]), Number(process.argv[4]), process.argv[5] as FloodKind)
  process.exit(0)
}

// Imported here, not above: the flood process needs none of it (the harness runs commands at load).
const { CPUS, cpuMicros, getOnce, startService, stop } = await import('./harness.js')
const { createEmulator } = await import('../devnode/server.js')

interface Run {
  rps: number
  p50: number
  p99: number
  cpuUs: number
  statuses: Record<string, number>
}

function startFlood (port: number, kind: FloodKind): ChildProcess {
  const args = ['--import', 'tsx', fileURLToPath(import.meta.url), 'flood', String(port), String(FLOOD_CONNECTIONS), kind]
  // At the lowest priority: it shares the load CPU with this process, whose measurements a
  // flood writing gigabytes a second would otherwise delay (measured: p99 tens of ms, with the
  // service's event loop never delayed more than a few).
  const nice = ['nice', '-n', '19', process.execPath, ...args]
  const [command, argv] = CPUS ? ['taskset', ['-c', CPUS.load, ...nice]] : [nice[0] as string, nice.slice(1)]
  return spawn(command, argv, { stdio: ['ignore', 'pipe', 'inherit'] })
}

async function stopFlood (child: ChildProcess): Promise<Record<string, number>> {
  let output = ''
  child.stdout?.on('data', chunk => { output += chunk })
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  await exited
  return JSON.parse(output.trim().split('\n').at(-1) ?? '{}') as Record<string, number>
}

type Setting = 'one client' | 'many addresses'
const SETTINGS = (process.env.BENCH_SETTINGS ?? 'one client,many addresses').split(',') as Setting[]
const SETTING_ENV: Record<Setting, Record<string, string>> = {
  'one client': {},
  'many addresses': { RATE_LIMIT_MAX: '1000000000', AUTH_RATE_LIMIT_MAX: '1000000', AUTH_MAX_CHALLENGES: '10000000' },
}

execFileSync('npm', ['run', 'build'], { stdio: 'inherit' })
const node = await createEmulator({})
let port = 0
let pid = 0

let n = 0
/**
 * Offers API requests at random (Poisson arrivals) at API_RATE a second for half a window, as
 * clients arrive whatever the answers do; latency from each request's scheduled arrival, so a
 * late send counts against the service.
 */
async function measure (kind: 'cached' | 'pipeline'): Promise<Run> {
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity })
  const statuses: Record<string, number> = {}
  const latencies: number[] = []
  const pending: Array<Promise<void>> = []
  const send = (scheduled: number): Promise<void> => new Promise(resolve => {
    const done = (status: number | string): void => {
      latencies.push(performance.now() - scheduled)
      statuses[status] = (statuses[status] ?? 0) + 1
      resolve()
    }
    const client = n++
    // Each request a client of its own, behind the trusted proxy: none comes near its limit.
    const headers = { 'x-forwarded-for': `10.${(client >> 16) & 255}.${(client >> 8) & 255}.${client & 255}` }
    request({ host: '127.0.0.1', port, path: kind === 'cached' ? '/api/nodeinfo' : `/api/nodeinfo?n=${client}`, agent, headers }, response => {
      response.resume()
      response.on('end', () => done(response.statusCode ?? 0))
      response.on('error', () => done('error'))
    }).on('error', () => done('error')).end()
  })
  const before = cpuMicros(pid)
  const start = performance.now()
  const end = start + DURATION_S / 2 * 1000
  let next = start
  await new Promise<void>(resolve => {
    const tick = (): void => {
      const now = performance.now()
      while (next <= now && next < end) {
        pending.push(send(next))
        next += -Math.log(1 - Math.random()) * 1000 / API_RATE
      }
      if (next >= end) return resolve()
      setTimeout(tick, Math.min(5, next - now))
    }
    tick()
  })
  await Promise.all(pending)
  agent.destroy()
  const elapsedS = (performance.now() - start) / 1000
  return { rps: latencies.length / elapsedS, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), cpuUs: (cpuMicros(pid) - before) / latencies.length, statuses }
}

function percentile (values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN
}

const rows: Record<string, Run[]> = {}
const floods: Record<string, Array<Record<string, number>>> = {}
const BESIDE: Record<FloodKind, string> = { nested: 'beside the flood', plain: 'beside GET /nope (control)' }
try {
  for (const setting of SETTINGS) {
    const service = await startService({
      POCKETNET_NODES: node.url,
      BASTYON_APP_ID: 'bench.pocketnet.app',
      LOG_LEVEL: 'warn',
      TRUST_PROXY: '127.0.0.1',
      ...SETTING_ENV[setting],
    }, undefined, SERVICE_DIR)
    port = service.port
    pid = service.child.pid as number
    try {
      await getOnce(`http://127.0.0.1:${port}/api/nodeinfo`)
      for (let round = 1; round <= ROUNDS; round++) {
        for (const path of ['cached', 'pipeline'] as const) (rows[`${setting}: ${path}: alone`] ??= []).push(await measure(path))
        for (const kind of ['nested', 'plain'] as const) {
          const child = startFlood(port, kind)
          // The flood under way before the API is measured beside it.
          await new Promise(resolve => setTimeout(resolve, 1000))
          for (const path of ['cached', 'pipeline'] as const) (rows[`${setting}: ${path}: ${BESIDE[kind]}`] ??= []).push(await measure(path))
          ;(floods[`${setting}: ${kind}`] ??= []).push(await stopFlood(child))
        }
        console.log(`${setting}: round ${round} done`, floods[`${setting}: nested`]?.at(-1), floods[`${setting}: plain`]?.at(-1))
      }
    } finally {
      await stop(service.child)
    }
  }
} finally {
  await node.close()
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN
const summary = Object.entries(rows).map(([name, runs]) => ({
  name,
  rps: median(runs.map(run => run.rps)),
  p50: median(runs.map(run => run.p50)),
  p99: median(runs.map(run => run.p99)),
  cpuUs: median(runs.map(run => run.cpuUs)),
  statuses: [...new Set(runs.flatMap(run => Object.keys(run.statuses)))].sort().map(status => `${status}: ${runs.reduce((sum, run) => sum + (run.statuses[status] ?? 0), 0)}`).join(', '),
}))
const ratio = (setting: Setting, path: string, kind: FloodKind): string => {
  const alone = rows[`${setting}: ${path}: alone`] ?? []
  const beside = rows[`${setting}: ${path}: ${BESIDE[kind]}`] ?? []
  return median(beside.map((run, i) => run.p99 / (alone[i]?.p99 ?? NaN))).toFixed(2)
}
const answers = (setting: Setting, kind: FloodKind): string => {
  const statuses: Record<string, number> = {}
  for (const counts of floods[`${setting}: ${kind}`] ?? []) for (const [status, count] of Object.entries(counts)) statuses[status] = (statuses[status] ?? 0) + count
  return Object.entries(statuses).map(([status, count]) => `${status}: ${count}`).join(', ')
}
const SETTING_TEXT: Record<Setting, string> = {
  'one client': 'one client (the flood from one address, default rate limits)',
  'many addresses': 'many addresses (rate limits lifted)',
}
const table = [
  `Written by \`npm run bench:hostile\` (Node ${process.version}, ${new Date().toISOString().slice(0, 10)}): the built service (sign-in on) on its own CPU; ${ROUNDS} rounds, in each the API offered at ${API_RATE} requests/s (Poisson arrivals, latency from each request's scheduled arrival; each request a client of its own behind a trusted proxy) for ${DURATION_S / 2} s per request kind, alone and then beside ${FLOOD_CONNECTIONS} connections posting a ${Math.round(DEPTH * 2 / 1000)} KB nested JSON array again and again (half to \`/nope\`, half to \`POST /api/auth/challenge\`), the flood in a process of its own on the load CPU; medians over the rounds. Two settings: ${SETTINGS.map(setting => SETTING_TEXT[setting]).join('; ')}.`,
  '',
  '| API request | answered/s | p50 ms | p99 ms | CPU µs / req (the flood\'s included) | statuses |',
  '|---|---|---|---|---|---|',
  ...summary.map(row => `| ${row.name} | ${Math.round(row.rps)} | ${row.p50.toFixed(2)} | ${row.p99.toFixed(2)} | ${Math.round(row.cpuUs)} | ${row.statuses} |`),
  '',
  'p99 beside the flood over p99 alone (median of the rounds\' ratios; target ≤ 2), and beside the control (the same connections asking `GET /nope` with no body):',
  '',
  ...SETTINGS.map(setting => `- ${SETTING_TEXT[setting]}: cached **${ratio(setting, 'cached', 'nested')}×**, through Fastify's pipeline **${ratio(setting, 'pipeline', 'nested')}×**; control: cached ${ratio(setting, 'cached', 'plain')}×, pipeline ${ratio(setting, 'pipeline', 'plain')}×. The flood's answers: ${answers(setting, 'nested')}; the control's: ${answers(setting, 'plain')}.`),
  ...(SERVICE_DIR === undefined ? [] : ['', `Service run from ${SERVICE_DIR}.`]),
].join('\n')
console.log(`\n${table}`)

writeResultsSection('hostile', '### Hostile requests (issue #24)', table)
