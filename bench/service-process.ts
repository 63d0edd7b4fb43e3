/**
 * The service as the benchmark runs it: its own process, configured from the environment,
 * listening on a free loopback port that it prints as JSON on stdout.
 */
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'

const app = await buildApp(loadConfig(process.env))
await app.listen({ port: 0, host: '127.0.0.1' })
const address = app.server.address() as { port: number }
console.log(JSON.stringify({ port: address.port }))
process.on('SIGTERM', () => {
  app.close().then(() => process.exit(0), () => process.exit(1))
})
