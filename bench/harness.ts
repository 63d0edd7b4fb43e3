/**
 * What the benchmarks share: child processes pinned to CPUs, ports, a wrk run, an autocannon run.
 *
 * On a machine with two CPUs or more, the process under test (the service, or the bare server)
 * runs alone on one CPU and the load generator and the emulator on another, so that neither
 * steals the other's time: otherwise the figures measure the scheduler as much as the server.
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { get } from 'node:http'
import { connect, createServer } from 'node:net'
import { createInterface } from 'node:readline'
import { promisify } from 'node:util'
import autocannon from 'autocannon'

export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50)

/**
 * The node arguments of the start script in `dir`'s package.json (`exec node <V8 flags>
 * dist/server.js`), so that the benchmarks run the service exactly as it ships.
 */
export function startArgsOf (dir: URL | string): string[] {
  const { scripts } = JSON.parse(readFileSync(join(dir instanceof URL ? dir.pathname : dir, 'package.json'), 'utf8')) as { scripts: { start: string } }
  const words = scripts.start.trim().split(/\s+/)
  return words.slice(words.indexOf('node') + 1)
}

export const START_ARGS = startArgsOf(new URL('../', import.meta.url))

export interface Measured {
  name: string
  requestsPerSecond: number
  /** Milliseconds. */
  p50: number
  p99: number
  /** Requests answered, 2xx or not. */
  total: number
  errors: number
  upstreamPer1000?: number
  peakRssMb?: number
  /** The server process's CPU time (user + system) per request answered, in microseconds. */
  cpuUsPerRequest?: number
}

function hasCommand (name: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** CPUs for the process under test and for the load (load generator and emulator); none on one CPU. */
export const CPUS = availableParallelism() >= 2 && hasCommand('taskset')
  ? { server: process.env.BENCH_SERVER_CPU ?? '1', load: process.env.BENCH_LOAD_CPU ?? '0' }
  : undefined

/** `command args` on the given CPU (taskset execs it: the pid is the command's own). */
function pinned (cpu: 'server' | 'load', command: string, args: string[]): [string, string[]] {
  return CPUS ? ['taskset', ['-c', CPUS[cpu], command, ...args]] : [command, args]
}

/** Starts a script that prints `{"port": N}` (or a line with `listening on http://host:N`) and waits for it. */
export async function startChild (script: string, args: string[], env: Record<string, string>, cpu: 'server' | 'load' = 'server'): Promise<{ child: ChildProcess, port: number }> {
  const [command, argv] = pinned(cpu, process.execPath, ['--import', 'tsx', script, ...args])
  const child = spawn(command, argv, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] })
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })
  // Read every line, also after the port: a child blocked on a full pipe would stall the run.
  const port = await new Promise<number>((resolve, reject) => {
    lines.on('line', line => {
      const found = /listening on http:\/\/[^:]+:(\d+)/.exec(line)?.[1] ?? (line.startsWith('{') ? (JSON.parse(line) as { port?: number }).port : undefined)
      if (found !== undefined) resolve(Number(found))
    })
    child.once('exit', () => reject(new Error(`${script} exited before printing its port`)))
  })
  return { child, port }
}

/** A free loopback port: listen on 0, read it, close. */
export async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise(resolve => server.close(resolve))
  return port
}

/**
 * GETs `url` on a connection of its own. wrk runs block this process for up to a minute, which
 * stalls the keep-alive bookkeeping of a shared connection pool: a kept connection would be used
 * again after the server's keep-alive timeout had closed it ("other side closed").
 */
export async function getOnce (url: string): Promise<{ status: number, body: Buffer }> {
  return await new Promise((resolve, reject) => {
    get(url, { agent: false }, response => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) }))
      response.on('error', reject)
    }).on('error', reject)
  })
}

