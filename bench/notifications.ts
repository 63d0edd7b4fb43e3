/**
 * `npm run bench:notifications`: issue #37's benchmark, in one run. The built service as `npm
 * start` runs it (on the server CPU), notifications on, its embedded database in a temporary
 * DATA_DIR with BENCH_NOTIFY_USERS (10,000) users opted in; the node emulator and the Bastyon
 * proxy emulator (holding a token for each user) on the load CPU, the proxy in a process of its
 * own (bench/proxy-process.ts): in this one, its work would delay autocannon's loop and be
 * counted as the API's latency.
 *
 * In BENCH_NOTIFY_ROUNDS (3) rounds, each in both orders over the rounds: BENCH_NOTIFY_PHASE_S
 * (20) seconds of the cached API (`GET /api/nodeinfo`, answered from the cache) at a fixed
 * BENCH_NOTIFY_API_RATE (1,000) requests a second, alone; then the same while operators send
 * BENCH_NOTIFY_PER_MINUTE (10,000) notifications a minute through `POST /api/admin/notifications`
 * (a send each second to that second's share of the users, each user at most once a minute), which
 * the service's outbox pushes to the proxy emulator. The API's p50 and p99 with notifications over
 * those without, per round (the ratio, in one run, is what a noisy machine can still tell), and the
 * pushes: how many reached the proxy within the phase and how long the last one waited after it.
 * Writes its table into bench/results.md, between the notifications markers.
 */
import { execFileSync, fork } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import bs58check from 'bs58check'
import { createEmulator } from '../devnode/server.js'
import { openDatabase } from '../src/db/open-database.js'
import { copyTemplateTo } from '../scripts/pglite-template.js'
import { CPUS, cpuMicros, cpuSeconds, startService, stop } from './harness.js'
import type { ProxyProcessCount, ProxyProcessSetup } from './proxy-process.js'
import { writeResultsSection } from './results-file.js'

const USERS = Number(process.env.BENCH_NOTIFY_USERS ?? 10_000)
const ROUNDS = Number(process.env.BENCH_NOTIFY_ROUNDS ?? 3)
const PHASE_S = Number(process.env.BENCH_NOTIFY_PHASE_S ?? 20)
const API_RATE = Number(process.env.BENCH_NOTIFY_API_RATE ?? 1000)
const PER_MINUTE = Number(process.env.BENCH_NOTIFY_PER_MINUTE ?? 10_000)
const APP_ID = 'bench.notify.app'
const ADMIN_TOKEN = 'bench-admin-token-of-at-least-32-characters'
/** The longest the benchmark waits for the pushes of a phase after it ended. */
const DRAIN_LIMIT_MS = 120_000

if (CPUS) execFileSync('taskset', ['-a', '-p', '-c', CPUS.load, String(process.pid)], { stdio: 'ignore' })
execFileSync('npm', ['run', 'build'], { stdio: 'inherit' })

