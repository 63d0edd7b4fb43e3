/**
 * `npm run demo`: the node emulator and the service wired together, offline.
 * The emulator listens on DEVNODE_PORT (default 38081) and mines a block every
 * DEVNODE_BLOCK_INTERVAL_MS (default a minute); the service listens on PORT (default 3000) with
 * POCKETNET_NODES pointing at the emulator, with sign-in on for the mini-app id
 * demo.pocketnet.app (set BASTYON_APP_ID to change it), and with tips on (docs/payments.md):
 * POST /api/payments/tips, paid to PAYMENT_ADDRESS (default an address of the emulator's network
 * that no wallet holds), confirmed after PAYMENT_CONFIRMATIONS blocks (default 2), the invoices in
 * DATA_DIR (default a temporary directory of this run's own, copied from the embedded database's
 * template in node_modules/.cache, scripts/pglite-template.ts, and removed when it stops: the
 * emulator's chain starts afresh each run, so earlier invoices would name transactions no node
 * knows). A Bastyon proxy's mini-app routes listen beside them (DEVNODE_BASTYON_PROXY_PORT, default
 * 38089, devnode/bastyon-proxy.ts), and the service may send notifications to it: the page's
 * "Notify me" registers the demo signer's user there (devnode/demo-notifications.ts) and opts them
 * in, and its gift (an entitlement granted) is told to them (NOTIFY_ON_ENTITLEMENT_GRANTED). Settings come
 * from the environment, then from `.env` if there is one (`cp .env.example .env`).
 *
 * Without Bastyon there is no host to pay with, so the emulator's controls are on (loopback only,
 * devnode/controls.ts: pay, mine, re-org over HTTP) and the service gets the demo wallet's routes
 * (devnode/demo-wallet.ts), which the page offers at `/?wallet=demo`, and a signer for sign-in in
 * a plain browser (devnode/demo-signer.ts, `/?signer=<name>`).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { addressOf, testKey } from '../devnode/bastyon-host.js'
import { DEMO_GIFT_SKU, mountDemoNotifications } from '../devnode/demo-notifications.js'
import { mountDemoSigner } from '../devnode/demo-signer.js'
import { mountDemoWallet } from '../devnode/demo-wallet.js'
import { PROXY_CONTROLS_PATH, startBastyonProxy } from '../devnode/bastyon-proxy.js'
import { CONTROLS_PATH, createEmulator } from '../devnode/server.js'
import { buildApp } from '../src/app.js'
import { ConfigError, loadConfig } from '../src/config.js'
import { copyTemplateTo } from './pglite-template.js'

// A .env of the developer's own (`cp .env.example .env`) is read first; the environment wins.
if (existsSync('.env')) process.loadEnvFile('.env')
// This machine only unless HOST says otherwise: the demo wallet pays from the emulator's wallet
// for whoever reaches the service, and the service's own default (every interface) is for servers.
process.env.HOST ??= '127.0.0.1'

const blockIntervalMs = Number(process.env.DEVNODE_BLOCK_INTERVAL_MS ?? 60_000)
if (!Number.isInteger(blockIntervalMs) || blockIntervalMs < 100) {
  console.error(`DEVNODE_BLOCK_INTERVAL_MS must be a whole number of milliseconds from 100 (got ${JSON.stringify(process.env.DEVNODE_BLOCK_INTERVAL_MS)})`)
  process.exit(1)
}

const emulator = await createEmulator({
  port: Number(process.env.DEVNODE_PORT ?? 38081),
  latencyMs: Number(process.env.DEVNODE_LATENCY_MS ?? 0),
  blockIntervalMs,
  // Refuse requests past a full work queue, as a real node does.
  workQueue: {},
  controls: true,
})

// A Bastyon proxy's mini-app routes (devnode/bastyon-proxy.ts): the service pushes notifications
// to it, and it records them (GET <proxy>/__proxy/pushes).
const demoAppId = process.env.BASTYON_APP_ID || 'demo.pocketnet.app'
const proxy = await startBastyonProxy({ port: Number(process.env.DEVNODE_BASTYON_PROXY_PORT ?? (process.env.DEVNODE_PORT === '0' ? 0 : 38089)), apps: { [demoAppId]: { name: 'Demo', scope: demoAppId } }, node: emulator.url })

const runDataDir = process.env.DATA_DIR === undefined ? mkdtempSync(join(tmpdir(), 'bastyon-demo-')) : undefined
// Initialised from the install's template rather than by initdb, which costs seconds at each start.
if (runDataDir !== undefined && !process.env.DATABASE_URL) await copyTemplateTo(runDataDir)
const removeRunDataDir = (): void => {
  if (runDataDir !== undefined) rmSync(runDataDir, { recursive: true, force: true })
}

let config
try {
  config = loadConfig({
    NODE_ENV: 'development',
    CORS_ORIGINS: '*',
    BASTYON_APP_ID: 'demo.pocketnet.app',
    PAYMENT_TIPS: 'true',
    PAYMENT_CONFIRMATIONS: '2',
    // The demo page's gift is told to the user who opted in (docs/notifications.md, "Events worth telling").
    NOTIFY_ON_ENTITLEMENT_GRANTED: 'true',
    ...(runDataDir === undefined ? {} : { DATA_DIR: runDataDir }),
    ...process.env,
    // Empty, as in .env.example, is no choice: the demo's own receiver.
    PAYMENT_ADDRESS: process.env.PAYMENT_ADDRESS || addressOf(testKey('demo-receiver')),
    POCKETNET_NODES: emulator.url,
    // The demo's proxy as well as those configured: a user opts in with it.
    NOTIFY_BASTYON_PROXIES: [proxy.url, process.env.NOTIFY_BASTYON_PROXIES].filter(Boolean).join(','),
  })
} catch (err) {
  if (!(err instanceof ConfigError)) throw err
  console.error(err.message)
  await emulator.close()
  await proxy.close()
  removeRunDataDir()
  process.exit(1)
}
const app = await buildApp(config).catch(async (err: unknown) => {
  await emulator.close()
  await proxy.close()
  removeRunDataDir()
  throw err
})
mountDemoWallet(app, { emulatorUrl: emulator.url })
/** The page's gift: an hour of `demo.gift`, which the service tells the user who opted in. */
const demoGift = async (address: string) => {
  const grant = await app.entitlements.grant(address, DEMO_GIFT_SKU, { durationS: 3600, reason: 'a gift from the demo page' })
  return { sku: grant.sku, grantId: grant.id }
}
if (config.BASTYON_APP_ID !== '') {
  mountDemoSigner(app, { appId: config.BASTYON_APP_ID })
  mountDemoNotifications(app, { appId: config.BASTYON_APP_ID, proxyUrl: proxy.url, gift: demoGift })
}
const shutdown = async (): Promise<void> => {
  await app.close()
  await emulator.close()
  await proxy.close()
  removeRunDataDir()
  process.exit(0)
}
process.once('SIGINT', shutdown)
process.once('SIGTERM', shutdown)

