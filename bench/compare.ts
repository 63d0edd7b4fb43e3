/**
 * `npm run bench:compare -- <git ref>`: this tree against an earlier commit, in one run, so that a
 * change's cost is a ratio measured side by side rather than two runs on a machine whose speed
 * drifts. Both are built and started as each one's own start script says; in every round the
 * limit (a bare node:http server), then a and b (bench/README.md) on the earlier build and on
 * this one, alternately. Prints per-round and median ratios of CPU time per request.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { assertWrk, getOnce, startArgsOf, startChild, startService, stop, withCpu, wrk, type Measured } from './harness.js'
import { zipfSearchPaths } from './zipf.js'

const ref = process.argv[2]
if (ref === undefined) {
  console.error('usage: npm run bench:compare -- <git ref>')
  process.exit(1)
}
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 4)
const HOT_PATH = '/api/search?keyword=bitcoin&page=0&pageSize=20'

assertWrk()
const root = new URL('../', import.meta.url).pathname
execFileSync('npm', ['run', 'build'], { stdio: 'inherit' })
const work = mkdtempSync(join(tmpdir(), 'bench-compare-'))
const earlier = join(work, 'earlier')
execFileSync('git', ['worktree', 'add', '--detach', earlier, ref], { cwd: root, stdio: 'inherit' })

try {
  // The earlier commit's own dependencies, from npm's cache when it has them.
  execFileSync('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: earlier, stdio: 'inherit' })
  // Its own build script: since the client became a workspace package (packages/pocketnet-client), the service's build needs it first.
  execFileSync('npm', ['run', 'build'], { cwd: earlier, stdio: 'inherit' })
  const zipfPaths = join(work, 'zipf-paths.txt')
  writeFileSync(zipfPaths, zipfSearchPaths(100_000).join('\n'))

  const emulator = await startChild('devnode/cli.ts', [], { DEVNODE_PORT: '0', DEVNODE_LATENCY_MS: '20', DEVNODE_WORK_QUEUE: 'off' }, 'load')
  const env = {
    POCKETNET_NODES: `http://127.0.0.1:${emulator.port}`,
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
    POCKETNET_CONNECTIONS_PER_NODE: '128',
    // The emulator here serves any number at once: a fixed limit, no adaptation to measure.
    POCKETNET_NODE_THREADS: '128',
    RATE_LIMIT_MAX: '1000000000',
  }
  const services = {
    earlier: await startService(env, startArgsOf(earlier), earlier),
    now: await startService(env, startArgsOf(root), root),
  }
  const body = join(work, 'body.json')
  writeFileSync(body, (await getOnce(`http://127.0.0.1:${services.now.port}${HOT_PATH}`)).body)
  const baseline = await startChild('bench/baseline-server.ts', [body], {})
  try {
    const limitUrl = `http://127.0.0.1:${baseline.port}/`
    const url = (which: keyof typeof services): string => `http://127.0.0.1:${services[which].port}`
    for (const which of ['earlier', 'now'] as const) {
      wrk('warm-up', url(which) + HOT_PATH, 2)
      wrk('warm-up', url(which), 2, 'paths.lua', [zipfPaths])
    }
    const rounds: Array<Record<string, Measured>> = []
    for (let round = 0; round < ROUNDS; round++) {
      const measured: Record<string, Measured> = {}
      measured.limit = await withCpu(baseline.child.pid, () => wrk('limit', limitUrl, DURATION_S))
      // Which build goes first alternates, so that a drift within a round favours neither.
      const order = round % 2 === 0 ? ['earlier', 'now'] as const : ['now', 'earlier'] as const
      for (const which of order) {
        measured[`a ${which}`] = await withCpu(services[which].child.pid, () => wrk(`a ${which}`, url(which) + HOT_PATH, DURATION_S))
      }
      for (const which of order) {
        measured[`b ${which}`] = await withCpu(services[which].child.pid, () => wrk(`b ${which}`, url(which), DURATION_S, 'paths.lua', [zipfPaths]))
      }
      rounds.push(measured)
    }
    const median = (values: number[]): number => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)] as number
    const cpu = (m: Measured | undefined): number => m?.cpuUsPerRequest ?? Number.NaN
    const lines = [`${ref} against this tree, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}, ${ROUNDS} rounds of ${DURATION_S} s; CPU µs per request (requests/s):`]
    for (const [index, round] of rounds.entries()) {
      lines.push(`round ${index + 1}: ${Object.entries(round).map(([name, m]) => `${name} ${cpu(m).toFixed(1)} (${m.requestsPerSecond})`).join(', ')}`)
    }
    for (const scenario of ['a', 'b']) {
      const ratios = rounds.map(round => cpu(round[`${scenario} now`]) / cpu(round[`${scenario} earlier`]))
      const shares = (which: string): number => median(rounds.map(round => cpu(round.limit) / cpu(round[`${scenario} ${which}`])))
      const sorted = [...ratios].sort((x, y) => x - y)
      const quartile = (q: number): string => (sorted[Math.round(q * (sorted.length - 1))] as number).toFixed(2)
      lines.push(`${scenario}: this tree's CPU per request over ${ref}'s, per round ${ratios.map(ratio => ratio.toFixed(2)).join(', ')}; median **${median(ratios).toFixed(2)}×** (quartiles ${quartile(0.25)}–${quartile(0.75)}); share of the limit on CPU time, median: ${ref} ${Math.round(shares('earlier') * 100)} %, this tree ${Math.round(shares('now') * 100)} %`)
    }
    console.log(lines.join('\n'))
  } finally {
    for (const service of Object.values(services)) await stop(service.child)
    await stop(baseline.child)
    await stop(emulator.child)
  }
} finally {
  execFileSync('git', ['worktree', 'remove', '--force', earlier], { cwd: root })
  rmSync(work, { recursive: true, force: true })
}
