/**
 * `npm run bench`: the built service against the node emulator (20 ms upstream latency), loaded
 * by wrk from its own process, with a bare node:http server measured in the same run as the
 * limit. Scenarios (50 connections each, see bench/README.md):
 *   a  one hot search key
 *   b  Zipf(1.1) over 500 keywords, pages 0–2
 *   a′ a again, on a service started without the V8 flag that keeps nextTick's hidden classes
 *      (--retain-maps-for-n-gc): what that flag of the start script is worth
 *   c  a new keyword every request (the cache cannot help): 60 s on a fresh service for its
 *      memory, then in rounds beside the emulator alone (c₀) and a bare node:http proxy (c₁),
 *      so that the latency each adds is read within a round
 * and the time from `node` to listening (startup.ts). Writes bench/results.md.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CONNECTIONS, CPUS, START_ARGS, assertWrk, getOnce, metricSum, peakRssMb, startChild, startService, stop, withCpu, wrk, type Measured } from './harness.js'
import { measureStartup } from './startup.js'
import { zipfSearchPaths } from './zipf.js'

/** a, b and the limit are measured in rounds, one after the other, each round giving its own ratios. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5)
const COLD_DURATION_S = Number(process.env.BENCH_COLD_DURATION_S ?? 60)
const WARMUP_S = 2
/** Where the hand-written part of results.md starts. */
const FINDINGS = '## Findings'
const UPSTREAM_LATENCY_MS = 20
const ZIPF_DRAWS = 100_000

assertWrk()
execFileSync('npm', ['run', 'build'], { stdio: 'inherit' })
const work = mkdtempSync(join(tmpdir(), 'bench-'))

const zipfPaths = join(work, 'zipf-paths.txt')
writeFileSync(zipfPaths, zipfSearchPaths(ZIPF_DRAWS).join('\n'))

// Without the node's work queue: these scenarios measure the service, not a saturated node (bench/overload.ts does that).
const emulator = await startChild('devnode/cli.ts', [], { DEVNODE_PORT: '0', DEVNODE_LATENCY_MS: String(UPSTREAM_LATENCY_MS), DEVNODE_WORK_QUEUE: 'off' }, 'load')
const emulatorUrl = `http://127.0.0.1:${emulator.port}`
const SERVICE_ENV = {
  POCKETNET_NODES: emulatorUrl,
  LOG_LEVEL: 'warn',
  NODE_ENV: 'production',
  // One emulator stands for the whole network here: enough connections that it is not a queue.
  POCKETNET_CONNECTIONS_PER_NODE: '128',
  // The emulator here serves any number at once: a fixed limit, no adaptation to measure.
  POCKETNET_NODE_THREADS: '128',
  RATE_LIMIT_MAX: '1000000000',
}
const startup = await measureStartup(SERVICE_ENV)
let service = await startService(SERVICE_ENV)
let base = `http://127.0.0.1:${service.port}`
const RETAIN_FLAG = '--retain-maps-for-n-gc'
const withoutRetain = await startService(SERVICE_ENV, START_ARGS.filter(arg => !arg.startsWith(RETAIN_FLAG)))
const withoutRetainBase = `http://127.0.0.1:${withoutRetain.port}`
const hotPath = '/api/search?keyword=bitcoin&page=0&pageSize=20'
const sample = (await getOnce(base + hotPath)).body
const bodyBytes = sample.byteLength
const bodyFile = join(work, 'body.json')
writeFileSync(bodyFile, sample)
const baseline = await startChild('bench/baseline-server.ts', [bodyFile], {})

const upstreamSearches = (): Promise<number> => metricSum(base, 'pocketnet_upstream_attempts_total', 'method="search"')

