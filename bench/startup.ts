/**
 * How long the built service takes from `node` to listening, as `npm start` runs it (the issue
 * asks for under 2 s): started alone several times, then several instances side by side, as an
 * operator starting one per core would. Time is read from the spawn to the log line
 * "Server listening at", so the figure includes Node's own start.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { START_ARGS } from './harness.js'

/** Milliseconds until the service logged that it listens. */
async function timeToListen (env: Record<string, string>): Promise<number> {
  const started = performance.now()
  const child = spawn(process.execPath, START_ARGS, {
    env: { ...process.env, ...env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  try {
    return await new Promise<number>((resolve, reject) => {
      createInterface({ input: child.stdout }).on('line', line => {
        if (line.includes('Server listening at')) resolve(performance.now() - started)
      })
      child.once('exit', code => reject(new Error(`the service exited with code ${code} before listening`)))
    })
  } finally {
    child.kill('SIGTERM')
    if (child.exitCode === null) await once(child, 'exit')
  }
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