const address = await app.listen({ port: config.PORT, host: config.HOST })
const base = address.replace('0.0.0.0', '127.0.0.1').replace('[::]', '127.0.0.1')
const socket = app.server.address()
const listening = typeof socket === 'object' && socket !== null ? `${socket.address}:${socket.port}` : String(socket)
const user = emulator.dataset.users.find(candidate => !candidate.deleted)
const post = emulator.dataset.posts[0]
const tips = config.PAYMENT_TIPS
  ? `on, paid to ${config.PAYMENT_ADDRESS}, confirmed after ${config.PAYMENT_CONFIRMATIONS} blocks (by Bastyon's SDK, or the demo wallet)`
  : 'off (PAYMENT_TIPS=false in the environment or .env)'
const controls = `${emulator.url}${CONTROLS_PATH}`
const tipTries = `
  curl -X POST -H 'content-type: application/json' -d '{"amount":1000000}' ${base}/api/payments/tips
Pay that invoice as the host would (the receiver, its amount in satoshi, its memo), then mine:
  curl -H 'content-type: application/json' -d '{"to":"${config.PAYMENT_ADDRESS}","amountSat":1000000,"memo":"<memo>"}' ${controls}/pay
  curl -X POST ${controls}/mine`
console.log(`
Pocketnet node emulator: ${emulator.url} (controls: POST ${controls}/pay, /mine, /disconnect)
Bastyon proxy:           ${proxy.url} (notifications pushed: ${proxy.url}${PROXY_CONTROLS_PATH}/pushes)
Service:                 ${base}  (listening on ${listening})
Demo page:               ${base}/?wallet=demo&signer=demo  (the emulator's wallet pays tips, a made-up user signs in; ${base}/ as outside the demo)
API docs:                ${base}/docs
Tips:                    ${tips}
Invoices:                ${config.DATABASE_URL === '' ? config.DATA_DIR : 'DATABASE_URL'}

Try:
  curl ${base}/api/nodeinfo
  curl ${base}/api/user/${user?.address ?? '<address>'}
  curl '${base}/api/search?keyword=bitcoin&page=0&pageSize=5'
  curl ${base}/api/post/${post?.hash ?? '<hash>'}
  curl -X POST ${base}/api/auth/challenge${config.PAYMENT_TIPS ? tipTries : ''}
`)