/** The built service, exactly as `npm start` runs it. */
export async function startService (env: Record<string, string>, nodeArgs: string[] = START_ARGS, cwd?: string): Promise<{ child: ChildProcess, port: number }> {
  const port = await freePort()
  const [command, args] = pinned('server', process.execPath, nodeArgs)
  const child = spawn(command, args, { cwd, env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' }, stdio: ['ignore', 'ignore', 'inherit'] })
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited with code ${child.exitCode}`)
    try {
      if ((await getOnce(`http://127.0.0.1:${port}/healthz`)).status === 200) return { child, port }
    } catch {}
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}

export async function stop (child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return
  child.kill('SIGTERM')
  await once(child, 'exit')
}

export function peakRssMb (pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0)
  return Math.round(kb / 1024)
}

const CLOCK_TICKS_PER_S = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100

/**
 * The CPU time (user + system, all threads) a process has used, in microseconds. Time the
 * hypervisor gave to other machines (steal) is not in it, unlike in requests/s.
 */
export function cpuMicros (pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  // Fields after the command name, which may hold spaces: state is the first, utime the 12th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S * 1e6
}

/** Per CPU (`cpu0`, `cpu1`…), seconds since boot from /proc/stat: busy (user, nice, system, irq, softirq), stolen by the hypervisor, and all. */
export function cpuSeconds (): Map<string, { busy: number, steal: number, total: number }> {
  const times = new Map<string, { busy: number, steal: number, total: number }>()
  for (const line of readFileSync('/proc/stat', 'utf8').split('\n')) {
    if (!/^cpu\d/.test(line)) continue
    const [name = '', ...fields] = line.split(/\s+/)
    // user nice system idle iowait irq softirq steal (guest time is counted in user already)
    const [user, nice, system, idle, iowait, irq, softirq, steal] = Array.from({ length: 8 }, (_, i) => Number(fields[i] ?? 0) / CLOCK_TICKS_PER_S) as [number, number, number, number, number, number, number, number]
    const busy = user + nice + system + irq + softirq
    times.set(name, { busy, steal, total: busy + idle + iowait + steal })
  }
  return times
}

/** `measure()`, with the CPU time per request it cost process `pid`. */
export async function withCpu (pid: number | undefined, measure: () => Measured | Promise<Measured>): Promise<Measured> {
  if (pid === undefined) return await measure()
  const before = cpuMicros(pid)
  const measured = await measure()
  measured.cpuUsPerRequest = (cpuMicros(pid) - before) / measured.total
  return measured
}

/** The sum of a Prometheus metric's series whose labels include every one of `labels` (e.g. `method="search"`). */
export async function metricSum (baseUrl: string, name: string, ...labels: string[]): Promise<number> {
  return seriesSum((await getOnce(`${baseUrl}/metrics`)).body.toString(), name, ...labels)
}

/**
 * {@link metricSum} over a scrape already made: several sums from one scrape agree with each
 * other, where separate scrapes would each see a later state of a busy service.
 */
export function seriesSum (text: string, name: string, ...labels: string[]): number {
  let sum = 0
  for (const line of text.split('\n')) {
    // A metric without labels is one series, `name value`.
    if ((line.startsWith(`${name}{`) || line.startsWith(`${name} `)) && labels.every(label => line.includes(label))) sum += Number(line.slice(line.lastIndexOf(' ') + 1))
  }
  return sum
}

export function assertWrk (): void {
  if (!hasCommand('wrk')) {
    console.error('npm run bench drives its load with wrk, a C load generator that costs the machine little: apt-get install wrk')
    process.exit(1)
  }
}

/** Stops the run with the Debian package to install when `command` is missing. */
export function assertCommand (command: string, why: string, debianPackage = command): void {
  if (!hasCommand(command)) {
    console.error(`${why}: apt-get install ${debianPackage}`)
    process.exit(1)
  }
}

/**
 * Sends one command to the Redis on `port` (inline protocol) and gives its reply's first line,
 * such as `+PONG` or `+OK`: enough for PING and FLUSHALL, without a client's reconnection logic.
 */
export async function redisCommand (port: number, command: string): Promise<string> {
  return await new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`${command}\r\n`))
    let reply = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      reply += chunk
      const end = reply.indexOf('\r\n')
      if (end >= 0) {
        socket.destroy()
        resolve(reply.slice(0, end))
      }
    })
    socket.on('error', reject)
  })
}

