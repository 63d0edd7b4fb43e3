#!/usr/bin/env node
/**
 * `npx bastyon-devnode`: the node emulator alone, as `npm run devnode` runs it in the repository
 * (devnode/cli.ts, compiled into this package), configured by the same environment variables.
 */
const HELP = `bastyon-devnode: an offline Pocketnet node for developing and testing a Bastyon mini-app.

Environment:
  DEVNODE_HOST               127.0.0.1
  DEVNODE_PORT               38081 (the RPC; 0: a free port)
  DEVNODE_WS_PORT            38087 (the node's WebSocket, getnodeinfo's ports.wss; 0: a free port)
  DEVNODE_LATENCY_MS         0 (added before every answer)
  DEVNODE_BLOCK_INTERVAL_MS  60000 (mines a block every N ms)
  DEVNODE_VERSION            0.22.7 (reported by getnodeinfo)
  DEVNODE_WORK_QUEUE         4/16 (worker threads/most waiting, as a real node; off: serve all at once)
  DEVNODE_CONTROLS           loopback (POST /devnode/pay, /mine, /disconnect, /reconnect from this
                             machine; any: from any client; off)
  DEVNODE_BASTYON_PROXY_PORT off (a port for a Bastyon proxy's mini-app routes beside the node:
                             opt-in tokens and sendNotification, pushes recorded; 0: a free port)
  DEVNODE_BASTYON_APP_ID     demo.pocketnet.app (the app that proxy pushes for)

Point the service at it with POCKETNET_NODES=http://127.0.0.1:38081. Stop it with Ctrl-C.`

if (process.argv.includes('--help') || process.argv.includes('-h')) console.log(HELP)
else await import('../../../../devnode/cli.js')
