/**
 * `npm run bench:overload`: the service in front of two emulated nodes that each serve 4 calls at
 * once and queue 16 more, as a public node does (issue #16). Every request is a new search, so
 * nothing is cached and each one needs a node. Arrivals are random (Poisson), at a fixed rate
 * whatever the answers do, as real clients arrive: half the nodes' capacity, then four times it.
 * For each phase: goodput against the nodes' capacity, latency of the answers and of the
 * refusals (503), answers later than the deadline, and whether a node ever refused a call
 * (`Work queue depth exceeded`).
 * Writes its table into bench/results.md, between the overload markers of the Findings part.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { createEmulator, type Emulator } from '../devnode/server.js'
import { metricSum, startService, stop } from './harness.js'

const DURATION_S = Number(process.env.BENCH_OVERLOAD_DURATION_S ?? 30)
const NODES = 2
const THREADS = 4
const DEPTH = 16
const SERVICE_MS = 100
const DEADLINE_MS = 5000
/** Calls per second the nodes serve together. */
const CAPACITY = NODES * THREADS * 1000 / SERVICE_MS
const PHASES = [{ name: 'half load', factor: 0.5 }, { name: '4× overload', factor: 4 }]

interface Outcome {
  status: number
  /** When it was scheduled, from the start of the phase. */
  at: number
  /** From the request's scheduled arrival: a late send counts against the service, not for it. */
  ms: number
}

/** Offers `rate` requests per second, at random (exponential gaps), for `durationS`; resolves with every outcome. */
async function offer (port: number, rate: number, durationS: number, tag: string): Promise<Outcome[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity })
  const outcomes: Outcome[] = []
  const pending: Array<Promise<void>> = []
  let n = 0
  const start = performance.now()
  const send = (scheduled: number): Promise<void> => new Promise(resolve => {
    const path = `/api/search?keyword=${tag}${n++}&pageSize=1`
    const done = (status: number): void => {
      outcomes.push({ status, at: scheduled - start, ms: performance.now() - scheduled })
      resolve()
    }
    request({ host: '127.0.0.1', port, path, agent }, response => {
      response.resume()
      response.on('end', () => done(response.statusCode ?? 0))
      response.on('error', () => done(0))
    }).on('error', () => done(0)).end()
  })
  const end = start + durationS * 1000
  let next = start
  await new Promise<void>(resolve => {
    const tick = (): void => {
      const now = performance.now()
      while (next <= now && next < end) {
        pending.push(send(next))
        next += -Math.log(1 - Math.random()) * 1000 / rate
      }
      if (next >= end) return resolve()
      setTimeout(tick, Math.min(5, next - now))
    }
    tick()
  })
  await Promise.all(pending)
  agent.destroy()
  return outcomes
}

function percentile (values: number[], p: number): number {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number
}

const round = (value: number, digits = 1): string => Number.isFinite(value) ? value.toFixed(digits) : '–'

execFileSync('npm', ['run', 'build'], { stdio: 'inherit' })
const nodes: Emulator[] = await Promise.all(Array.from({ length: NODES }, () => createEmulator({ latencyMs: SERVICE_MS, workQueue: { threads: THREADS, depth: DEPTH } })))
const service = await startService({
  POCKETNET_NODES: nodes.map(node => node.url).join(','),
  LOG_LEVEL: 'error',
  CACHE_TTL_SEARCH_MS: '0',
  RATE_LIMIT_MAX: '1000000000',
  RPC_DEADLINE_MS: String(DEADLINE_MS),
})
const base = `http://127.0.0.1:${service.port}`

