/**
 * `npm run bench:scale-out`: what a Redis shared by several instances (REDIS_URL) saves and what
 * it costs, the built service against the node emulator (20 ms upstream latency), loaded by wrk:
 *   1  two instances with one Redis against two without: scenario b's Zipf requests dealt out
 *      between them as a round-robin load balancer would (even draws to one, odd ones to the
 *      other), one wrk per instance, both at once; fresh instances and an empty Redis for each
 *      configuration, so that both start cold. Upstream calls per 1000 requests answered.
 *   2  one instance, one hot key, with REDIS_URL and without (and a second one without, the
 *      control), in rounds whose order rotates: requests/s.
 * For every configuration with Redis, its round trips per request. Writes bench/scale-out-results.md.
 */
import { execFileSync, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { availableParallelism, cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import type { SharedOutcome } from '../packages/pocketnet-client/index.js'
import { CONNECTIONS, CPUS, assertCommand, assertWrk, cpuMicros, cpuSeconds, getOnce, redisCommand, seriesSum, startChild, startRedis, startService, stop, withCpu, wrk, wrkAsync, type Measured } from './harness.js'
import { zipfSearchPaths } from './zipf.js'

/** Scenario 1: rounds of both configurations, each on fresh instances, the first one alternating. */
const PAIR_ROUNDS = Number(process.env.BENCH_SCALE_ROUNDS ?? 5)
/**
 * The most a window may last: each wrk replays its half of the stream once and stops, so that both
 * configurations answer the same requests and calls per 1000 requests compare the calls alone.
 * Under search's 30 s time to live: no answer expires during a window, so every miss is a cold one.
 */
const PAIR_DURATION_S = Number(process.env.BENCH_SCALE_DURATION_S ?? 25)
const HOT_ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const HOT_DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5)
const WARMUP_S = 2
/** Longer than an upstream call and a Redis round trip. */
const SETTLE_MS = 500
const UPSTREAM_LATENCY_MS = 20
const ZIPF_DRAWS = 100_000
const FINDINGS = '## Findings'
/** The targets. */
const MAX_UPSTREAM_RATIO = 0.55
const MIN_HOT_RATIO = 0.9

assertWrk()
assertCommand('redis-server', 'npm run bench:scale-out starts a Redis of its own (redis-server)', 'redis-server')
execFileSync('npm', ['run', 'build'], { stdio: 'inherit' })
const work = mkdtempSync(join(tmpdir(), 'bench-scale-out-'))

// One stream of requests, dealt out in turn: each instance sees half of it, hot keys on both.
const zipf = zipfSearchPaths(ZIPF_DRAWS)
const halves = [0, 1].map(half => {
  const file = join(work, `zipf-${half}.txt`)
  writeFileSync(file, zipf.filter((_, i) => i % 2 === half).join('\n'))
  return file
})
const distinctUrls = new Set(zipf).size
const hotPath = '/api/search?keyword=bitcoin&page=0&pageSize=20'

const SERVICE_ENV = {
  LOG_LEVEL: 'warn',
  NODE_ENV: 'production',
  // One emulator stands for the whole network here: enough connections that it is not a queue.
  POCKETNET_CONNECTIONS_PER_NODE: '128',
  // The emulator here serves any number at once: a fixed limit, no adaptation to measure.
  POCKETNET_NODE_THREADS: '128',
  // The limit still counts (in Redis when REDIS_URL is set), but never refuses the load.
  RATE_LIMIT_MAX: '1000000000',
}

interface Instance { child: ChildProcess, base: string }

/** What instances have counted (their metrics); differences give a window's, sums several instances'. */
interface Counters {
  /** Search attempts on the nodes, whatever their outcome: each is an upstream call. */
  upstream: number
  upstreamNotOk: number
  /** Redis operations that made a round trip (outcome ok, error or timeout; not skipped). */
  redisTrips: number
  redisFailed: number
  /** Misses of the in-process cache that asked Redis, by outcome. */
  hit: number
  miss: number
  joined: number
  unshared: number
}

/** One scrape: the counts agree with each other, and the event loop's longest delay since the last scrape. */
async function scrape (base: string): Promise<{ counts: Counters, eventLoopDelayMaxMs: number }> {
  const text = (await getOnce(`${base}/metrics`)).body.toString()
  const sum = (name: string, ...labels: string[]): number => seriesSum(text, name, ...labels)
  const upstream = sum('pocketnet_upstream_attempts_total', 'method="search"')
  const redisTrips = sum('redis_operations_total') - sum('redis_operations_total', 'outcome="skipped"')
  const shared = (outcome: SharedOutcome): number => sum('pocketnet_shared_cache_lookups_total', 'method="search"', `outcome="${outcome}"`)
  return {
    counts: {
      upstream,
      upstreamNotOk: upstream - sum('pocketnet_upstream_attempts_total', 'method="search"', 'outcome="ok"'),
      redisTrips,
      redisFailed: redisTrips - sum('redis_operations_total', 'outcome="ok"'),
      hit: shared('hit'),
      miss: shared('miss'),
      joined: shared('joined'),
      unshared: shared('unshared'),
    },
    // prom-client's monitor starts afresh at each scrape: after a window, this is the window's.
    eventLoopDelayMaxMs: sum('nodejs_eventloop_lag_max_seconds') * 1000,
  }
}

/** `a + sign × b`, count by count. */
function combine (a: Counters, b: Counters, sign: 1 | -1): Counters {
  const result = { ...a }
  for (const key of Object.keys(result) as Array<keyof Counters>) result[key] += sign * b[key]
  return result
}

const ZERO: Counters = { upstream: 0, upstreamNotOk: 0, redisTrips: 0, redisFailed: 0, hit: 0, miss: 0, joined: 0, unshared: 0 }
const added = (counts: Counters[]): Counters => counts.reduce((sum, count) => combine(sum, count, 1), ZERO)

/** Where the CPUs' time went during a window. */
interface CpuUse {
  /** Per CPU, the share of the window it was busy, and the share the hypervisor took (steal). */
  cpus: Array<{ name: string, busy: number, steal: number }>
  /**
   * The measured processes' CPU time over the server CPU's busy time: 1 when they had it to
   * themselves; below, something else ran there too (the machine is shared).
   */
  ownShare: number
}

/** Runs `measure` (a window of load) and says where the CPUs' time went meanwhile. */
async function watched<T> (pids: number[], measure: () => Promise<T>): Promise<{ result: T, cpu: CpuUse }> {
  const cpuBefore = cpuSeconds()
  const ownBefore = pids.reduce((sum, pid) => sum + cpuMicros(pid), 0)
  const result = await measure()
  const own = pids.reduce((sum, pid) => sum + cpuMicros(pid), 0) - ownBefore
  const cpuAfter = cpuSeconds()
  const cpus = [...cpuAfter].map(([name, now]) => {
    const then = cpuBefore.get(name) ?? now
    const total = now.total - then.total
    return { name, busy: (now.busy - then.busy) / total, steal: (now.steal - then.steal) / total, busySeconds: now.busy - then.busy }
  })
  const server = cpus.find(cpu => cpu.name === `cpu${CPUS?.server}`)
  return { result, cpu: { cpus, ownShare: server ? own / 1e6 / server.busySeconds : Number.NaN } }
}

/** Children still to stop, whatever happens. */
const running = new Set<ChildProcess>()

async function stopAll (children: Iterable<ChildProcess>): Promise<void> {
  await Promise.all([...children].map(async child => {
    await stop(child)
    running.delete(child)
  }))
}

/**
 * The built service, once ready: its node known usable, and its Redis link up when it has one
 * (until then it would go on alone, and the first window would measure that instead).
 */
async function startInstance (redisUrl: string | undefined): Promise<Instance> {
  const service = await startService({ ...SERVICE_ENV, POCKETNET_NODES: emulatorUrl, ...(redisUrl ? { REDIS_URL: redisUrl } : {}) })
  running.add(service.child)
  const base = `http://127.0.0.1:${service.port}`
  const wanted = redisUrl ? 'ok' : 'off'
  for (let tries = 0; ; tries++) {
    const { status, body } = await getOnce(`${base}/readyz`)
    if (status === 200 && (JSON.parse(body.toString()) as { data: { redis: string } }).data.redis === wanted) return { child: service.child, base }
    if (tries === 200) throw new Error(`the service was not ready with Redis ${wanted} after 10 s: ${body.toString()}`)
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}

/** Scenario 1, one configuration: both instances loaded at once. */
interface PairRun {
  redis: boolean
  perInstance: Measured[]
  counts: Counters
  /** The longer of the two instances' longest event-loop delays during the window. */
  eventLoopDelayMaxMs: number
  cpu: CpuUse
}

async function zipfOnPair (redis: boolean): Promise<PairRun> {
  if (redis) await redisCommand(redisPort, 'FLUSHALL')
  const instances = await Promise.all([0, 1].map(() => startInstance(redis ? redisUrl : undefined)))
  try {
    const before = await Promise.all(instances.map(instance => scrape(instance.base)))
    const { result: perInstance, cpu } = await watched(instances.map(instance => instance.child.pid as number), () =>
      Promise.all(instances.map((instance, i) => wrkAsync(`instance ${i + 1}`, instance.base, PAIR_DURATION_S, 'paths-once.lua', [halves[i] as string]))))
    // Calls still in flight when wrk stops were made for the window's requests: let them be counted.
    await new Promise(resolve => setTimeout(resolve, SETTLE_MS))
    const after = await Promise.all(instances.map(instance => scrape(instance.base)))
    return {
      redis,
      perInstance,
      counts: added(after.map(({ counts }, i) => combine(counts, (before[i] as { counts: Counters }).counts, -1))),
      eventLoopDelayMaxMs: Math.max(...after.map(snapshot => snapshot.eventLoopDelayMaxMs)),
      cpu,
    }
  } finally {
    await stopAll(instances.map(instance => instance.child))
  }
}

/** Scenario 2, one window on one instance. */
interface HotRun { measured: Measured, counts: Counters, cpu: CpuUse }

async function hotOn (name: string, instance: Instance): Promise<HotRun> {
  const before = await scrape(instance.base)
  const pid = instance.child.pid as number
  const { result: measured, cpu } = await watched([pid], () => withCpu(pid, () => wrk(name, instance.base + hotPath, HOT_DURATION_S)))
  return { measured, counts: combine((await scrape(instance.base)).counts, before.counts, -1), cpu }
}

function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle] as number : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
}

