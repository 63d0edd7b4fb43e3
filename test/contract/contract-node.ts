/**
 * The real Pocketnet node the contract suite runs against (scripts/test-contract.ts starts it, or
 * names a node of the developer's own), its dataset, and its two RPC doors: the public one the
 * service uses, and the private one (with credentials) that makes blocks and re-orgs.
 */
import { readFileSync } from 'node:fs'
import bs58check from 'bs58check'

export interface DatasetAccount {
  name: string
  address: string
  /** WIF, a throwaway regtest key. */
  privkey: string
  posts: string[]
  comments: string[]
}

export interface Dataset {
  height: number
  miner: string
  accounts: DatasetAccount[]
  payments: Array<{ txid: string, memo: string, amount: string }>
}

function required (name: string): string {
  const value = process.env[name]
  if (!value) throw new Error(`${name} is not set: run the contract suite with npm run test:contract (docs/real-node.md)`)
  return value
}

export const contractNode = {
  /** The public RPC, as in POCKETNET_NODES. */
  url: required('POCKETNET_CONTRACT_NODE'),
  /** The private RPC, user and password in the URL. */
  rpcUrl: required('POCKETNET_CONTRACT_RPC'),
  dataset: JSON.parse(readFileSync(required('POCKETNET_CONTRACT_DATASET'), 'utf8')) as Dataset,
}

export interface RpcAnswer { result: any, error: { code: number, message: string } | null }

/** One call on the public RPC, as the service makes it. */
export async function publicRpc (method: string, params: unknown[] = []): Promise<RpcAnswer> {
  const response = await fetch(`${contractNode.url}/public/`, { method: 'POST', body: JSON.stringify({ method, params }), headers: { 'content-type': 'application/json' } })
  return await response.json() as RpcAnswer
}

/** One call on the private RPC; throws on an RPC error. */
export async function privateRpc (method: string, params: unknown[] = []): Promise<any> {
  const url = new URL(contractNode.rpcUrl)
  const authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`
  url.username = ''
  url.password = ''
  const response = await fetch(url, { method: 'POST', body: JSON.stringify({ jsonrpc: '1.0', id: 1, method, params }), headers: { 'content-type': 'application/json', authorization } })
  const answer = await response.json() as RpcAnswer
  if (answer.error) throw new Error(`${method}: RPC error ${answer.error.code}: ${answer.error.message}`)
  return answer.result
}

/** A new block, staked by the node's own wallet; resolves with the new height. */
export async function stakeBlock (): Promise<number> {
  const before = await privateRpc('getblockcount') as number
  await privateRpc('stakeblock', [1, 'w'])
  const after = await privateRpc('getblockcount') as number
  if (after !== before + 1) throw new Error(`stakeblock made no block (height ${before} → ${after})`)
  return after
}

/** The 32-byte private key of a WIF string (version byte, key, compression flag, checksum). */
export function keyOfWif (wif: string): Uint8Array {
  return bs58check.decode(wif).subarray(1, 33)
}
