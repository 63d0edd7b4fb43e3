/**
 * Process entry: load the config, build the app, listen, and shut down gracefully
 * (close-with-grace): on SIGTERM or SIGINT stop accepting, finish the requests in flight within
 * SHUTDOWN_TIMEOUT_MS, close the RPC client's sockets and timers, exit 0; past the timeout exit 1;
 * a second signal exits at once (130), but not a SIGINT that only repeats the first (Ctrl+C under
 * `npm start` arrives twice). An uncaught error closes the same way and exits 1.
 *
 * With WEB_CONCURRENCY above 1 this process is the cluster's primary instead (cluster/primary.ts):
 * it forks that many workers, each of which runs this file again and takes the path above, except
 * that the primary decides when to stop (cluster/shutdown-requests.ts).
 *
 * Run it built (`npm run build`, then `npm start`): V8 settings, if any, go on the `node` command
 * line in package.json's start script and the Dockerfile, never set from inside the process.
 */
import cluster from 'node:cluster'
import closeWithGrace from 'close-with-grace'
import { WorkerMetrics } from './cluster/cluster-metrics.js'
import { ShutdownRequests, SHUTDOWN_SIGNALS } from './cluster/shutdown-requests.js'
import { ConfigError, loadConfig, type AppConfig } from './config.js'
import { SignalCount } from './signal-count.js'

let config
try {
  config = loadConfig(process.env)
} catch (err) {
  if (!(err instanceof ConfigError)) throw err
  console.error(err.message)
  process.exit(1)
}
if (cluster.isPrimary && config.WEB_CONCURRENCY > 1) {
  // Imported only here, and the app only in serve(): the primary serves nothing and builds no app.
  const { runPrimary } = await import('./cluster/primary.js')
  runPrimary(config)
} else {
  await serve(config)
}

async function serve (config: AppConfig): Promise<void> {
  // In a worker, from the start: the primary may ask to stop while the app is still being built.
  const requests = cluster.isWorker ? new ShutdownRequests() : undefined
  // Likewise: a scrape of another worker asks this one for its metrics, from the start. Only in our
  // own cluster: under another process manager's (WEB_CONCURRENCY=1) no primary would answer.
  const workerMetrics = cluster.isWorker && config.WEB_CONCURRENCY > 1 ? new WorkerMetrics() : undefined
  const { buildApp } = await import('./app.js')
  const app = await buildApp(config).catch((err: unknown) => {
    console.error(`Could not start: ${err instanceof Error ? err.message : String(err)}`)
    process.exit(1)
  })
  // GET /metrics in a worker answers the whole cluster's (cluster/cluster-metrics.ts).
  if (workerMetrics !== undefined) app.metrics.scrapeWith(workerMetrics.scrapeOf(app.metrics.registry))
  let closing = false
  let requestedBy: string | undefined
  const { close } = closeWithGrace({
    delay: config.SHUTDOWN_TIMEOUT_MS,
    logger: false,
    // In a worker these signals are shutdown requests (above), never a second signal; alone,
    // SIGINT is counted below, where the same Ctrl+C relayed by npm is not a second one.
    skip: requests ? [...SHUTDOWN_SIGNALS] : ['SIGINT'],
    onSecondSignal (signal) {
      app.log.warn({ signal }, 'second signal: exiting now')
      process.exit(130)
    },
    onTimeout (delay) {
      app.log.error({ timeoutMs: delay }, 'shutdown timed out: exiting with requests unfinished')
    },
  }, async ({ signal, err }) => {
    closing = true
    if (err !== undefined) app.log.fatal({ err }, 'uncaught error: shutting down')
    app.log.info({ signal, requestedBy, timeoutMs: config.SHUTDOWN_TIMEOUT_MS }, 'shutting down: finishing requests in flight')
    await app.close()
    app.log.info('shut down')
  })
  if (requests === undefined) {
    // Ctrl+C under `npm start` arrives twice (from the terminal, and relayed by npm): the repeat
    // is not a second signal. Any other signal after the first is (close-with-grace's SIGTERM too).
    const signals = new SignalCount()
    process.on('SIGINT', () => {
      const kind = signals.record('SIGINT')
      if (!closing) {
        requestedBy = 'SIGINT'
        close()
      } else if (kind !== 'again') {
        app.log.warn({ signal: 'SIGINT' }, 'second signal: exiting now')
        process.exit(130)
      }
    })
  }
  try {
    await app.listen({ port: config.PORT, host: config.HOST })
  } catch (err) {
    app.log.fatal({ err }, 'could not start')
    process.exit(1)
  }
  // Not before listening: closing would race listen(). An uncaught error may be closing already.
  requests?.handleWith(requester => {
    if (closing) return
    requestedBy = requester
    close()
  })
}