/**
 * Runs the windows one after the other, starting with the `round`-th (and round again), so that
 * the machine's drift favours none of them; gives their results in the order given.
 */
async function rotating<T> (round: number, windows: Array<() => Promise<T>>): Promise<T[]> {
  const results: T[] = new Array(windows.length)
  for (let k = 0; k < windows.length; k++) {
    const i = (round + k) % windows.length
    results[i] = await (windows[i] as () => Promise<T>)()
  }
  return results
}

const emulator = await startChild('devnode/cli.ts', [], { DEVNODE_PORT: '0', DEVNODE_LATENCY_MS: String(UPSTREAM_LATENCY_MS), DEVNODE_WORK_QUEUE: 'off' }, 'load')
running.add(emulator.child)
const emulatorUrl = `http://127.0.0.1:${emulator.port}`
let redisPort = 0
let redisUrl = ''
/** Per round, without Redis and with it. */
const pairRounds: Array<[PairRun, PairRun]> = []
/** Per round, without Redis, with it, and the control: a second service without. */
const hotRounds: Array<[HotRun, HotRun, HotRun]> = []
try {
  const redisServer = await startRedis()
  running.add(redisServer.child)
  redisPort = redisServer.port
  redisUrl = `redis://127.0.0.1:${redisPort}`

  for (let round = 0; round < PAIR_ROUNDS; round++) {
    pairRounds.push(await rotating(round, [() => zipfOnPair(false), () => zipfOnPair(true)]) as [PairRun, PairRun])
    console.log(`scenario 1, round ${round + 1} of ${PAIR_ROUNDS}: done`)
  }

  await redisCommand(redisPort, 'FLUSHALL')
  // Two identical services differ by more than a few percent on this machine: the control, a
  // second one without Redis, shows by how much, beside the difference Redis makes.
  const plain = await startInstance(undefined)
  const shared = await startInstance(redisUrl)
  const control = await startInstance(undefined)
  for (const instance of [plain, shared, control]) wrk('warm-up', instance.base + hotPath, WARMUP_S)
  for (let round = 0; round < HOT_ROUNDS; round++) {
    hotRounds.push(await rotating(round, [
      () => hotOn('one instance, no Redis', plain),
      () => hotOn('one instance, REDIS_URL set', shared),
      () => hotOn('control: a second instance, no Redis', control),
    ]) as [HotRun, HotRun, HotRun])
  }
} finally {
  await stopAll([...running])
}