/** Mainnet addresses with a valid checksum, quick to make by the thousand (no keys: nobody signs here). */
const addresses = Array.from({ length: USERS }, (_, i) => {
  const hash = Buffer.alloc(20)
  hash.writeUInt32BE(i + 1)
  hash.write('bench-notify', 4)
  return bs58check.encode(Uint8Array.from([0x37, ...hash]))
})

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
  const proxy = await startProxyProcess({ apps: { [APP_ID]: { name: 'Bench', scope: 'bench.pocketnet.app' } }, tokens: addresses.map(address => [APP_ID, address]) })
  cleanups.push(() => proxy.close())

  const dataDir = mkdtempSync(join(tmpdir(), 'bench-notify-'))
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }))
  await copyTemplateTo(dataDir)
  const db = await openDatabase({ dataDir })
  await db.query("INSERT INTO notification_channels (address, channel, target, created_at_ms) SELECT a, 'bastyon', $2, 0 FROM unnest($1::text[]) a", [addresses, proxy.url])
  await db.close()

  const { child, port } = await startService({
    LOG_LEVEL: 'warn',
    POCKETNET_NODES: node.url,
    BASTYON_APP_ID: APP_ID,
    DATA_DIR: dataDir,
    DATABASE_URL: '',
    EVENTS_INGEST: 'false',
    RATE_LIMIT_MAX: '100000000',
    MAX_EVENT_LOOP_DELAY_MS: '0',
    NOTIFY_BASTYON_PROXIES: proxy.url,
    NOTIFY_APP_DAILY_LIMIT: '1000000000',
    ADMIN_TOKEN,
  })
  cleanups.push(() => stop(child))
  const base = `http://127.0.0.1:${port}`
  // The cached API's answer in the cache, the database open and the push sender started.
  await fetch(`${base}/api/nodeinfo`)
  await sendTo([addresses[0] as string], 'bench-warm-up')

  let nextUser = 1
  const rows: Array<{ round: number, quiet: Phase, busy: Phase, offered: number, pushedInPhase: number, drainMs: number }> = []
  for (let round = 1; round <= ROUNDS; round++) {
    const order = round % 2 === 1 ? ['quiet', 'busy'] as const : ['busy', 'quiet'] as const
    const phases: Partial<Record<'quiet' | 'busy', Phase>> = {}
    let offered = 0
    let pushedInPhase = 0
    let drainMs = 0
    for (const kind of order) {
      if (kind === 'quiet') {
        phases.quiet = await apiPhase(base, child.pid as number)
        continue
      }
      const pushesBefore = (await proxy.count()).pushes
      const sender = sendEverySecond(round, () => {
        const share = Math.round(PER_MINUTE / 60)
        const to = Array.from({ length: share }, () => addresses[(nextUser++) % USERS] as string)
        offered += to.length
        return to
      })
      phases.busy = await apiPhase(base, child.pid as number)
      const ended = performance.now()
      await sender.stop()
      pushedInPhase = (await proxy.count()).pushes - pushesBefore
      // What the phase sent is pushed before the next phase starts: its time is the outbox's lag.
      let pushed = pushedInPhase
      while (pushed < offered && performance.now() - ended < DRAIN_LIMIT_MS) {
        await new Promise(resolve => setTimeout(resolve, 50))
        pushed = (await proxy.count()).pushes - pushesBefore
      }
      drainMs = performance.now() - ended
      if (pushed < offered) throw new Error(`round ${round}: ${pushed} of ${offered} notifications pushed ${DRAIN_LIMIT_MS / 1000} s after the phase`)
    }
    rows.push({ round, quiet: phases.quiet as Phase, busy: phases.busy as Phase, offered, pushedInPhase, drainMs })
    console.log(`round ${round}: API p99 ${rows.at(-1)?.quiet.p99} ms alone, ${rows.at(-1)?.busy.p99} ms with ${offered} notifications (${pushedInPhase} pushed in the phase)`)
  }
  const { duplicates } = await proxy.count()
  const cpu = cpuSeconds().get(`cpu${CPUS?.server ?? ''}`)
  writeResults(rows, { startLoad, duplicates, stolen: cpu === undefined ? undefined : cpu.steal / Math.max(1, cpu.total) })

  async function sendTo (to: string[], id: string): Promise<void> {
    const response = await fetch(`${base}/api/admin/notifications`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ to, header: `Order ${id} shipped`, path: '/orders', id }),
    })
    if (response.status !== 200) throw new Error(`a send answered ${response.status}: ${await response.text()}`)
    const { data } = await response.json() as { data: { results: Array<{ status: string }> } }
    const refused = data.results.filter(result => result.status !== 'sent' && result.status !== 'queued')
    if (refused.length > 0) throw new Error(`a send refused ${refused.length} recipients: ${refused[0]?.status}`)
  }

  /** One send a second, each to `next()`'s recipients, until stopped; stop() waits for the sends in flight. */
  function sendEverySecond (round: number, next: () => string[]): { stop: () => Promise<void> } {
    const inFlight = new Set<Promise<void>>()
    let failure: unknown
    let second = 0
    const tick = (): void => {
      const sent: Promise<void> = sendTo(next(), `bench-${round}-${second++}`)
        .catch((error: unknown) => { failure ??= error })
        .finally(() => { inFlight.delete(sent) })
      inFlight.add(sent)
    }
    tick()
    const timer = setInterval(tick, 1000)
    return {
      async stop () {
        clearInterval(timer)
        await Promise.all(inFlight)
        if (failure !== undefined) throw failure
      },
    }
  }
}

