/**
 * The last resort once the embedded database has aborted: a call into an aborted PGlite can spin
 * on the main thread for ever (a lock its PostgreSQL held when it stopped), where no timer, signal
 * handler or request runs again, SIGTERM included. A worker thread still runs then: it watches a
 * heartbeat that the main thread's timers keep beating and, once the beat has stopped for
 * `stallMs`, writes `message` to stderr and kills the process (SIGKILL), for a supervisor to
 * restart it. A main thread that still turns, shutting down however slowly, is left alone.
 */
import { Worker } from 'node:worker_threads'

export interface StallWatchdogOptions {
  /** How long the main thread may stop turning before the process is killed. */
  stallMs: number
  /** The line written to stderr before the kill. */
  message: string
}

// CommonJS, evaluated in the worker: no import of the app's modules, nothing that waits on the main thread.
const WATCHDOG = `
const { workerData } = require('node:worker_threads')
const { writeSync } = require('node:fs')
const { beat, stallMs, message } = workerData
const pause = new Int32Array(new SharedArrayBuffer(4))
let last = Atomics.load(beat, 0)
for (;;) {
  Atomics.wait(pause, 0, 0, stallMs)
  const now = Atomics.load(beat, 0)
  if (now === last) {
    writeSync(2, message + '\\n')
    process.kill(process.pid, 'SIGKILL')
  }
  last = now
}
`

/** Starts the watchdog; it ends with the process, and keeps it alive no longer than it would live. */
export function startStallWatchdog ({ stallMs, message }: StallWatchdogOptions): void {
  const beat = new Int32Array(new SharedArrayBuffer(4))
  // Several beats per period: one late timer is not a stall.
  setInterval(() => { Atomics.add(beat, 0, 1) }, Math.max(1, Math.floor(stallMs / 4))).unref()
  // execArgv []: no --import of the parent's (a loader such as tsx may wait on the main thread).
  new Worker(WATCHDOG, { eval: true, execArgv: [], workerData: { beat, stallMs, message } }).unref()
}
