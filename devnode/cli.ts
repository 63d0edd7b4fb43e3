/**
 * `npm run devnode`: the emulator alone, for a front-end or pocketnet-client developer without a
 * node.
 * Environment: DEVNODE_HOST (127.0.0.1), DEVNODE_PORT (38081), DEVNODE_WS_PORT (38087, the node's
 * WebSocket, reported by getnodeinfo as `ports.wss`), DEVNODE_LATENCY_MS (0),
 * DEVNODE_BLOCK_INTERVAL_MS (60000), DEVNODE_VERSION (0.22.7),
 * DEVNODE_WORK_QUEUE (4/16: worker threads/most waiting, as a real node; `off` serves all at once),
 * DEVNODE_CONTROLS (`loopback`: pay, mine and re-org over HTTP from this machine, controls.ts;
 * `any`: from any client; `off`), DEVNODE_BASTYON_PROXY_PORT (`off`; a port for a Bastyon proxy's
 * mini-app routes beside the node, bastyon-proxy.ts, `0` a free one) and DEVNODE_BASTYON_APP_ID
 * (demo.pocketnet.app, the app that proxy pushes for).
 */
import { PROXY_CONTROLS_PATH, startBastyonProxy } from './bastyon-proxy.js'
import { CONTROLS_PATH, createEmulator, type ControlOptions, type WorkQueueModel } from './server.js'

function parseWorkQueue (value: string): WorkQueueModel | undefined {
  if (value === 'off') return undefined
  const match = /^(\d+)\/(\d+)$/.exec(value)
  if (!match || Number(match[1]) < 1) {
    console.error(`DEVNODE_WORK_QUEUE must be threads/depth with at least one thread (e.g. 4/16), or off; got "${value}"`)
    process.exit(1)
  }
  return { threads: Number(match[1]), depth: Number(match[2]) }
}

function parseControls (value: string): ControlOptions | false {
  if (value === 'off') return false
  if (value === 'loopback' || value === 'any') return { remote: value === 'any' }
  console.error(`DEVNODE_CONTROLS must be loopback, any or off; got "${value}"`)
  process.exit(1)
}

const controlOptions = parseControls(process.env.DEVNODE_CONTROLS ?? 'loopback')
const emulator = await createEmulator({
  host: process.env.DEVNODE_HOST ?? '127.0.0.1',
  port: Number(process.env.DEVNODE_PORT ?? 38081),
  wsPort: Number(process.env.DEVNODE_WS_PORT ?? 38087),
  latencyMs: Number(process.env.DEVNODE_LATENCY_MS ?? 0),
  blockIntervalMs: Number(process.env.DEVNODE_BLOCK_INTERVAL_MS ?? 60_000),
  version: process.env.DEVNODE_VERSION ?? '0.22.7',
  workQueue: parseWorkQueue(process.env.DEVNODE_WORK_QUEUE ?? '4/16'),
  controls: controlOptions,
})
const user = emulator.dataset.users[0]
const controls = controlOptions
  ? `
Pay, then mine (controls: ${emulator.url}${CONTROLS_PATH}/pay, /mine, /disconnect):
  curl -s ${emulator.url}${CONTROLS_PATH}/pay -H 'content-type: application/json' -d '{"to":"${user?.address}","amountSat":150000000,"memo":"hello"}'
  curl -s -X POST ${emulator.url}${CONTROLS_PATH}/mine`
  : ''
console.log(`Pocketnet node emulator listening on ${emulator.url} (height ${emulator.height}), WebSocket on ${emulator.webSocket.url}
Try: curl -s ${emulator.url}/public/ -d '{"method":"getuserprofile","params":["${user?.address}","1"]}'${controls}`)

const proxyPort = process.env.DEVNODE_BASTYON_PROXY_PORT ?? 'off'
if (proxyPort !== 'off' && !/^\d{1,5}$/.test(proxyPort)) {
  console.error(`DEVNODE_BASTYON_PROXY_PORT must be a port number or off; got "${proxyPort}"`)
  process.exit(1)
}
const appId = process.env.DEVNODE_BASTYON_APP_ID ?? 'demo.pocketnet.app'
const proxy = proxyPort === 'off'
  ? undefined
  : await startBastyonProxy({ host: process.env.DEVNODE_HOST ?? '127.0.0.1', port: Number(proxyPort), apps: { [appId]: { name: 'Demo', scope: appId } }, node: emulator.url })
if (proxy !== undefined) {
  console.log(`Bastyon proxy (mini-app routes) on ${proxy.url}, pushing for ${appId}: the pushes at ${proxy.url}${PROXY_CONTROLS_PATH}/pushes`)
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    Promise.all([emulator.close(), proxy?.close()]).then(() => process.exit(0), () => process.exit(1))
  })
}
