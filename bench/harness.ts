/** What the benchmarks share: child processes, ports, and one autocannon run. */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { createInterface } from 'node:readline'
import autocannon from 'autocannon'

export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50)

export interface Measured {
  name: string
  requestsPerSecond: number
  p50: number
  p99: number
  /** Requests answered, 2xx or not. */
  total: number
  errors: number
  upstreamPer1000?: number
  peakRssMb?: number
}

export async function startChild (script: string, args: string[], env: Record<string, string>): Promise<{ child: ChildProcess, port: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] })
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })
  for await (const line of lines) {
    try {
      const { port } = JSON.parse(line) as { port?: number }
      if (port) return { child, port }
    } catch {}
  }
  throw new Error(`${script} exited before printing its port`)
}

/** A free loopback port: listen on 0, read it, close. */
export async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise(resolve => server.close(resolve))
  return port
}

/** The built service, exactly as `npm start` runs it. */
export async function startService (env: Record<string, string>): Promise<{ child: ChildProcess, port: number }> {
  const port = await freePort()
  const child = spawn(process.execPath, ['dist/src/server.js'], { env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' }, stdio: ['ignore', 'ignore', 'inherit'] })
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited with code ${child.exitCode}`)
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return { child, port }
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
