/**
 * `npm run bench`: the service against the node emulator (20 ms upstream latency), loaded by
 * autocannon, with a bare node:http server measured in the same run as the limit.
 * Scenarios (50 connections each, see bench/README.md):
 *   a  one hot search key
 *   b  Zipf(1.1) over 500 keywords, pages 0–2
 *   c  a new keyword every request (the cache cannot help)
 * Writes bench/results.md.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createEmulator } from '../devnode/server.js'
import { CONNECTIONS, load, peakRssMb, startChild, startService, stop, type Measured } from './harness.js'
import { seeded } from '../devnode/data/generate.js'
import { zipfSampler } from './zipf.js'

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10)
const COLD_DURATION_S = Number(process.env.BENCH_COLD_DURATION_S ?? 60)
const UPSTREAM_LATENCY_MS = 20

execFileSync('npm', ['run', 'build'], { stdio: 'inherit' })
const emulator = await createEmulator({ latencyMs: UPSTREAM_LATENCY_MS })
// The 500 most frequent words of the dataset, most frequent first: Zipf rank 0 is the hottest.
const frequency = new Map<string, number>()
for (const post of emulator.dataset.posts) for (const word of post.words) if (word.length >= 3) frequency.set(word, (frequency.get(word) ?? 0) + 1)
const KEYWORDS = [...frequency].sort((a, b) => b[1] - a[1]).slice(0, 500).map(([word]) => encodeURIComponent(word))
const SERVICE_ENV = {
  POCKETNET_NODES: emulator.url,
  LOG_LEVEL: 'warn',
  NODE_ENV: 'production',
  // One emulator stands for the whole network here: enough connections that it is not a queue.
  POCKETNET_CONNECTIONS_PER_NODE: '128',
  RATE_LIMIT_MAX: '1000000000',
}
let service = await startService(SERVICE_ENV)
const base = `http://127.0.0.1:${service.port}`
const hotPath = '/api/search?keyword=bitcoin&page=0&pageSize=20'
const sample = Buffer.from(await (await fetch(base + hotPath)).arrayBuffer())
const bodyBytes = sample.byteLength
const bodyFile = join(mkdtempSync(join(tmpdir(), 'bench-')), 'body.json')
writeFileSync(bodyFile, sample)
const baseline = await startChild('bench/baseline-server.ts', [bodyFile], {})

/**
 * The service's own share of a cold request, from its metrics: mean request duration minus the
 * mean upstream attempt (both measured inside the service, so scheduling of the load generator
 * and the emulator on this 2-core machine does not count).
 */
async function addedInsideService (url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text()
  const value = (pattern: RegExp): number => Number(pattern.exec(text)?.[1])
  const request = value(/^http_request_duration_seconds_sum\{route="\/api\/search"\} (\S+)/m) / value(/^http_request_duration_seconds_count\{route="\/api\/search"\} (\S+)/m)
  const attempt = value(/^pocketnet_upstream_attempt_duration_seconds_sum\{method="search"\} (\S+)/m) / value(/^pocketnet_upstream_attempt_duration_seconds_count\{method="search"\} (\S+)/m)
  return (request - attempt) * 1000
}

const results: Measured[] = []
let serviceSide = Number.NaN
try {
  results.push(await load('limit: bare node:http', `http://127.0.0.1:${baseline.port}/`, DURATION_S))

  const upstreamBefore = (): number => emulator.callsTo('search').length
  let before = upstreamBefore()
  const hot = await load('a: one hot search key', base + hotPath, DURATION_S)
  hot.upstreamPer1000 = ((upstreamBefore() - before) / (hot.requestsPerSecond * DURATION_S)) * 1000
  results.push(hot)

  const random = seeded(42)
  const rank = zipfSampler(KEYWORDS.length, 1.1, random)
  before = upstreamBefore()
  const zipf = await load('b: Zipf(1.1) over 500 keywords, pages 0–2', base, DURATION_S, {
    path: () => `/api/search?keyword=${KEYWORDS[rank()]}&page=${Math.floor(random() * 3)}&pageSize=20`,
  })
  zipf.upstreamPer1000 = ((upstreamBefore() - before) / (zipf.requestsPerSecond * DURATION_S)) * 1000
  results.push(zipf)

  let direct = 0
  const upstream = await load('c₀: the emulator alone, a new keyword each time', `${emulator.url}/public/`, DURATION_S, {
    post: () => JSON.stringify({ method: 'search', params: [`direct${direct++}`, 'posts', 0, 0, 21] }),
  })
  results.push(upstream)

  // A fresh service for c, so that its peak memory is the cold path's, not a and b's cached answers.
  await stop(service.child)
  service = await startService(SERVICE_ENV)
  const coldBase = `http://127.0.0.1:${service.port}`
  let unique = 0
  before = upstreamBefore()
  const cold = await load('c: a new keyword every request', coldBase, COLD_DURATION_S, { path: () => `/api/search?keyword=unique${unique++}&page=0&pageSize=20` })
  cold.upstreamPer1000 = ((upstreamBefore() - before) / (cold.requestsPerSecond * COLD_DURATION_S)) * 1000
  cold.peakRssMb = peakRssMb(service.child.pid as number)
  results.push(cold)
  serviceSide = await addedInsideService(coldBase)
} finally {
  await stop(service.child)
  await stop(baseline.child)
  await emulator.close()
}

const [limit, hot, zipf, upstream, cold] = results as [Measured, Measured, Measured, Measured, Measured]
const ratio = (m: Measured): string => `${Math.round((m.requestsPerSecond / limit.requestsPerSecond) * 100)} %`
const row = (m: Measured, share: string): string =>
  `| ${m.name} | ${m.requestsPerSecond} | ${m.p50} | ${m.p99} | ${m.upstreamPer1000 === undefined ? '' : m.upstreamPer1000.toFixed(1)} | ${m.peakRssMb ?? ''} | ${share} | ${m.errors} |`
const addedP50 = cold.p50 - upstream.p50
const report = `# Benchmark results

Node ${process.version}, ${new Date().toISOString().slice(0, 10)}, ${CONNECTIONS} connections, ${DURATION_S} s per scenario (${COLD_DURATION_S} s for c), upstream latency ${UPSTREAM_LATENCY_MS} ms, response body ${bodyBytes} bytes. Command: \`npm run bench\`.

| Scenario | req/s | p50 ms | p99 ms | upstream calls / 1000 req | peak RSS MB | share of the limit | errors |
|---|---|---|---|---|---|---|---|
${row(limit, '100 %')}
${row(hot, ratio(hot))}
${row(zipf, ratio(zipf))}
${row(upstream, '')}
${row(cold, ratio(cold))}

Targets (issue #4): a ≥ 70 % of the limit: **${ratio(hot)}**; b ≥ 50 %: **${ratio(zipf)}**; c adds ≤ 1 ms to the upstream's p50: **${addedP50} ms** end to end (service p50 ${cold.p50} ms − emulator p50 ${upstream.p50} ms under the same load, load generator, emulator and service sharing 2 cores), **${serviceSide.toFixed(2)} ms** inside the service (mean request time − mean upstream attempt, from its own metrics); c peak RSS < 200 MB: **${cold.peakRssMb} MB** (a fresh service after ${COLD_DURATION_S} s of c).
`
writeFileSync(new URL('./results.md', import.meta.url), report)
console.log(report)