// The figures, then the report.
const requests = (run: PairRun): number => run.perInstance.reduce((sum, m) => sum + m.total, 0)
const per1000 = (run: PairRun): number => run.counts.upstream / requests(run) * 1000
const pairRatios = pairRounds.map(([without, withRedis]) => per1000(withRedis) / per1000(without))
const upstreamRatio = median(pairRatios)
/**
 * Once each wrk has gone through its half of the list, both configurations have been asked every
 * URL: their upstream calls compare without the requests' count.
 */
const everyUrlAsked = pairRounds.flat().every(run => run.perInstance.every(m => m.total >= ZIPF_DRAWS / 2))
const callRatios = pairRounds.map(([without, withRedis]) => withRedis.counts.upstream / without.counts.upstream)
/** Per round, requests/s of the scenario (1: with Redis, 2: the control) over the service without Redis. */
const hotRatiosOf = (scenario: 1 | 2): number[] => hotRounds.map(round => round[scenario].measured.requestsPerSecond / round[0].measured.requestsPerSecond)
const cpuRatiosOf = (scenario: 1 | 2): number[] => hotRounds.map(round => (round[scenario].measured.cpuUsPerRequest ?? Number.NaN) / (round[0].measured.cpuUsPerRequest ?? Number.NaN))
/** Per round, the service with Redis over the control: the same comparison against the other service without. */
const overControl = (figure: 'requests' | 'cpu'): number[] => hotRounds.map(([, withRedis, control]) => figure === 'requests'
  ? withRedis.measured.requestsPerSecond / control.measured.requestsPerSecond
  : (withRedis.measured.cpuUsPerRequest ?? Number.NaN) / (control.measured.cpuUsPerRequest ?? Number.NaN))