/** A scenario on the service, with the upstream calls it caused per 1000 requests. */
async function onService (name: string, url: string, durationS: number, script?: string, args: string[] = []): Promise<Measured> {
  const before = await upstreamSearches()
  const measured = await withCpu(service.child.pid, () => wrk(name, url, durationS, script, args))
  measured.upstreamPer1000 = ((await upstreamSearches()) - before) / measured.total * 1000
  return measured
}

/**
 * The service's own share of a cold request, from its metrics: mean request duration minus the
 * mean upstream attempt, both measured inside the service.
 */
async function addedInsideService (url: string): Promise<number> {
  const mean = async (name: string, label: string): Promise<number> =>
    (await metricSum(url, `${name}_sum`, label)) / (await metricSum(url, `${name}_count`, label))
  return (await mean('http_request_duration_seconds', 'route="/api/search"') - await mean('pocketnet_upstream_attempt_duration_seconds', 'method="search"')) * 1000
}

/** One row for several rounds: requests/s averaged, latencies the rounds' medians, counts summed. */
function combined (rounds: Measured[]): Measured {
  const total = rounds.reduce((sum, m) => sum + m.total, 0)
  const perRequest = (field: 'upstreamPer1000' | 'cpuUsPerRequest'): number | undefined => rounds.every(m => m[field] !== undefined)
    ? rounds.reduce((sum, m) => sum + (m[field] as number) * m.total, 0) / total
    : undefined
  const upstream = perRequest('upstreamPer1000')
  const cpu = perRequest('cpuUsPerRequest')
  return {
    name: (rounds[0] as Measured).name,
    requestsPerSecond: Math.round(rounds.reduce((sum, m) => sum + m.requestsPerSecond, 0) / rounds.length),
    p50: median(rounds.map(m => m.p50)),
    p99: median(rounds.map(m => m.p99)),
    total,
    errors: rounds.reduce((sum, m) => sum + m.errors, 0),
    ...(upstream === undefined ? {} : { upstreamPer1000: upstream }),
    ...(cpu === undefined ? {} : { cpuUsPerRequest: cpu }),
  }
}

function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle] as number : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
}

const results: Measured[] = []
/** Per round, the limit, a, b and a′. */
const rounds: Array<[Measured, Measured, Measured, Measured]> = []
/** Per round, c₀, c₁ and c. */
const coldRounds: Array<[Measured, Measured, Measured]> = []
let coldStart: Measured | undefined
let serviceSide = Number.NaN
try {
  const limitUrl = `http://127.0.0.1:${baseline.port}/`
  wrk('warm-up', limitUrl, WARMUP_S)
  wrk('warm-up', base + hotPath, WARMUP_S)
  wrk('warm-up', base, WARMUP_S, 'paths.lua', [zipfPaths])
  wrk('warm-up', withoutRetainBase + hotPath, WARMUP_S)
  // The machine's speed drifts (it is shared): the limit is measured again beside a and b in
  // every round, and the ratios are taken within each round.
  for (let round = 0; round < ROUNDS; round++) {
    rounds.push([
      await withCpu(baseline.child.pid, () => wrk('limit: bare node:http', limitUrl, DURATION_S)),
      await onService('a: one hot search key', base + hotPath, DURATION_S),
      await onService('b: Zipf(1.1) over 500 keywords, pages 0–2', base, DURATION_S, 'paths.lua', [zipfPaths]),
      await withCpu(withoutRetain.child.pid, () => wrk(`a′: a, on a service started without ${RETAIN_FLAG}`, withoutRetainBase + hotPath, DURATION_S)),
    ])
  }
  for (const scenario of [0, 1, 2, 3] as const) results.push(combined(rounds.map(round => round[scenario])))
  await stop(withoutRetain.child)

  // A fresh service for c, so that its peak memory is the cold path's, not a and b's cached answers.
  await stop(service.child)
  service = await startService(SERVICE_ENV)
  base = `http://127.0.0.1:${service.port}`
  coldStart = await onService(`c: the same, its first ${COLD_DURATION_S} s on a fresh service`, base, COLD_DURATION_S, 'unique-search.lua')
  coldStart.peakRssMb = peakRssMb(service.child.pid as number)

  // The latency c adds is a difference of two p50s: both are measured in the same round, as the
  // shares of a and b are, or the machine's drift between them would be most of the figure.
  const proxy = await startChild('bench/bare-proxy.ts', [emulatorUrl], {})
  try {
    const proxyUrl = `http://127.0.0.1:${proxy.port}`
    wrk('warm-up', proxyUrl, WARMUP_S, 'unique-search.lua')
    for (let round = 0; round < ROUNDS; round++) {
      coldRounds.push([
        await withCpu(emulator.child.pid, () => wrk('c₀: the emulator alone, a new keyword each time', `${emulatorUrl}/public/`, DURATION_S, 'unique-rpc.lua')),
        await withCpu(proxy.child.pid, () => wrk('c₁: a bare node:http proxy, a new keyword each time', proxyUrl, DURATION_S, 'unique-search.lua')),
        await onService('c: a new keyword every request', base, DURATION_S, 'unique-search.lua'),
      ])
    }
  } finally {
    await stop(proxy.child)
  }
  for (const scenario of [0, 1, 2] as const) results.push(combined(coldRounds.map(round => round[scenario])))
  serviceSide = await addedInsideService(base)
} finally {
  await stop(service.child)
  await stop(withoutRetain.child)
  await stop(baseline.child)
  await stop(emulator.child)
}

