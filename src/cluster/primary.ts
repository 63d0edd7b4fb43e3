/**
 * The cluster's primary process (WEB_CONCURRENCY above 1). It forks the workers, each a full
 * instance that runs src/server.ts and listens on PORT (node:cluster shares the one socket and
 * hands connections out round-robin), replaces a worker that dies, gives up when they keep dying
 * (restart-policy.ts), and on SIGTERM or SIGINT asks every worker to finish its requests in flight
 * and exit; it exits 0 once every worker exited 0. A second signal kills the workers and exits 130.
 * It builds no app: it serves no request and holds no cache. It only gathers the workers' metrics
 * when one of them is scraped (cluster-metrics.ts).
 */
import cluster, { type Address, type Worker } from 'node:cluster'
import type { AppConfig } from '../config.js'
import { answerMetricsRequests } from './cluster-metrics.js'
import { createPrimaryLog, type PrimaryLog } from './primary-log.js'
import { RestartPolicy } from './restart-policy.js'
import { SHUTDOWN_MESSAGE } from './shutdown-requests.js'
import { SignalCount } from '../signal-count.js'

/**
 * How long past SHUTDOWN_TIMEOUT_MS the primary waits for the workers: each exits by its own
 * timer at the timeout, so one still running then is stuck (or was still starting) and is killed.
 */
const STUCK_AFTER_MS = 5000

export function runPrimary (config: AppConfig): void {
  new Primary(config, createPrimaryLog(config.LOG_LEVEL), new RestartPolicy(), new SignalCount()).start()
}

class Primary {
  readonly #config: AppConfig
  readonly #log: PrimaryLog
  readonly #policy: RestartPolicy
  readonly #signals: SignalCount
  readonly #workers = new Set<Worker>()
  /** Workers that listen, so have their shutdown listener installed: a message sent earlier would be lost. */
  readonly #listening = new Set<Worker>()
  readonly #restarts = new Set<NodeJS.Timeout>()
  /** Set once shutting down: the code to exit with when the last worker is gone. */
  #exitCode: number | undefined

  constructor (config: AppConfig, log: PrimaryLog, policy: RestartPolicy, signals: SignalCount) {
    this.#config = config
    this.#log = log
    this.#policy = policy
    this.#signals = signals
  }

  start (): void {
    cluster.on('listening', (worker, address) => this.#onListening(worker, address))
    cluster.on('exit', (worker, code, signal) => this.#onExit(worker, code, signal))
    process.on('SIGTERM', signal => this.#onSignal(signal))
    process.on('SIGINT', signal => this.#onSignal(signal))
    answerMetricsRequests(err => this.#log.warn({ err: { message: err.message } }, 'could not collect the cluster\'s metrics: that scrape got one worker\'s'))
    this.#log.info({ workers: this.#config.WEB_CONCURRENCY }, 'primary started: forking workers')
    for (let i = 0; i < this.#config.WEB_CONCURRENCY; i++) this.#fork()
  }

  #fork (): void {
    // cluster.fork runs process.argv[1] with process.execArgv: the same node flags (and tsx's loader in development).
    const worker = cluster.fork()
    this.#workers.add(worker)
    worker.on('error', err => this.#log.error({ workerPid: worker.process.pid, err: { message: err.message } }, 'worker channel error'))
    this.#log.info({ workerId: worker.id, workerPid: worker.process.pid }, 'worker forked')
  }

  #onListening (worker: Worker, address: Address): void {
    this.#listening.add(worker)
    this.#log.info({ workerId: worker.id, workerPid: worker.process.pid, address: address.address, port: address.port }, 'worker listening')
    if (this.#exitCode !== undefined) this.#askToStop(worker)
  }

  #onExit (worker: Worker, code: number | null, signal: string | null): void {
    this.#workers.delete(worker)
    this.#listening.delete(worker)
    const fields = { workerId: worker.id, workerPid: worker.process.pid, code, signal }
    if (this.#exitCode !== undefined) {
      if (code !== 0) this.#exitCode = 1
      this.#log.info(fields, 'worker exited')
      if (this.#workers.size === 0) this.#exit()
      return
    }
    const restartInMs = this.#policy.crashed()
    if (restartInMs === undefined) {
      this.#log.fatal({ ...fields, crashes: this.#policy.recentCrashes, windowMs: this.#policy.windowMs }, `workers keep dying (${this.#policy.recentCrashes} within ${this.#policy.windowMs} ms): giving up`)
      this.#stop(1)
      return
    }
    this.#log.error({ ...fields, restartInMs }, 'worker died: starting another')
    const timer = setTimeout(() => {
      this.#restarts.delete(timer)
      this.#fork()
    }, restartInMs)
    this.#restarts.add(timer)
  }

  #onSignal (signal: NodeJS.Signals): void {
    const kind = this.#signals.record(signal)
    if (kind === 'again') return
    if (kind === 'second') {
      this.#log.warn({ signal, workerPids: this.#pids() }, 'second signal: killing the workers, exiting now')
      for (const worker of this.#workers) worker.process.kill('SIGKILL')
      process.exit(130)
    }
    // Already stopping (given up on crashes): this signal only counts as the first.
    if (this.#exitCode !== undefined) return
    this.#log.info({ signal, workers: this.#workers.size, timeoutMs: this.#config.SHUTDOWN_TIMEOUT_MS }, 'shutting down: the workers finish their requests in flight')
    this.#stop(0)
  }

  #stop (exitCode: number): void {
    this.#exitCode = exitCode
    for (const timer of this.#restarts) clearTimeout(timer)
    this.#restarts.clear()
    if (this.#workers.size === 0) {
      this.#exit()
      return
    }
    // A worker still starting is asked once it listens (#onListening).
    for (const worker of this.#listening) this.#askToStop(worker)
    setTimeout(() => {
      this.#log.error({ workerPids: this.#pids() }, 'workers still running past the shutdown timeout: killing them')
      for (const worker of this.#workers) worker.process.kill('SIGKILL')
      process.exit(1)
    }, this.#config.SHUTDOWN_TIMEOUT_MS + STUCK_AFTER_MS)
  }

  #askToStop (worker: Worker): void {
    // A worker that is exiting has no channel left; its exit comes all the same.
    if (worker.isConnected()) worker.send(SHUTDOWN_MESSAGE, () => {})
  }

  #exit (): never {
    const exitCode = this.#exitCode ?? 1
    this.#log.info({ exitCode }, 'shut down')
    process.exit(exitCode)
  }

  #pids (): Array<number | undefined> {
    return [...this.#workers].map(worker => worker.process.pid)
  }
}
