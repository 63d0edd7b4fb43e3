/**
 * Runs the built service as its own process, as `npm start` does (`node` with the start
 * script's V8 flags on dist/server.js, plus short-lived-node.ts's; built.ts builds it once), and
 * reads its stdout as JSON log lines: for tests of the process itself (signals, exit codes,
 * cluster workers). Kills what is left of it when the test ends.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { jsonGetter, type TestApp } from './build-app.js'
import { ensureBuilt } from './built.js'
import { SHORT_LIVED_NODE_FLAGS } from './short-lived-node.js'

const ROOT = new URL('../../', import.meta.url).pathname

/** One pino line (the workers') or one of the cluster primary's, which has `name: 'primary'`. */
export type LogLine = Record<string, unknown> & { pid: number, msg: string }

export interface ServiceProcess {
  child: ChildProcess
  /** Every JSON line written to stdout so far, in order. */
  lines: LogLine[]
  /** Everything written to stderr so far. */
  stderr (): string
  /** The first line, already logged or still to come, that `match` accepts; rejects if the process exits first. */
  line (what: string, match: (line: LogLine) => boolean): Promise<LogLine>
  /** Resolves once the process exited and its stdout ended, with its exit code (null if killed by a signal) and signal. */
  exited: Promise<{ code: number | null, signal: NodeJS.Signals | null }>
}

type WithAfter = { after (fn: () => unknown): void }

export interface StartOptions {
  /** Leads a process group of its own, as a terminal's foreground job does, so that `kill(-pid)` reaches it and its workers as Ctrl+C would. */
  group?: boolean
  /** Starts it with this limit on open files (`ulimit -n`, through sh), for tests of running out of descriptors. */
  openFiles?: number
}

/** The URL the service logged it listens at, once it does. */
export async function listeningUrl (service: ServiceProcess): Promise<string> {
  const line = await service.line('the server listening', candidate => /Server listening at http:\/\/127\.0\.0\.1:\d+/.test(candidate.msg))
  return (/http:\/\/127\.0\.0\.1:\d+/.exec(line.msg) as RegExpExecArray)[0]
}

/** The service in a process as the sign-in helpers call a test app: its URL and a fetch that reads JSON (no Fastify instance). */
export async function processAsTestApp (service: ServiceProcess): Promise<TestApp> {
  const url = await listeningUrl(service)
  return { app: undefined as never, url, get: jsonGetter(url) }
}

export function startService (t: WithAfter, env: Record<string, string>, options: StartOptions = {}): ServiceProcess {
  ensureBuilt()
  const command = [process.execPath, '--retain-maps-for-n-gc=1000', '--wasm-tiering-budget=20000', ...SHORT_LIVED_NODE_FLAGS, 'dist/server.js']
  // exec: the shell becomes the service, so the child's pid is the service's.
  const [file, ...args] = options.openFiles === undefined ? command : ['sh', '-c', `ulimit -n ${options.openFiles} && exec "$@"`, 'sh', ...command]
  const child = spawn(file as string, args, {
    cwd: ROOT,
    detached: options.group ?? false,
    // No node WebSocket unless a test asks: these tests count the calls the node sees.
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', NODE_ENV: 'production', EVENTS_INGEST: 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const lines: LogLine[] = []
  const waiters = new Set<{ match: (line: LogLine) => boolean, resolve: (line: LogLine) => void }>()
  let stderr = ''
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', text => {
    let line: LogLine
    try {
      line = JSON.parse(text) as LogLine
    } catch {
      return
    }
    lines.push(line)
    for (const waiter of waiters) {
      if (waiter.match(line)) {
        waiters.delete(waiter)
        waiter.resolve(line)
      }
    }
  })
  // 'close' rather than 'exit': it comes once the process exited and every line of its stdout,
  // the workers' included, was read.
  const exited = once(child, 'close').then(([code, signal]) => ({ code: code as number | null, signal: signal as NodeJS.Signals | null }))
  // Killing the primary is enough after a failed test: cluster workers exit when their channel to it closes.
  t.after(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  return {
    child,
    lines,
    stderr: () => stderr,
    line (what, match) {
      const seen = lines.find(match)
      if (seen !== undefined) return Promise.resolve(seen)
      return new Promise((resolve, reject) => {
        waiters.add({ match, resolve })
        exited.then(() => reject(new Error(`the service ended before logging ${what}; stderr: ${stderr}`)), reject)
      })
    },
    exited,
  }
}