const [limit, hot, zipf, hotWithoutRetain, upstream, bareProxy, cold] = results as [Measured, Measured, Measured, Measured, Measured, Measured, Measured]
const percent = (ratio: number): string => `${Math.round(ratio * 100)} %`
/** The median over rounds of the scenario's requests/s over the limit's in the same round. */
const shareOf = (scenario: 1 | 2 | 3): number => median(rounds.map(round => round[scenario].requestsPerSecond / round[0].requestsPerSecond))
const share = (m: Measured): string => m === hot ? percent(shareOf(1)) : m === zipf ? percent(shareOf(2)) : m === hotWithoutRetain ? percent(shareOf(3)) : percent(m.requestsPerSecond / limit.requestsPerSecond)
const perRound = rounds.map(([l, a, b]) => `${l.requestsPerSecond}/${a.requestsPerSecond}/${b.requestsPerSecond} (${percent(a.requestsPerSecond / l.requestsPerSecond)}, ${percent(b.requestsPerSecond / l.requestsPerSecond)})`).join('; ')
const ms = (value: number): string => value.toFixed(2)
const cpu = (m: Measured): string => m.cpuUsPerRequest === undefined ? '' : String(Math.round(m.cpuUsPerRequest))
const row = (m: Measured, ofLimit: string): string =>
  `| ${m.name} | ${m.requestsPerSecond} | ${ms(m.p50)} | ${ms(m.p99)} | ${m.upstreamPer1000 === undefined ? '' : m.upstreamPer1000.toFixed(1)} | ${m.peakRssMb ?? ''} | ${cpu(m)} | ${ofLimit} | ${m.errors} |`
/** The limit's CPU time per request over the scenario's: the share it would have on CPU time alone. */
const cpuShare = (m: Measured): string => limit.cpuUsPerRequest !== undefined && m.cpuUsPerRequest !== undefined ? percent(limit.cpuUsPerRequest / m.cpuUsPerRequest) : 'n/a'
const first = coldStart as Measured
/** The median over rounds of a cold scenario's p50 minus the emulator's in the same round. */
const addedOver = (scenario: 1 | 2): number => median(coldRounds.map(round => round[scenario].p50 - round[0].p50))
const perColdRound = coldRounds.map(([c0, c1, c]) => `${ms(c0.p50)}/${ms(c1.p50)}/${ms(c.p50)}`).join('; ')
const placement = CPUS
  ? `the service (and the bare server) alone on CPU ${CPUS.server}; wrk and the emulator, each in its own process, on CPU ${CPUS.load}`
  : 'one CPU shared by all (no pinning)'
