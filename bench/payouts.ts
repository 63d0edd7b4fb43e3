/**
 * `npm run bench:payouts`: issue #38's benchmark, in one run. The built service as `npm start`
 * runs it (on the server CPU), payouts on from a throwaway hot wallet, its embedded database in a
 * temporary DATA_DIR; the node emulator in this process (on the load CPU), which decodes and
 * checks the signature of every transaction it is sent. The wallet holds BENCH_PAYOUT_COINS (1,000)
 * confirmed outputs, so that no payout waits for another's change.
 *
 * 1. Throughput: BENCH_PAYOUT_BURST (200) payouts through `POST /api/admin/payouts`,
 *    BENCH_PAYOUT_CONCURRENCY (8) at a time: each checked, signed, stored with its outputs under
 *    the wallet's lock, and broadcast before it is answered. Payouts per second, the answers' p50
 *    and p99, and the service's CPU per payout.
 * 2. The API beside payouts: in BENCH_PAYOUT_ROUNDS (3) rounds, each in both orders over the
 *    rounds, BENCH_PAYOUT_PHASE_S (20) s of the cached API (`GET /api/nodeinfo`) at
 *    BENCH_PAYOUT_API_RATE (1,000) requests a second alone, then the same while operators send
 *    BENCH_PAYOUT_RATE (5) payouts a second. The API's p99 with payouts over without, per round
 *    (the ratio, in one run, is what a noisy machine can still tell).
 * Writes its table into bench/results.md, between the payouts markers (BENCH_PAYOUT_WRITE=false: printed only).
 */
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import bs58check from 'bs58check'
import { walletKeyFromWif, WIF_VERSION } from 'pocketnet-client'
import { createEmulator } from '../devnode/server.js'
import { copyTemplateTo } from '../scripts/pglite-template.js'
import { CPUS, cpuMicros, startService, stop } from './harness.js'
import { writeResultsSection } from './results-file.js'

const COINS = Number(process.env.BENCH_PAYOUT_COINS ?? 1000)
const BURST = Number(process.env.BENCH_PAYOUT_BURST ?? 200)
const CONCURRENCY = Number(process.env.BENCH_PAYOUT_CONCURRENCY ?? 8)
const ROUNDS = Number(process.env.BENCH_PAYOUT_ROUNDS ?? 3)
const PHASE_S = Number(process.env.BENCH_PAYOUT_PHASE_S ?? 20)
const API_RATE = Number(process.env.BENCH_PAYOUT_API_RATE ?? 1000)
const RATE = Number(process.env.BENCH_PAYOUT_RATE ?? 5)
const ADMIN_TOKEN = 'bench-admin-token-of-at-least-32-characters'
const PKOIN = 100_000_000

if (CPUS) execFileSync('taskset', ['-a', '-p', '-c', CPUS.load, String(process.pid)], { stdio: 'ignore' })
execFileSync('npm', ['run', 'build'], { stdio: 'inherit' })

const cleanups: Array<() => unknown> = []
try {
  await measure()
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup()
}

interface Phase { p50: number, p99: number, requests: number, errors: number, serviceCpuMs: number }

