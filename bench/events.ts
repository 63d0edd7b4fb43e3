/**
 * `npm run bench:events`: the live event stream at scale (issue #27). The built service (as
 * `npm start` runs it, on its own CPU) in front of one emulated node with its WebSocket; this
 * process opens BENCH_STREAMS Server-Sent Events streams (`GET /api/events?topics=blocks`, raw
 * sockets, no EventSource overhead), then:
 * - RSS of the service per open stream (the streams' share of its resident memory);
 * - one block from the emulator: the time from the node's announcement to each stream's `block`
 *   frame, p50 and p99, and the calls the node received for it;
 * - the cached `GET /api/nodeinfo` path's requests/s with the streams open, against the same
 *   measured before they opened, in this run.
 * Writes its table into bench/results.md, between the events markers.
 *
 * The streams are not read while requests/s is measured (the load runs in this process too): what
 * the service writes to them, keep-alives included, is part of what it costs.
 *
 * Knobs: BENCH_STREAMS (10000), BENCH_DURATION_S (5, for each requests/s measure).
 *
 * Each stream is a socket in this process and in the service: with too low an open-file limit
 * (`ulimit -n`) the run stops before it starts, saying which limit to raise; whatever fails
 * later, the service and the emulator are stopped before this process exits.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { createEmulator } from '../devnode/server.js'
import { load, startService, stop, type Measured } from './harness.js'
import { writeResultsSection } from './results-file.js'

const STREAMS = Number(process.env.BENCH_STREAMS ?? 10_000)
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5)
const BATCH = 500

const rssKb = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0)
const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN

/** One stream: when it got its first `block` frame after `armedAt`. */
interface Stream { socket: Socket, blockAt: number | undefined, opened: boolean }
interface Measures { rssBefore: number, rssAfter: number, alone: Measured, withStreams: Measured, got: number[], calls: string[] }

/**
 * Open files this process and the service (which inherits the limit) each need: a socket per
 * stream, and room for the load's connections, the node's and the files a process keeps open.
 */
const OPEN_FILES_NEEDED = STREAMS + 1000

/** The soft and hard limits on open files (`ulimit -n`, `ulimit -Hn`), from /proc. */
function openFileLimits (): { soft: number, hard: number } {
  const line = /^Max open files\s+(\S+)\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))
  const parse = (value: string | undefined): number => value === undefined || value === 'unlimited' ? Infinity : Number(value)
  return { soft: parse(line?.[1]), hard: parse(line?.[2]) }
}

function openFileAdvice (): string {
  const { soft, hard } = openFileLimits()
  return `BENCH_STREAMS=${STREAMS} needs about ${OPEN_FILES_NEEDED} open files in this process and in the service, and the limit is ${soft}: ` +
    `raise it with \`ulimit -n ${OPEN_FILES_NEEDED}\` in the shell that runs the benchmark${hard < OPEN_FILES_NEEDED ? ` (its hard limit, ${hard}, is lower too: raise that as root, or in /etc/security/limits.conf)` : ''}, or ask for fewer streams`
}

/** Refuses to start what could only die of EMFILE halfway, saying which limit to raise. */
function checkOpenFileLimit (): void {
  if (openFileLimits().soft >= OPEN_FILES_NEEDED) return
  console.error(`bench:events: ${openFileAdvice()}`)
  process.exit(2)
}