const hotRatios = hotRatiosOf(1)
const hotRatio = median(hotRatios)

const ms = (value: number): string => value.toFixed(2)
const mark = (met: boolean): string => met ? '✓' : '✗'
const percent = (share: number): string => Number.isNaN(share) ? 'n/a' : `${Math.round(share * 100)} %`
const ratios = (values: number[]): string => values.map(ratio => ratio.toFixed(2)).join(', ')
/** The server CPU's share that was the measured processes', median over windows. */
const ownShare = (uses: CpuUse[]): string => percent(median(uses.map(use => use.ownShare)))
/** Each CPU's busy and stolen shares, medians over windows. */
const cpuLoad = (uses: CpuUse[]): string => (uses[0]?.cpus ?? []).map(({ name }) => {
  const of = (field: 'busy' | 'steal'): number => median(uses.map(use => use.cpus.find(cpu => cpu.name === name)?.[field] ?? Number.NaN))
  return `${name} ${percent(of('busy'))} busy (${percent(of('steal'))} steal)`
}).join(', ')

/** Scenario 1's row for one configuration, over the rounds: counts summed, latencies the rounds' medians of the slower instance's. */
function pairRow (name: string, runs: PairRun[]): string {
  const total = runs.reduce((sum, run) => sum + requests(run), 0)
  const counts = added(runs.map(run => run.counts))
  const p50 = median(runs.map(run => Math.max(...run.perInstance.map(m => m.p50))))
  const p99 = median(runs.map(run => Math.max(...run.perInstance.map(m => m.p99))))
  const errors = runs.reduce((sum, run) => sum + run.perInstance.reduce((s, m) => s + m.errors, 0), 0)
  const trips = runs[0]?.redis ? (counts.redisTrips / total).toFixed(4) : '—'
  const delay = Math.round(median(runs.map(run => run.eventLoopDelayMaxMs)))
  return `| ${name} | ${total} | ${ms(p50)} | ${ms(p99)} | ${counts.upstream} | ${(counts.upstream / total * 1000).toFixed(2)} | ${trips} | ${delay} | ${errors} |`
}

