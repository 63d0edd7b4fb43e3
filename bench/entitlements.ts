/**
 * `npm run bench:entitlements`: what an entitlement check costs (issue #36: at most 0.1 ms of a
 * route's time), on the embedded database, in this process:
 * - `app.entitlements.has` alone over 10 000 users (half of them holding the SKU), every user read
 *   once first, entries kept longer than the run: the cached check, per call;
 * - the same check just after a grant or a revocation dropped the user's entry: a database read;
 * - a signed-in route answered through Fastify (`inject`: every hook, no socket), without the
 *   check and with it, alternating, one request at a time: the difference is what the check
 *   costs a route.
 * Writes its table into bench/results.md, between the entitlements markers.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { addressOf, sdkSign, testKey } from '../devnode/bastyon-host.js'
import { createEmulator } from '../devnode/server.js'
import { buildApp } from '../src/app.js'
import { signedInUser } from '../src/auth/plugin.js'
import { loadConfig } from '../src/config.js'
import { EntitlementStore } from '../src/entitlements/entitlement-store.js'
import { writeResultsSection } from './results-file.js'

const USERS = Number(process.env.BENCH_USERS ?? 10_000)
const CHECKS = Number(process.env.BENCH_CHECKS ?? 200_000)
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20_000)
const MISSES = Number(process.env.BENCH_MISSES ?? 2000)
const APP_ID = 'bench.pocketnet.app'
const SKU = 'premium'

function quantiles (samples: number[]): { p50: number, p99: number, mean: number } {
  const sorted = [...samples].sort((a, b) => a - b)
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number
  return { p50: at(0.5), p99: at(0.99), mean: samples.reduce((sum, each) => sum + each, 0) / samples.length }
}
const us = (ms: number): string => (ms * 1000).toFixed(2)

const node = await createEmulator({})
const dataDir = mkdtempSync(join(tmpdir(), 'bench-entitlements-'))
const config = loadConfig({
  POCKETNET_NODES: node.url,
  BASTYON_APP_ID: APP_ID,
  DATA_DIR: dataDir,
  LOG_LEVEL: 'silent',
  EVENTS_INGEST: 'false',
  RATE_LIMIT_MAX: '1000000000',
  MAX_EVENT_LOOP_DELAY_MS: '0',
  // Longer than the run: the cached path is measured, not the entries' expiry.
  ENTITLEMENTS_CACHE_TTL_MS: '3600000',
})
const app = await buildApp(config)
app.get('/bench/plain', { config: { auth: true } }, async (request) => ({ message: 'ok', data: { address: signedInUser(request).address } }))
app.get('/bench/premium', { config: { auth: true } }, async (request) => {
  const { address } = signedInUser(request)
  return { message: 'ok', data: { address, premium: await app.entitlements.has(address, SKU) } }
})
await app.ready()

console.log(`granting ${SKU} to ${USERS / 2} of ${USERS} users…`)
const addresses = Array.from({ length: USERS }, (_, i) => addressOf(testKey(`bench user ${i}`)))
const store = new EntitlementStore(await app.database.open())
for (const [i, address] of addresses.entries()) if (i % 2 === 0) await store.grant({ address, sku: SKU, durationS: 86_400 })

// Every user read once: what a busy instance holds.
for (const address of addresses) await app.entitlements.has(address, SKU)
const hits: number[] = []
let held = 0
for (let i = 0; i < CHECKS; i++) {
  const address = addresses[(i * 7919) % USERS] as string
  const start = performance.now()
  if (await app.entitlements.has(address, SKU)) held++
  hits.push(performance.now() - start)
}
// Many checks in one timing: the per-call cost without the clock's own.
const batch = 100_000
const batchStart = performance.now()
for (let i = 0; i < batch; i++) await app.entitlements.has(addresses[i % USERS] as string, SKU)
const batchMeanMs = (performance.now() - batchStart) / batch

// A grant or a revocation drops the user's entry: the next check reads the database.
const misses: number[] = []
for (let i = 0; i < MISSES; i++) {
  const address = addresses[(i * 31) % USERS] as string
  if (i % 2 === 0) await app.entitlements.grant(address, `extra-${i}`)
  else await app.entitlements.revoke(address, SKU, 'bench')
  const start = performance.now()
  await app.entitlements.has(address, SKU)
  misses.push(performance.now() - start)
}

// One signed-in user, as the host signs in: the route without the check and with it, alternating.
const challenge = JSON.parse((await app.inject({ method: 'POST', url: '/api/auth/challenge' })).body).data.challenge as string
const key = testKey('bench buyer')
const session = JSON.parse((await app.inject({ method: 'POST', url: '/api/auth/session', payload: { signature: sdkSign(challenge, APP_ID, { key, issued: Date.now() }) } })).body).data
await app.entitlements.grant(session.address, SKU)
const headers = { authorization: `Bearer ${session.token as string}` }
const routes = { plain: [] as number[], premium: [] as number[] }
for (let i = 0; i < REQUESTS; i++) {
  for (const name of (i % 2 === 0 ? ['plain', 'premium'] : ['premium', 'plain']) as Array<'plain' | 'premium'>) {
    const start = performance.now()
    const answer = await app.inject({ method: 'GET', url: `/bench/${name}`, headers })
    routes[name].push(performance.now() - start)
    if (answer.statusCode !== 200) throw new Error(`/bench/${name} answered ${answer.statusCode}`)
  }
}
// The first tenth warms the JIT: not counted.
const plain = quantiles(routes.plain.slice(REQUESTS / 10))
const premium = quantiles(routes.premium.slice(REQUESTS / 10))
const hit = quantiles(hits)
const miss = quantiles(misses)

await app.close()
await node.close()
rmSync(dataDir, { recursive: true, force: true })

const rows = [
  ['`has`, cached (one timing per call)', us(hit.p50), us(hit.p99), us(hit.mean)],
  [`\`has\`, cached (${batch} calls in one timing)`, '', '', us(batchMeanMs)],
  ['`has` after a grant or a revocation (a database read)', us(miss.p50), us(miss.p99), us(miss.mean)],
  ['signed-in route, no check (`inject`)', us(plain.p50), us(plain.p99), us(plain.mean)],
  ['signed-in route with `has` (`inject`)', us(premium.p50), us(premium.p99), us(premium.mean)],
  ['**the check\'s cost to the route** (difference)', us(premium.p50 - plain.p50), '', us(premium.mean - plain.mean)],
]
const text = [
  `Written by \`npm run bench:entitlements\` (Node ${process.version}, ${new Date().toISOString().slice(0, 10)}): the embedded database, ${USERS} users of whom ${USERS / 2} hold the SKU (${held} of ${CHECKS} checks held), every user checked once before (the cache holds them all: ENTITLEMENTS_CACHE_TTL_MS=3600000, longer than the run), ${CHECKS} cached checks timed one by one; ${MISSES} checks right after a grant or revocation for the user; ${REQUESTS} requests to each route, alternating, the first tenth not counted. Microseconds.`,
  '',
  '| What | p50 µs | p99 µs | mean µs |',
  '|---|---|---|---|',
  ...rows.map(row => `| ${row.join(' | ')} |`),
].join('\n')
console.log(text)
writeResultsSection('entitlements', '### Entitlements (issue #36)', text)