checkOpenFileLimit()
execFileSync('npm', ['run', 'build'], { stdio: 'inherit' })
const node = await createEmulator({ port: 0 })
const { child: service, port } = await startService({
  POCKETNET_NODES: node.url,
  LOG_LEVEL: 'warn',
  RATE_LIMIT_MAX: '1000000000',
  EVENTS_MAX_STREAMS: String(STREAMS + 100),
  EVENTS_MAX_STREAMS_PER_CLIENT: String(STREAMS + 100),
  // The service's own cap on connections, derived from its open-file limit unless set.
  MAX_CONNECTIONS: String(STREAMS + 1000),
})
// Whatever happens below (a socket error, an exception), the service does not outlive this run.
process.once('exit', () => { if (service.exitCode === null) service.kill('SIGKILL') })
const streams: Stream[] = []
let measured: Measures
try {
  const pid = service.pid as number
  const base = `http://127.0.0.1:${port}`
  await load('warm-up', `${base}/api/nodeinfo`, 1)
  const alone = await load('cached GET /api/nodeinfo, no stream open', `${base}/api/nodeinfo`, DURATION_S)

  // Give the service a moment to settle, then take its memory before any stream.
  await new Promise(resolve => setTimeout(resolve, 1000))
  const rssBefore = rssKb(pid)

  let armedAt = Infinity
  function open (): Promise<void> {
    return new Promise((resolve, reject) => {
      const stream: Stream = { socket: connect(port, '127.0.0.1'), blockAt: undefined, opened: false }
      streams.push(stream)
      stream.socket.setEncoding('utf8')
      stream.socket.on('connect', () => stream.socket.write('GET /api/events?topics=blocks HTTP/1.1\r\nHost: bench\r\n\r\n'))
      stream.socket.on('data', (chunk: string) => {
        if (!stream.opened && chunk.startsWith('HTTP/1.1 200')) {
          stream.opened = true
          // Read again only for the block: this process also runs the requests/s load, and its
          // reading 10,000 streams' keep-alives would slow the load, not the service.
          stream.socket.pause()
          resolve()
        }
        if (stream.blockAt === undefined && performance.now() >= armedAt && chunk.includes('event: block')) stream.blockAt = performance.now()
      })
      stream.socket.on('error', reject)
    })
  }
  for (let i = 0; i < STREAMS; i += BATCH) await Promise.all(Array.from({ length: Math.min(BATCH, STREAMS - i) }, open))
  await new Promise(resolve => setTimeout(resolve, 2000))
  const rssAfter = rssKb(pid)

  const withStreams = await load(`cached GET /api/nodeinfo, ${STREAMS} streams open`, `${base}/api/nodeinfo`, DURATION_S)

  for (const stream of streams) stream.socket.resume()
  await new Promise(resolve => setTimeout(resolve, 1000))
  node.clearCalls()
  armedAt = performance.now()
  node.mineBlock()
  const deadline = armedAt + 60_000
  while (streams.some(stream => stream.blockAt === undefined) && performance.now() < deadline) await new Promise(resolve => setTimeout(resolve, 10))
  await new Promise(resolve => setTimeout(resolve, 500))
  const got = streams.filter(stream => stream.blockAt !== undefined).map(stream => (stream.blockAt as number) - armedAt).sort((a, b) => a - b)
  const calls = node.calls.map(call => call.method)

  measured = { rssBefore, rssAfter, alone, withStreams, got, calls }
} catch (error) {
  console.error(`bench:events failed: ${(error as Error).message}${(error as NodeJS.ErrnoException).code === 'EMFILE' ? ` (out of open files: ${openFileAdvice()})` : ''}`)
  process.exitCode = 1
  throw error
} finally {
  for (const stream of streams) stream.socket.destroy()
  await stop(service)
  await node.close()
}
const { rssBefore, rssAfter, alone, withStreams, got, calls } = measured

const ratio = withStreams.requestsPerSecond / alone.requestsPerSecond
const table = [
  `Written by \`npm run bench:events\` (Node ${process.version}, ${new Date().toISOString().slice(0, 10)}): the built service on its own CPU in front of one emulated node; ${STREAMS} Server-Sent Events streams (\`GET /api/events?topics=blocks\`) opened over loopback from the load CPU, then one block made by the emulator.`,
  '',
  '| Measure | Value | Target (issue #27) |',
  '|---|---|---|',
  `| streams open | ${streams.filter(stream => stream.opened).length} | 10,000 |`,
  `| the block reached | ${got.length} of ${STREAMS} streams | all |`,
  `| node announcement → block frame, p50 / p99 | ${percentile(got, 0.5).toFixed(0)} / ${percentile(got, 0.99).toFixed(0)} ms | p99 ≤ 500 ms |`,
  `| service RSS per open stream | ${((rssAfter - rssBefore) / STREAMS).toFixed(1)} KB (${Math.round(rssBefore / 1024)} → ${Math.round(rssAfter / 1024)} MB) | ≤ 20 KB |`,
  `| node calls for the block | ${calls.length} (${calls.join(', ') || 'none'}); 1 WebSocket | ≤ 2 |`,
  `| cached \`GET /api/nodeinfo\` req/s, streams open / none | ${withStreams.requestsPerSecond} / ${alone.requestsPerSecond} = ${(ratio * 100).toFixed(0)} % | ≥ 80 % |`,
].join('\n')
console.log(table)
writeResultsSection('events', '### Live events (issue #27)', table)
process.exit(0)
