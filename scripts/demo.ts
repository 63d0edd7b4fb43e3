/**
 * `npm run demo`: the node emulator and the service wired together, offline.
 * The emulator listens on DEVNODE_PORT (default 38081) and mines a block a minute; the service
 * listens on PORT (default 3000) with POCKETNET_NODES pointing at the emulator, and with sign-in
 * on for the mini-app id demo.pocketnet.app (set BASTYON_APP_ID to change it). Settings come
 * from the environment, then from `.env` if there is one (`cp .env.example .env`).
 */
import { existsSync } from 'node:fs'
import { createEmulator } from '../devnode/server.js'
import { buildApp } from '../src/app.js'
import { ConfigError, loadConfig } from '../src/config.js'

// A .env of the developer's own (`cp .env.example .env`) is read first; the environment wins.
if (existsSync('.env')) process.loadEnvFile('.env')

const emulator = await createEmulator({
  port: Number(process.env.DEVNODE_PORT ?? 38081),
  latencyMs: Number(process.env.DEVNODE_LATENCY_MS ?? 0),
  blockIntervalMs: 60_000,
  // Refuse requests past a full work queue, as a real node does.
  workQueue: {},
})

let config
try {
  config = loadConfig({ NODE_ENV: 'development', CORS_ORIGINS: '*', BASTYON_APP_ID: 'demo.pocketnet.app', ...process.env, POCKETNET_NODES: emulator.url })
} catch (err) {
  if (!(err instanceof ConfigError)) throw err
  console.error(err.message)
  await emulator.close()
  process.exit(1)
}
const app = await buildApp(config)
const shutdown = async (): Promise<void> => {
  await app.close()
  await emulator.close()
  process.exit(0)
}
process.once('SIGINT', shutdown)
process.once('SIGTERM', shutdown)

const address = await app.listen({ port: config.PORT, host: config.HOST })
const base = address.replace('0.0.0.0', '127.0.0.1').replace('[::]', '127.0.0.1')
const user = emulator.dataset.users.find(candidate => !candidate.deleted)
const post = emulator.dataset.posts[0]
console.log(`
Pocketnet node emulator: ${emulator.url}
Service:                 ${base}
Demo page:               ${base}/
API docs:                ${base}/docs

Try:
  curl ${base}/api/nodeinfo
  curl ${base}/api/user/${user?.address ?? '<address>'}
  curl '${base}/api/search?keyword=bitcoin&page=0&pageSize=5'
  curl ${base}/api/post/${post?.hash ?? '<hash>'}
  curl -X POST ${base}/api/auth/challenge
`)