/**
 * A redis-server of its own on a free loopback port, writing nothing to disk, ready once it
 * answers PING. It runs on the load CPU, beside the emulator: like the nodes, it is something
 * the service talks to, and the service's CPU stays the service's.
 */
export async function startRedis (): Promise<{ child: ChildProcess, port: number }> {
  const port = await freePort()
  const [command, args] = pinned('load', 'redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'])
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'inherit'] })
  for (;;) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with code ${child.exitCode}`)
    try {
      if (await redisCommand(port, 'PING') === '+PONG') return { child, port }
    } catch {}
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}

const WRK_DIR = new URL('./wrk/', import.meta.url)
const scriptDir = mkdtempSync(join(tmpdir(), 'bench-wrk-'))

let scripts = 0

/**
 * The wrk command line for {@link wrk}: the scenario's script with the report appended, on the
 * load CPU. A file of its own each time: wrk reads its script again in each thread after it
 * starts, and a second wrk started beside it must not rewrite the file under it.
 */
function wrkCommand (url: string, durationS: number, script: string | undefined, args: string[]): [string, string[]] {
  const combined = join(scriptDir, `${scripts++}-${script ?? 'plain'}.lua`)
  writeFileSync(combined, (script ? readFileSync(new URL(script, WRK_DIR), 'utf8') : '') + readFileSync(new URL('report.lua', WRK_DIR), 'utf8'))
  return pinned('load', 'wrk', ['-t1', `-c${CONNECTIONS}`, `-d${durationS}s`, '-s', combined, url, ...(args.length ? ['--', ...args] : [])])
}

/** The figures of wrk's output, from the JSON line report.lua prints. */
function wrkMeasured (name: string, output: string): Measured {
  const line = output.split('\n').find(candidate => candidate.startsWith('{"requests"'))
  if (line === undefined) throw new Error(`wrk printed no report:\n${output}`)
  const report = JSON.parse(line) as { requests: number, durationUs: number, p50Us: number, p99Us: number, non2xx: number, socketErrors: number }
  return {
    name,
    requestsPerSecond: Math.round(report.requests / (report.durationUs / 1e6)),
    p50: report.p50Us / 1000,
    p99: report.p99Us / 1000,
    total: report.requests,
    errors: report.non2xx + report.socketErrors,
  }
}

/**
 * Loads `url` with wrk (one thread, {@link CONNECTIONS} connections) on the load CPU for
 * `durationS` seconds. `script` is a file of bench/wrk/ that makes the requests (none: GET `url`),
 * `args` its arguments.
 */
export function wrk (name: string, url: string, durationS: number, script?: string, args: string[] = []): Measured {
  const [command, argv] = wrkCommand(url, durationS, script, args)
  return wrkMeasured(name, execFileSync(command, argv, { encoding: 'utf8', maxBuffer: 1 << 20 }))
}

const execFileAsync = promisify(execFile)

/**
 * {@link wrk} without blocking this process, for loads that run side by side (one wrk per
 * instance: a wrk process loads one host).
 */
export async function wrkAsync (name: string, url: string, durationS: number, script?: string, args: string[] = []): Promise<Measured> {
  const [command, argv] = wrkCommand(url, durationS, script, args)
  return wrkMeasured(name, (await execFileAsync(command, argv, { encoding: 'utf8', maxBuffer: 1 << 20 })).stdout)
}

/** Loads `url` with autocannon in this process (the fault benchmark, whose emulators run here too). */
export async function load (name: string, url: string, durationS: number, options: { path?: () => string, post?: () => string } = {}): Promise<Measured> {
  const { path, post } = options
  const requests: autocannon.Request[] | undefined = path
    ? [{ setupRequest: request => ({ ...request, path: path() }) }]
    : post
      ? [{ method: 'POST', headers: { 'content-type': 'application/json' }, setupRequest: request => ({ ...request, body: post() }) }]
      : undefined
  const result = await autocannon({ url, connections: CONNECTIONS, duration: durationS, ...(requests ? { requests } : {}) })
  return {
    name,
    requestsPerSecond: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    errors: result.errors + result.timeouts + result.non2xx,
  }
}
