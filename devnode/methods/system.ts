/** The node itself: getnodeinfo. */
import type { ChainState } from './common.js'

export function nodeInfo (chain: ChainState): Record<string, unknown> {
  const height = chain.height - chain.lag
  return {
    version: chain.version,
    time: chain.blockTime,
    chain: 'main',
    proxy: true,
    netstakeweight: 51_234_567_890_123,
    lastblock: { height, hash: chain.blockHash, time: chain.blockTime, ntx: 2 + (height % 9) },
    proxies: [],
    ports: { node: 37070, api: 38081, rest: 38080, wss: 8087, http: 38081, https: 38881 },
  }
}