const report = `# Benchmark results

Node ${process.version}, ${new Date().toISOString().slice(0, 10)}, wrk, ${CONNECTIONS} connections; limit, a and b in ${ROUNDS} rounds of ${DURATION_S} s each (after a ${WARMUP_S} s warm-up each), c ${COLD_DURATION_S} s on a fresh service, then c₀, c₁ and c in ${ROUNDS} rounds of ${DURATION_S} s each, upstream latency ${UPSTREAM_LATENCY_MS} ms, response body ${bodyBytes} bytes; ${placement}. Command: \`npm run bench\`.

| Scenario | req/s | p50 ms | p99 ms | upstream calls / 1000 req | peak RSS MB | CPU µs / req | share of the limit | errors |
|---|---|---|---|---|---|---|---|---|
${row(limit, '100 %')}
${row(hot, share(hot))}
${row(zipf, share(zipf))}
${row(hotWithoutRetain, share(hotWithoutRetain))}
${row(upstream, '')}
${row(bareProxy, '')}
${row(cold, share(cold))}
${row(first, share(first))}

Requests/s and shares are averages and medians over the rounds; per round, limit/a/b requests/s (a's and b's shares): ${perRound}; c₀/c₁/c p50 ms: ${perColdRound}.

Start flags: a′ is a on a second service, started like the first but without \`${RETAIN_FLAG}\`. Its CPU µs per request over a's, per round: ${rounds.map(round => (round[3].cpuUsPerRequest ?? Number.NaN) / (round[1].cpuUsPerRequest ?? Number.NaN)).map(ratio => ratio.toFixed(2)).join(', ')} (median **${median(rounds.map(round => (round[3].cpuUsPerRequest ?? Number.NaN) / (round[1].cpuUsPerRequest ?? Number.NaN))).toFixed(2)}×**).

Start-up (\`node ${START_ARGS.join(' ')}\` until it logs that it listens; target under 2 s): alone, ${startup.alone.map(ms => Math.round(ms)).join(', ')} ms; ${startup.sideBySide.length} started side by side, ${startup.sideBySide.map(ms => Math.round(ms)).join(', ')} ms.

CPU µs / req is the server process's CPU time (user + system) over the requests it answered. Time the hypervisor gave to other machines is not in it, so on a shared machine it is steadier than requests/s. The share of the limit measured that way (the limit's CPU time per request over the scenario's: the requests/s it would reach on the same CPU time): a **${cpuShare(hot)}**, b **${cpuShare(zipf)}**; c ${cpuShare(cold)}, against ${cpuShare(bareProxy)} for the bare proxy.

Targets (issue #4): a ≥ 70 % of the limit: **${share(hot)}**; b ≥ 50 %: **${share(zipf)}**; c adds ≤ 1 ms to the upstream's p50: **${ms(addedOver(2))} ms** (median over the rounds of the service's p50 − the emulator's under the same load), of which **${ms(serviceSide)} ms** inside the service (mean request time − mean upstream attempt, from its own metrics); for comparison, a bare node:http proxy adds **${ms(addedOver(1))} ms** (c₁ − c₀), so the service adds **${ms(addedOver(2) - addedOver(1))} ms** more than it; c peak RSS < 200 MB: **${first.peakRssMb} MB** (a fresh service after ${COLD_DURATION_S} s of c).
`
// The findings below the generated part are kept: they are written by hand, run after run.
const resultsFile = new URL('./results.md', import.meta.url)
const previous = existsSync(resultsFile) ? readFileSync(resultsFile, 'utf8') : ''
const findings = previous.includes(FINDINGS) ? previous.slice(previous.indexOf(FINDINGS)) : ''
writeFileSync(resultsFile, findings === '' ? report : `${report}\n${findings}`)
console.log(report)