/** The proxy emulator in its own process (on the load CPU, as this one): its URL, the pushes it recorded, and a close. */
async function startProxyProcess (setup: ProxyProcessSetup): Promise<{ url: string, count: () => Promise<ProxyProcessCount>, close: () => Promise<void> }> {
  const child = fork(new URL('./proxy-process.ts', import.meta.url), { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  child.send(setup)
  const [{ url }] = await once(child, 'message') as [{ url: string }]
  return {
    url,
    async count () {
      child.send('count')
      const [count] = await once(child, 'message') as [ProxyProcessCount]
      return count
    },
    async close () {
      child.disconnect()
      if (child.exitCode === null) await once(child, 'exit')
    },
  }
}

/** The cached API at a fixed rate for PHASE_S, with the service's CPU time over it. */
async function apiPhase (base: string, pid: number): Promise<Phase> {
  const cpuBefore = cpuMicros(pid)
  const result = await autocannon({ url: `${base}/api/nodeinfo`, connections: 10, duration: PHASE_S, overallRate: API_RATE })
  return {
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    errors: result.errors + result.timeouts + result.non2xx,
    serviceCpuMs: (cpuMicros(pid) - cpuBefore) / 1000,
  }
}

function writeResults (rows: Array<{ round: number, quiet: Phase, busy: Phase, offered: number, pushedInPhase: number, drainMs: number }>, about: { startLoad: string | undefined, duplicates: number, stolen: number | undefined }): void {
  const ms = (value: number): string => value.toFixed(value < 10 ? 2 : 1)
  const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN
  const p99Ratios = rows.map(row => row.busy.p99 / row.quiet.p99)
  const perMinute = rows.map(row => row.pushedInPhase / PHASE_S * 60)
  const text = `Written by \`npm run bench:notifications\` (Node ${process.version}, ${new Date().toISOString().slice(0, 10)}): the built service as \`npm start\` runs it${CPUS ? `, on CPU ${CPUS.server}` : ''}, notifications on, its embedded database in a temporary \`DATA_DIR\` with ${USERS} users opted in; the node emulator in the benchmark's process and the Bastyon proxy emulator (a token for each user) in a process of its own${CPUS ? `, both on CPU ${CPUS.load}` : ''}. Each round: ${PHASE_S} s of \`GET /api/nodeinfo\` (the cached API) at ${API_RATE} requests/s over 10 connections alone, and ${PHASE_S} s of the same while \`POST /api/admin/notifications\` sends ${PER_MINUTE} notifications a minute (${Math.round(PER_MINUTE / 60)} users each second, each user once), the two phases in the other order every other round. Load average at the start ${about.startLoad}${about.stolen === undefined ? '' : `; the server CPU's time stolen by the hypervisor over the run ${(about.stolen * 100).toFixed(0)} %`}.

| Round | API p50 / p99 alone | API p50 / p99 with notifications | p99 ratio | notifications sent / pushed within the phase | the last push after the phase | service CPU over the phase, alone / with |
|---|---|---|---|---|---|---|
${rows.map(row => `| ${row.round} | ${ms(row.quiet.p50)} / ${ms(row.quiet.p99)} ms | ${ms(row.busy.p50)} / ${ms(row.busy.p99)} ms | ${(row.busy.p99 / row.quiet.p99).toFixed(2)} | ${row.offered} / ${row.pushedInPhase} | ${(row.drainMs / 1000).toFixed(1)} s | ${(row.quiet.serviceCpuMs / 1000).toFixed(1)} / ${(row.busy.serviceCpuMs / 1000).toFixed(1)} s |`).join('\n')}

Median over the rounds: the API's p99 with notifications over without **${median(p99Ratios).toFixed(2)}**; pushed within the phase **${Math.round(median(perMinute))} notifications a minute** against ${PER_MINUTE} offered (goal, issue #37: ${PER_MINUTE} a minute through the outbox with the cached API's p99 unchanged). Errors of the API: ${rows.reduce((sum, row) => sum + row.quiet.errors + row.busy.errors, 0)}; pushes of one notification to one user twice: ${about.duplicates}.`
  if (process.env.BENCH_NOTIFY_WRITE === 'false') console.log(text)
  else writeResultsSection('notifications', '### Notifications (issue #37)\n\nCommand: `npm run bench:notifications`.', text)
}
