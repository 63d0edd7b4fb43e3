/**
 * Process entry: load the config, build the app, listen, and shut down gracefully: on SIGTERM
 * or SIGINT stop accepting, finish the requests in flight within SHUTDOWN_TIMEOUT_MS, close the
 * RPC client's sockets and timers, exit 0. A second signal exits at once (code 130).
 */
import { setFlagsFromString } from 'node:v8'
import { buildApp } from './app.js'
import { ConfigError, loadConfig } from './config.js'

async function main (): Promise<void> {
  let config
  try {
    config = loadConfig(process.env)
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err
    console.error(err.message)
    process.exit(1)
  }
  // V8 lets the heap grow up to four times its live size between full collections. A service's
  // live data is small (tens of MB) but it allocates fast, so the peak memory was mostly garbage;
  // a lower growth keeps it near the live size, for cheap concurrent marking more often.
  if (config.HEAP_GROWING_PERCENT > 0) setFlagsFromString(`--heap-growing-percent=${config.HEAP_GROWING_PERCENT}`)
  const app = await buildApp(config)
  let closing = false
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (closing) {
        app.log.warn({ signal }, 'second signal: exiting now')
        process.exit(130)
      }
      closing = true
      app.log.info({ signal, timeoutMs: config.SHUTDOWN_TIMEOUT_MS }, 'shutting down: finishing requests in flight')
      const deadline = setTimeout(() => {
        app.log.error('shutdown timed out: exiting with requests unfinished')
        process.exit(1)
      }, config.SHUTDOWN_TIMEOUT_MS)
      deadline.unref()
      app.close().then(() => {
        app.log.info('shut down')
        process.exit(0)
      }, (err: unknown) => {
        app.log.error({ err }, 'shutdown failed')
        process.exit(1)
      })
    })
  }
  await app.listen({ port: config.PORT, host: config.HOST })
}

await main()
