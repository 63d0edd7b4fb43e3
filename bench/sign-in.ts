/**
 * `npm run bench:sign-in`: what sign-in costs the service (issue #18), and whether a flood of
 * forged sign-ins slows everything else. The built service, with sign-in on and its rate limits
 * out of the way, in front of one emulated node; autocannon in this process. Each POST comes from
 * another network (X-Forwarded-For from a trusted proxy), so that only the process's share of the
 * signature budget binds: an attacker with many networks, the worst case for the CPU. Each phase
 * is measured in rounds, its CPU time per request from /proc:
 * - nodeinfo: GET /api/nodeinfo, a cached answer (the fast path): the reference;
 * - unknown challenge: a well-formed signature for a challenge never issued (no curve check);
 * - forged signature: a challenge this service issued, one per request (a refused signature uses its
 *   challenge up), with an edited nonce (the curve check runs and fails);
 * - sign-in: a real challenge signed as the host signs it, each used once (curve check, challenge
 *   taken, token stored);
 * - nodeinfo beside a flood of forged signatures, against nodeinfo alone at the same load:
 *   without the signature budget, then on a second service with the default budget.
 * Writes its table into bench/results.md, between the sign-in markers.
 */
import { execFileSync, type ChildProcess } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import autocannon from 'autocannon'
import { sdkSign, testKey, type SignatureObject } from '../devnode/bastyon-host.js'
import { createEmulator } from '../devnode/server.js'
import { cpuMicros, getOnce, startService, stop } from './harness.js'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5)
const CONNECTIONS = 20
const APP_ID = 'bench.pocketnet.app'
const KEY = testKey('bench')

interface Run {
  rps: number
  p50: number
  p99: number
  cpuUs: number
  statuses: Record<string, number>
}

execFileSync('npm', ['run', 'build'], { stdio: 'inherit' })
const node = await createEmulator({})
let base = ''
let pid = 0

/** Starts the built service with sign-in on, its rate limits out of the way, and `env`. */
async function startSignIn (env: Record<string, string>): Promise<ChildProcess> {
  const { child, port } = await startService({
    POCKETNET_NODES: node.url,
    BASTYON_APP_ID: APP_ID,
    TRUST_PROXY: '127.0.0.1',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_MAX: '1000000000',
    AUTH_RATE_LIMIT_MAX: '1000000',
    AUTH_MAX_CHALLENGES: '10000000',
    AUTH_MAX_SESSIONS: '10000000',
    ...env,
  })
  base = `http://127.0.0.1:${port}`
  pid = child.pid as number
  await getOnce(`${base}/api/nodeinfo`)
  return child
}

async function post (path: string, body?: unknown): Promise<{ status: number, body: any }> {
  const response = await fetch(base + path, { method: 'POST', ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }) })
  return { status: response.status, body: await response.json() }
}

async function challenges (count: number): Promise<string[]> {
  const issued: string[] = []
  while (issued.length < count) {
    const batch = await Promise.all(Array.from({ length: Math.min(200, count - issued.length) }, () => post('/api/auth/challenge')))
    for (const answer of batch) issued.push(answer.body.data.challenge)
  }
  return issued
}