function hotRow (name: string, runs: HotRun[], redis: boolean): string {
  const total = runs.reduce((sum, run) => sum + run.measured.total, 0)
  const counts = added(runs.map(run => run.counts))
  const rps = Math.round(runs.reduce((sum, run) => sum + run.measured.requestsPerSecond, 0) / runs.length)
  const cpu = runs.reduce((sum, run) => sum + (run.measured.cpuUsPerRequest ?? 0) * run.measured.total, 0) / total
  const errors = runs.reduce((sum, run) => sum + run.measured.errors, 0)
  return `| ${name} | ${rps} | ${ms(median(runs.map(run => run.measured.p50)))} | ${ms(median(runs.map(run => run.measured.p99)))} | ${Math.round(cpu)} | ${redis ? (counts.redisTrips / total).toFixed(5) : '—'} | ${errors} |`
}

const withoutRuns = pairRounds.map(round => round[0])
const withRedisRuns = pairRounds.map(round => round[1])
const sharedCounts = added(withRedisRuns.map(run => run.counts))
const split = (run: PairRun): string => run.perInstance.map(m => m.total).join(' + ')
const perPairRound = pairRounds.map(([without, withRedis], i) =>
  `${per1000(without).toFixed(2)} → ${per1000(withRedis).toFixed(2)} (${(pairRatios[i] as number).toFixed(2)}×; upstream calls ${without.counts.upstream} → ${withRedis.counts.upstream}; requests per instance ${split(without)} → ${split(withRedis)})`).join('; ')
const perHotRound = hotRounds.map(round => round.map(run => run.measured.requestsPerSecond).join('/')).join('; ')
const hotUses = hotRounds.flat().map(run => run.cpu)
const placement = CPUS
  ? `the instances on CPU ${CPUS.server} (both of them in scenario 1, sharing it); wrk (one process per instance), the emulator and redis-server on CPU ${CPUS.load}`
  : 'one CPU shared by all (no pinning)'
const redisVersion = /v=(\S+)/.exec(execFileSync('redis-server', ['--version'], { encoding: 'utf8' }))?.[1] ?? '?'
const timeoutSetting = process.env.REDIS_TIMEOUT_MS === undefined ? 'the default REDIS_TIMEOUT_MS' : `REDIS_TIMEOUT_MS=${process.env.REDIS_TIMEOUT_MS} (from the environment)`

