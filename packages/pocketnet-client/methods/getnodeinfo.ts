/** `getnodeinfo`: the node's version, chain and last block. No params. */
import { RpcTransportError } from '../errors.js'
import type { MethodSpec } from './method-spec.js'

export interface NodeInfo {
  version: string
  /** Unix seconds; frozen by the node's cache until the next block. */
  time: number
  chain: string
  proxy?: boolean
  netstakeweight?: number
  lastblock: { height: number, hash: string, time: number, ntx?: number }
  proxies?: unknown[]
  ports?: Record<string, number>
  [field: string]: unknown
}

export const getnodeinfo: MethodSpec<void, NodeInfo> = {
  name: 'getnodeinfo',
  toWire: () => ({}),
  fromWire (result) {
    const info = result as NodeInfo | null
    if (typeof info !== 'object' || info === null || typeof info.lastblock?.height !== 'number') {
      throw new RpcTransportError('getnodeinfo', 'Pocketnet node answered getnodeinfo without lastblock.height')
    }
    return info
  },
}
