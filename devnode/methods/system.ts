/** The node itself: getnodeinfo. */
import type { ChainState } from './common.js'

/** `wsPort`: the port of the node's WebSocket, which the node reports as `ports.wss`. */
export function nodeInfo (chain: ChainState, wsPort = 8087): Record<string, unknown> {
  const height = chain.height - chain.lag
  return {
    version: chain.version,
    time: chain.blockTime,
    chain: 'main',
    proxy: true,
    netstakeweight: 51_234_567_890_123,
    lastblock: { height, hash: chain.blockHash, time: chain.blockTime, ntx: 2 + (height % 9) },
    proxies: [],
    ports: { node: 37070, api: 38081, rest: 38080, wss: wsPort, http: 38081, https: 38881 },
  }
}
