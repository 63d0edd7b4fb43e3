/**
 * Process entry: load the config, build the app, listen, and shut down gracefully: on SIGTERM
 * or SIGINT stop accepting, finish the requests in flight within SHUTDOWN_TIMEOUT_MS, close the
 * RPC client's sockets and timers, exit 0. A second signal exits at once (code 130).
 */
import { capHeapGrowth, keepTickShape } from './v8-tuning.js'

async function main (): Promise<void> {
  // First of all: loading the modules runs the first full collections (v8-tuning.ts says why).
  keepTickShape()
  const { ConfigError, loadConfig } = await import('./config.js')
  let config
  try {
    config = loadConfig(process.env)
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err
    console.error(err.message)
    process.exit(1)
  }
  capHeapGrowth(config.HEAP_GROWING_PERCENT)
  const { buildApp } = await import('./app.js')
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