interface PhaseResult {
  name: string
  offered: number
  goodput: number
  okP50: number
  okP99: number
  /** Of the answers to requests that arrived after the first second. */
  okP99Steady: number
  shed: number
  shedP50: number
  shedP99: number
  other: number
  late: number
  nodeRefusals: number
  maxActive: number
  maxWaiting: number
}
const results: PhaseResult[] = []
try {
  for (const [index, phase] of PHASES.entries()) {
    for (const node of nodes) node.resetWorkQueueStats()
    const rate = CAPACITY * phase.factor
    const outcomes = await offer(service.port, rate, DURATION_S, `p${index}x`)
    const ok = outcomes.filter(outcome => outcome.status === 200).map(outcome => outcome.ms)
    const shed = outcomes.filter(outcome => outcome.status === 503).map(outcome => outcome.ms)
    const queues = nodes.map(node => node.workQueue())
    results.push({
      name: phase.name,
      offered: outcomes.length / DURATION_S,
      goodput: ok.length / DURATION_S,
      okP50: percentile(ok, 0.5),
      okP99: percentile(ok, 0.99),
      okP99Steady: percentile(outcomes.filter(outcome => outcome.status === 200 && outcome.at > 1000).map(outcome => outcome.ms), 0.99),
      shed: shed.length,
      shedP50: percentile(shed, 0.5),
      shedP99: percentile(shed, 0.99),
      other: outcomes.length - ok.length - shed.length,
      late: outcomes.filter(outcome => outcome.ms > DEADLINE_MS).length,
      nodeRefusals: queues.reduce((sum, queue) => sum + queue.rejected, 0),
      maxActive: Math.max(...queues.map(queue => queue.maxActive)),
      maxWaiting: Math.max(...queues.map(queue => queue.maxWaiting)),
    })
    console.log(results.at(-1))
    // The queues empty and the sustained-overload rule lapses before the next phase.
    await new Promise(resolve => setTimeout(resolve, 3000))
  }
} finally {
  const shedCalls = await metricSum(base, 'pocketnet_shed_calls_total').catch(() => NaN)
  console.log(`pocketnet_shed_calls_total ${shedCalls}`)
  await stop(service.child)
  await Promise.all(nodes.map(node => node.close()))
}

const [half, over] = results as [PhaseResult, PhaseResult]
const rows = results.map(phase => `| ${phase.name} | ${round(phase.offered)} | ${round(phase.goodput)} | ${round(phase.goodput / CAPACITY * 100, 0)} % | ${round(phase.okP50, 0)} | ${round(phase.okP99, 0)} | ${phase.shed} | ${round(phase.shedP50)} | ${round(phase.shedP99)} | ${phase.other} | ${phase.late} | ${phase.nodeRefusals} |`)
const table = `<!-- overload:start -->
Written by \`npm run bench:overload\` (Node ${process.version}, ${new Date().toISOString().slice(0, 10)}): ${NODES} emulated nodes, each with ${THREADS} threads, a queue of ${DEPTH} and ${SERVICE_MS} ms per call, so ${CAPACITY} calls/s together; every request a new search (nothing cached); arrivals at random (Poisson) at a fixed rate for ${DURATION_S} s per phase; deadline ${DEADLINE_MS} ms; latencies from each request's scheduled arrival, on the load generator.

| Phase | offered req/s | goodput req/s | of capacity | 200 p50 ms | 200 p99 ms | 503s | 503 p50 ms | 503 p99 ms | other statuses | later than the deadline | node refusals |
|---|---|---|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}

Targets (issue #16), at 4× overload: goodput ≥ 90 % of capacity: **${round(over.goodput / CAPACITY * 100, 0)} %**; p99 of successful answers ≤ 2× their p99 at half load: **${round(over.okP99 / half.okP99, 2)}×** (${round(over.okP99, 0)} ms against ${round(half.okP99, 0)} ms); 503 p99 ≤ 20 ms: **${round(over.shedP99)} ms**; answers later than the deadline: **${over.late}**; calls a node refused (\`Work queue depth exceeded\`): **${over.nodeRefusals}**, most calls a node held: ${over.maxActive} at work on its ${THREADS} threads and ${over.maxWaiting} waiting in its queue of ${DEPTH}.
<!-- overload:end -->`
console.log(table)

const resultsFile = new URL('./results.md', import.meta.url)
const text = readFileSync(resultsFile, 'utf8')
const marked = /<!-- overload:start -->[\s\S]*<!-- overload:end -->/
writeFileSync(resultsFile, marked.test(text)
  ? text.replace(marked, table)
  : `${text.trimEnd()}\n\n### Overload (issue #16)\n\n${table}\n`)
