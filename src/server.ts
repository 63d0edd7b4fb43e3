/** Process entry: load the config, build the app, listen, and close cleanly on a signal. */
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
  const app = await buildApp(config)
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      app.log.info({ signal }, 'closing')
      app.close().then(() => process.exit(0), (err: unknown) => {
        app.log.error({ err }, 'close failed')
        process.exit(1)
      })
    })
  }
  await app.listen({ port: config.PORT, host: config.HOST })
}

await main()
