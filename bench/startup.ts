/**
 * How long the built service takes from `node` to listening, as `npm start` runs it (the issue
 * asks for under 2 s): started alone several times, then several instances side by side, as an
 * operator starting one per core would. Time is read from the spawn to the log line
 * "Server listening at", so the figure includes Node's own start.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { START_ARGS } from './harness.js'

export interface Start {
  /** Milliseconds from the spawn until the service logged that it listens. */
  ms: number
  /** CPU milliseconds the process had spent by then (Linux: /proc/<pid>/stat). */
  cpuMs: number
  /** Its resident memory then, in MB. */
  rssMb: number
}

/** CPU time and resident memory of a running process, from /proc (Linux's ticks are 1/100 s). */
function usageOf (pid: number): { cpuMs: number, rssMb: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const cpuMs = (Number(fields[11]) + Number(fields[12])) * 10
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1])
  return { cpuMs, rssMb: rssKb / 1024 }
}

/** Starts the service with `args` (the start script's by default), in `cwd`, and measures it until it listens. */
export async function measureStart (env: Record<string, string>, args = START_ARGS, cwd?: string): Promise<Start> {
  const started = performance.now()
  const child = spawn(process.execPath, args, {
    ...(cwd === undefined ? {} : { cwd }),
    env: { ...process.env, ...env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  try {
    return await new Promise<Start>((resolve, reject) => {
      createInterface({ input: child.stdout }).on('line', line => {
        if (line.includes('Server listening at')) resolve({ ms: performance.now() - started, ...usageOf(child.pid as number) })
      })
      child.once('exit', code => reject(new Error(`the service exited with code ${code} before listening`)))
    })
  } finally {
    child.kill('SIGTERM')
    if (child.exitCode === null) await once(child, 'exit')
  }
}

/** Milliseconds until the service logged that it listens. */
async function timeToListen (env: Record<string, string>): Promise<number> {
  return (await measureStart(env)).ms
}

export interface StartupTimes {
  /** One instance at a time. */
  alone: number[]
  /** Instances started at the same moment. */
  sideBySide: number[]
}

export async function measureStartup (env: Record<string, string>, runs = 5, instances = 4): Promise<StartupTimes> {
  const alone: number[] = []
  for (let run = 0; run < runs; run++) alone.push(await timeToListen(env))
  const sideBySide = await Promise.all(Array.from({ length: instances }, () => timeToListen(env)))
  return { alone, sideBySide }
}