async function measure (): Promise<void> {
  const startLoad = loadavg()[0]?.toFixed(2)
  const node = await createEmulator({ port: 0 })
  cleanups.push(() => node.close())
  const dir = mkdtempSync(join(tmpdir(), 'bench-payouts-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  const wif = bs58check.encode(Uint8Array.from([WIF_VERSION.main, ...randomBytes(32), 0x01]))
  const keyPath = join(dir, 'wallet.wif')
  writeFileSync(keyPath, wif, { mode: 0o600 })
  const wallet = walletKeyFromWif(wif, 'main').address
  node.addTransaction({ inputs: [{ address: node.dataset.users[0]?.address as string, amount: COINS * PKOIN + PKOIN }], outputs: Array.from({ length: COINS }, () => ({ address: wallet, amount: PKOIN })) })
  node.mineBlock()
  const receivers = node.dataset.users.slice(1, 21).map(user => user.address)
  const dataDir = join(dir, 'data')
  await copyTemplateTo(dataDir)

  const { child, port } = await startService({
    LOG_LEVEL: 'warn',
    POCKETNET_NODES: node.url,
    DATA_DIR: dataDir,
    DATABASE_URL: '',
    EVENTS_INGEST: 'false',
    RATE_LIMIT_MAX: '100000000',
    MAX_EVENT_LOOP_DELAY_MS: '0',
    PAYOUT_KEY_FILE: keyPath,
    PAYOUT_MAX_SAT: '0',
    PAYOUT_DAILY_MAX_SAT: '0',
    PAYOUT_CHECK_INTERVAL_S: '3600',
    ADMIN_TOKEN,
  })
  cleanups.push(() => stop(child))
  const base = `http://127.0.0.1:${port}`
  let serial = 0
  const pay = async (): Promise<number> => {
    const n = serial++
    const started = performance.now()
    const response = await fetch(`${base}/api/admin/payouts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ to: receivers[n % receivers.length], amountSat: 1_000_000 + n, idempotencyKey: `bench-${n}` }),
    })
    const body = await response.json() as { data?: { state: string } }
    if (response.status !== 201 || body.data?.state !== 'broadcast') throw new Error(`payout ${n} answered ${response.status}: ${JSON.stringify(body)}`)
    return performance.now() - started
  }
  await fetch(`${base}/api/nodeinfo`)
  await pay()

  // 1. Throughput.
  const cpuBefore = cpuMicros(child.pid as number)
  const burstStarted = performance.now()
  const latencies: number[] = []
  let started = 0
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (started < BURST) {
      started++
      latencies.push(await pay())
    }
  }))
  const burstS = (performance.now() - burstStarted) / 1000
  const burstCpuMs = (cpuMicros(child.pid as number) - cpuBefore) / 1000
  const sorted = [...latencies].sort((a, b) => a - b)
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN
  const burst = { count: latencies.length, perSecond: latencies.length / burstS, p50: at(0.5), p99: at(0.99), cpuMsEach: burstCpuMs / latencies.length }
  console.log(`burst: ${burst.count} payouts, ${burst.perSecond.toFixed(1)}/s, p50 ${burst.p50.toFixed(1)} ms, p99 ${burst.p99.toFixed(1)} ms, ${burst.cpuMsEach.toFixed(1)} ms CPU each`)

  // 2. The API beside payouts.
  const rows: Array<{ round: number, quiet: Phase, busy: Phase, paid: number }> = []
  for (let round = 1; round <= ROUNDS; round++) {
    const order = round % 2 === 1 ? ['quiet', 'busy'] as const : ['busy', 'quiet'] as const
    const phases: Partial<Record<'quiet' | 'busy', Phase>> = {}
    let paid = 0
    for (const kind of order) {
      if (kind === 'quiet') {
        phases.quiet = await apiPhase(base, child.pid as number)
        continue
      }
      const inFlight = new Set<Promise<unknown>>()
      let failure: unknown
      const timer = setInterval(() => {
        const one: Promise<unknown> = pay().then(() => { paid++ }, (error: unknown) => { failure ??= error }).finally(() => inFlight.delete(one))
        inFlight.add(one)
      }, 1000 / RATE)
      phases.busy = await apiPhase(base, child.pid as number)
      clearInterval(timer)
      await Promise.all(inFlight)
      if (failure !== undefined) throw failure
    }
    rows.push({ round, quiet: phases.quiet as Phase, busy: phases.busy as Phase, paid })
    console.log(`round ${round}: API p99 ${rows.at(-1)?.quiet.p99} ms alone, ${rows.at(-1)?.busy.p99} ms beside ${paid} payouts`)
  }
  const sent = node.callsTo('sendrawtransaction').map(call => (call.params as string[])[0])
  writeResults(burst, rows, { startLoad, broadcasts: sent.length, distinct: new Set(sent).size, payouts: serial })
}

async function apiPhase (base: string, pid: number): Promise<Phase> {
  const cpuBefore = cpuMicros(pid)
  const result = await autocannon({ url: `${base}/api/nodeinfo`, connections: 10, duration: PHASE_S, overallRate: API_RATE })
  return { p50: result.latency.p50, p99: result.latency.p99, requests: result.requests.total, errors: result.errors + result.timeouts + result.non2xx, serviceCpuMs: (cpuMicros(pid) - cpuBefore) / 1000 }
}

function writeResults (burst: { count: number, perSecond: number, p50: number, p99: number, cpuMsEach: number }, rows: Array<{ round: number, quiet: Phase, busy: Phase, paid: number }>, about: { startLoad: string | undefined, broadcasts: number, distinct: number, payouts: number }): void {
  const ms = (value: number): string => value.toFixed(value < 10 ? 2 : 1)
  const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN
  const text = `Written by \`npm run bench:payouts\` (Node ${process.version}, ${new Date().toISOString().slice(0, 10)}): the built service as \`npm start\` runs it${CPUS ? `, on CPU ${CPUS.server}` : ''}, payouts on from a throwaway hot wallet of ${COINS} confirmed outputs, its embedded database in a temporary \`DATA_DIR\`; the node emulator (which decodes every transaction and checks its signatures) in the benchmark's process${CPUS ? ` on CPU ${CPUS.load}` : ''}. Load average at the start ${about.startLoad}.

**Throughput**: ${burst.count} payouts through \`POST /api/admin/payouts\`, ${CONCURRENCY} at a time, each read the wallet's outputs (\`txunspent\`), signed, stored and broadcast before its answer: **${burst.perSecond.toFixed(1)} payouts a second**, answers p50 ${ms(burst.p50)} ms, p99 ${ms(burst.p99)} ms; the service's CPU ${burst.cpuMsEach.toFixed(1)} ms a payout.

| Round | API p50 / p99 alone | API p50 / p99 beside payouts | p99 ratio | payouts in the phase | service CPU over the phase, alone / with |
|---|---|---|---|---|---|
${rows.map(row => `| ${row.round} | ${ms(row.quiet.p50)} / ${ms(row.quiet.p99)} ms | ${ms(row.busy.p50)} / ${ms(row.busy.p99)} ms | ${(row.busy.p99 / row.quiet.p99).toFixed(2)} | ${row.paid} | ${(row.quiet.serviceCpuMs / 1000).toFixed(1)} / ${(row.busy.serviceCpuMs / 1000).toFixed(1)} s |`).join('\n')}

Each round: ${PHASE_S} s of \`GET /api/nodeinfo\` (the cached API) at ${API_RATE} requests/s over 10 connections alone, and ${PHASE_S} s of the same beside ${RATE} payouts a second, the two phases in the other order every other round. Median over the rounds of the API's p99 beside payouts over alone: **${median(rows.map(row => row.busy.p99 / row.quiet.p99)).toFixed(2)}**. Errors of the API: ${rows.reduce((sum, row) => sum + row.quiet.errors + row.busy.errors, 0)}. Broadcasts ${about.broadcasts} for ${about.payouts} payouts, ${about.distinct} distinct transactions (one per payout: never a second transaction for one).`
  if (process.env.BENCH_PAYOUT_WRITE === 'false') console.log(text)
  else writeResultsSection('payouts', '### Payouts (issue #38)\n\nCommand: `npm run bench:payouts`.', text)
}