const report = `# Scale-out benchmark results

${new Date().toISOString().slice(0, 10)}, ${availableParallelism()} × ${cpus()[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}, redis-server ${redisVersion}, wrk with ${CONNECTIONS} connections per process, upstream latency ${UPSTREAM_LATENCY_MS} ms, ${timeoutSetting}; ${placement}. Command: \`npm run bench:scale-out\`.

## 1. Two instances, Zipf load over both

Scenario b's ${ZIPF_DRAWS} Zipf(1.1) draws (${distinctUrls} distinct URLs), dealt out in turn between two instances (even draws to one, odd ones to the other), each half replayed once by its own wrk process, both at once (a window ends when both halves are answered, or after ${PAIR_DURATION_S} s); fresh instances (and an emptied Redis) for every window, so that each starts cold; ${PAIR_ROUNDS} rounds, the configuration that goes first alternating. Upstream calls are the instances' \`pocketnet_upstream_attempts_total{method="search"}\`, summed over both; requests are those wrk counted as answered.

| Configuration | requests | p50 ms | p99 ms | upstream calls | upstream calls / 1000 req | Redis round trips / req | event-loop delay max ms | errors |
|---|---|---|---|---|---|---|---|---|
${pairRow('two instances, no Redis', withoutRuns)}
${pairRow('two instances, one Redis', withRedisRuns)}

Requests and upstream calls are summed over the rounds; the longest event-loop delay of either instance during the window (prom-client's \`nodejs_eventloop_lag_max_seconds\`) is the rounds' median; p50 and p99 the rounds' medians of the slower instance's. Errors are wrk's (non-2xx answers, and socket errors and timeouts: wrk gives up on a request after 2 s). Per round, upstream calls / 1000 requests without → with Redis: ${perPairRound}. The upstream calls alone, with Redis over without, per round: ${ratios(callRatios)}; per 1000 requests, the ratio also moves with how many requests each window served. ${everyUrlAsked ? 'Every instance answered at least its half of the list in every window, so both configurations were asked every URL.' : 'Some instance answered less than its half of the list in some window: the configurations were not asked the same URLs, and the calls alone do not compare either.'}

With Redis, the instances' misses of their in-process cache that asked Redis (\`pocketnet_shared_cache_lookups_total\`, method search, summed over the rounds): hit ${sharedCounts.hit}, miss (fetched and shared) ${sharedCounts.miss}, joined ${sharedCounts.joined}, unshared (Redis skipped, or the wait ran out) ${sharedCounts.unshared}; Redis operations that failed or timed out: ${sharedCounts.redisFailed}; upstream attempts that did not succeed, both configurations: ${added(pairRounds.flat().map(run => run.counts)).upstreamNotOk}.

CPUs during the windows (medians over the rounds, from /proc/stat): without Redis ${cpuLoad(withoutRuns.map(run => run.cpu))}, of CPU ${CPUS?.server ?? '?'}'s busy time ${ownShare(withoutRuns.map(run => run.cpu))} the instances'; with Redis ${cpuLoad(withRedisRuns.map(run => run.cpu))}, ${ownShare(withRedisRuns.map(run => run.cpu))} the instances'.

## 2. One instance, one hot key

\`${hotPath}\` on three services (one with \`REDIS_URL\`, two without), each alone on CPU ${CPUS?.server ?? 'any'} while it is loaded, in ${HOT_ROUNDS} rounds of ${HOT_DURATION_S} s each (after a ${WARMUP_S} s warm-up each), the one that goes first rotating.

| Configuration | req/s | p50 ms | p99 ms | CPU µs / req | Redis round trips / req | errors |
|---|---|---|---|---|---|---|
${hotRow('one instance, no Redis', hotRounds.map(round => round[0]), false)}
${hotRow('one instance, REDIS_URL set', hotRounds.map(round => round[1]), true)}
${hotRow('control: a second instance, no Redis', hotRounds.map(round => round[2]), false)}

req/s is the rounds' mean, p50 and p99 their medians. The control is a third service, started like the first: what it differs from the first by is what two identical services differ by here, the yardstick for the difference Redis makes. Per round, requests/s without Redis/with/control: ${perHotRound}.

| Over the service without Redis, per round (median) | requests/s | CPU µs / req |
|---|---|---|
| with \`REDIS_URL\` | ${ratios(hotRatios)} (**${hotRatio.toFixed(2)}×**) | ${ratios(cpuRatiosOf(1))} (**${median(cpuRatiosOf(1)).toFixed(2)}×**) |
| control | ${ratios(hotRatiosOf(2))} (**${median(hotRatiosOf(2)).toFixed(2)}×**) | ${ratios(cpuRatiosOf(2))} (**${median(cpuRatiosOf(2)).toFixed(2)}×**) |
| with \`REDIS_URL\`, over the control instead | ${ratios(overControl('requests'))} (**${median(overControl('requests')).toFixed(2)}×**) | ${ratios(overControl('cpu'))} (**${median(overControl('cpu')).toFixed(2)}×**) |

CPUs during the windows (medians): ${cpuLoad(hotUses)}; of CPU ${CPUS?.server ?? '?'}'s busy time, ${ownShare(hotUses)} was the loaded service's.

## Targets

| Target | Measured | |
|---|---|---|
| 1. upstream calls / 1000 requests, two instances with Redis ≤ ${MAX_UPSTREAM_RATIO} × without | ${upstreamRatio.toFixed(2)}× (median of the rounds' ratios: ${ratios(pairRatios)}); the upstream calls alone, ${median(callRatios).toFixed(2)}× | ${mark(upstreamRatio <= MAX_UPSTREAM_RATIO)} |
| 2. requests/s, one instance on a hot key, with REDIS_URL ≥ ${MIN_HOT_RATIO} × without | ${hotRatio.toFixed(2)}× (median of the rounds' ratios: ${ratios(hotRatios)}) | ${mark(hotRatio >= MIN_HOT_RATIO)} |
`
// The findings below the generated part are kept: they are written by hand, run after run.
const resultsFile = new URL('./scale-out-results.md', import.meta.url)
const previous = existsSync(resultsFile) ? readFileSync(resultsFile, 'utf8') : ''
const findings = previous.includes(FINDINGS) ? previous.slice(previous.indexOf(FINDINGS)) : ''
writeFileSync(resultsFile, findings === '' ? report : `${report}\n${findings}`)
console.log(report)
