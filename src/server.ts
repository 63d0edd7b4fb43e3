/**
 * Process entry: load the config, build the app, listen, and shut down gracefully
 * (close-with-grace): on SIGTERM or SIGINT stop accepting, finish the requests in flight within
 * SHUTDOWN_TIMEOUT_MS, close the RPC client's sockets and timers, exit 0; past the timeout exit 1;
 * a second signal exits at once (130). An uncaught error closes the same way and exits 1.
 *
 * Run it built (`npm run build`, then `npm start`): V8 settings, if any, go on the `node` command
 * line in package.json's start script and the Dockerfile, never set from inside the process.
 */
import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.js'
import { ConfigError, loadConfig } from './config.js'

let config
try {
  config = loadConfig(process.env)
} catch (err) {
  if (!(err instanceof ConfigError)) throw err
  console.error(err.message)
  process.exit(1)
}
const app = await buildApp(config).catch((err: unknown) => {
  console.error(`Could not start: ${err instanceof Error ? err.message : String(err)}`)
  process.exit(1)
})
closeWithGrace({
  delay: config.SHUTDOWN_TIMEOUT_MS,
  logger: false,
  onSecondSignal (signal) {
    app.log.warn({ signal }, 'second signal: exiting now')
    process.exit(130)
  },
  onTimeout (delay) {
    app.log.error({ timeoutMs: delay }, 'shutdown timed out: exiting with requests unfinished')
  },
}, async ({ signal, err }) => {
  if (err !== undefined) app.log.fatal({ err }, 'uncaught error: shutting down')
  app.log.info({ signal, timeoutMs: config.SHUTDOWN_TIMEOUT_MS }, 'shutting down: finishing requests in flight')
  await app.close()
  app.log.info('shut down')
})
try {
  await app.listen({ port: config.PORT, host: config.HOST })
} catch (err) {
  app.log.fatal({ err }, 'could not start')
  process.exit(1)
}