/** One autocannon run: fixed `bodies` in turn (POST /api/auth/session), or GET `path`; for `amount` requests or `seconds`. */
async function measure (options: { path?: string, bodies?: string[], seconds?: number, amount?: number, connections?: number }): Promise<Run> {
  const statuses: Record<string, number> = {}
  let next = 0
  const bodies = options.bodies
  const before = cpuMicros(pid)
  const result = await autocannon({
    url: base,
    connections: options.connections ?? CONNECTIONS,
    ...(options.amount === undefined ? { duration: options.seconds ?? DURATION_S } : { amount: options.amount }),
    requests: [bodies === undefined
      ? { method: 'GET', path: options.path ?? '/api/nodeinfo' }
      : {
          method: 'POST',
          path: '/api/auth/session',
          // Each from a /24 of its own: no client's or network's share of the budget binds, only the process's.
          setupRequest: request => {
            const n = next++
            return { ...request, headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.${(n >> 8) & 255}.${n & 255}.1` }, body: bodies[n % bodies.length] }
          },
        }],
  })
  const instance = result as unknown as { statusCodeStats?: Record<string, { count: number }> }
  for (const [status, { count }] of Object.entries(instance.statusCodeStats ?? {})) statuses[status] = count
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuUs: (cpuMicros(pid) - before) / result.requests.total,
    statuses,
  }
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN

const unknown = JSON.stringify({ signature: sdkSign('Qm9ndXNjaGFsbGVuZ2VOZXZlcklzc3Vl', APP_ID, { key: KEY, issued: Date.now() }) })
/**
 * Signatures for `count` challenges this service issued, one each (a refused signature uses its
 * challenge up), their nonces edited: the curve check runs, and fails.
 */
const forgedSignatures = async (count: number): Promise<string[]> => (await challenges(count)).map(challenge => {
  const signature = sdkSign(challenge, APP_ID, { key: KEY, issued: Date.now() })
  return JSON.stringify({ signature: { ...signature, nonce: signature.nonce.replace('exp=360', 'exp=300') } })
})

/** Enough of a kind for a run at `rps` (the last measured), each used once. */
const enoughFor = (rps: number | undefined): number => Math.max(500, Math.round((rps ?? 1000) * DURATION_S * 1.2))

/** nodeinfo from 5 connections alone, then beside a flood of forged signatures from 20. */
async function floodRounds (prefix: string, rows: Record<string, Run[]>): Promise<void> {
  const forged = await forgedSignatures(enoughFor(rows[`${prefix}: the flood`]?.at(-1)?.rps ?? rows['forged signature']?.at(-1)?.rps))
  ;(rows[`${prefix}: nodeinfo alone (5 connections)`] ??= []).push(await measure({ path: '/api/nodeinfo', connections: 5 }))
  const [beside, flood] = await Promise.all([
    measure({ path: '/api/nodeinfo', connections: 5 }),
    measure({ bodies: forged, connections: CONNECTIONS }),
  ])
  ;(rows[`${prefix}: nodeinfo beside a flood`] ??= []).push(beside)
  ;(rows[`${prefix}: the flood`] ??= []).push(flood)
}

const rows: Record<string, Run[]> = {}
const unbounded = await startSignIn({ AUTH_SIGNATURE_CHECKS_PER_S: '1000000' })
for (let round = 1; round <= ROUNDS; round++) {
  ;(rows.nodeinfo ??= []).push(await measure({ path: '/api/nodeinfo' }))
  ;(rows['unknown challenge'] ??= []).push(await measure({ bodies: [unknown] }))
  const forged = await forgedSignatures(enoughFor(rows['forged signature']?.at(-1)?.rps))
  ;(rows['forged signature'] ??= []).push(await measure({ bodies: forged, amount: forged.length }))
  // As many genuine sign-ins as the forged ones took in a round, each signed ahead of time.
  const count = Math.max(500, Math.round((rows['forged signature']?.at(-1)?.rps ?? 1000) * DURATION_S))
  const signed = (await challenges(count)).map(challenge => JSON.stringify({ signature: sdkSign(challenge, APP_ID, { key: KEY, issued: Date.now() }) as SignatureObject }))
  ;(rows['sign-in'] ??= []).push(await measure({ bodies: signed, amount: signed.length }))
  await floodRounds('no budget', rows)
  console.log(`round ${round} done`)
}
await stop(unbounded)
const budgeted = await startSignIn({})
for (let round = 1; round <= ROUNDS; round++) await floodRounds('AUTH_SIGNATURE_CHECKS_PER_S=200 (default)', rows)
await stop(budgeted)
await node.close()

const summary = Object.entries(rows).map(([name, runs]) => ({
  name,
  rps: median(runs.map(run => run.rps)),
  p50: median(runs.map(run => run.p50)),
  p99: median(runs.map(run => run.p99)),
  cpuUs: median(runs.map(run => run.cpuUs)),
  statuses: Object.keys(runs[0]?.statuses ?? {}).sort().join(', '),
}))
const reference = summary.find(row => row.name === 'nodeinfo')?.cpuUs ?? NaN
const table = [
  `Written by \`npm run bench:sign-in\` (Node ${process.version}, ${new Date().toISOString().slice(0, 10)}): the built service with sign-in on and its rate limits lifted (an attacker with many addresses), ${ROUNDS} rounds of ${DURATION_S} s, ${CONNECTIONS} connections (5 for nodeinfo beside the flood); medians over the rounds. The service on its own CPU; autocannon, the emulator and the signing on the other. The first rows without the signature budget (AUTH_SIGNATURE_CHECKS_PER_S=1000000), the last three with the default.`,
  '',
  '| Phase | requests/s | p50 ms | p99 ms | CPU µs / req | × nodeinfo\'s CPU | statuses |',
  '|---|---|---|---|---|---|---|',
  ...summary.map(row => `| ${row.name} | ${Math.round(row.rps)} | ${row.p50} | ${row.p99} | ${Math.round(row.cpuUs)} | ${(row.cpuUs / reference).toFixed(1)}× | ${row.statuses} |`),
].join('\n')
console.log(`\n${table}`)

const resultsPath = new URL('results.md', import.meta.url)
const results = readFileSync(resultsPath, 'utf8')
const start = '<!-- sign-in:start -->'
const end = '<!-- sign-in:end -->'
if (results.includes(start) && results.includes(end)) {
  writeFileSync(resultsPath, results.slice(0, results.indexOf(start) + start.length) + `\n${table}\n` + results.slice(results.indexOf(end)))
  console.log('\nbench/results.md updated')
} else {
  console.log(`\nbench/results.md has no ${start} … ${end} markers: table printed only`)
}
