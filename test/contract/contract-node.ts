/**
 * The real Pocketnet node the contract suite runs against (scripts/test-contract.ts starts it, or
 * names a node of the developer's own), its dataset, and its two RPC doors: the public one the
 * service uses, and the private one (with credentials) that makes blocks and re-orgs.
 */
import { readFileSync } from 'node:fs'
import bs58check from 'bs58check'
import { formatPkoin, pkoinToSatoshi } from '../../packages/pocketnet-client/index.js'

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

/**
 * A new block, staked by the node's own wallet; resolves with the new height. The wallet is
 * mended first (see {@link mendWallet}), so that a re-org made earlier cannot stop staking.
 */
export async function stakeBlock (): Promise<number> {
  await mendWallet()
  const before = await privateRpc('getblockcount') as number
  await privateRpc('stakeblock', [1, 'w'])
  const after = await privateRpc('getblockcount') as number
  if (after !== before + 1) throw new Error(`stakeblock made no block (height ${before} → ${after})`)
  return after
}

/** How far below the tip {@link mendWallet} looks: deeper than any re-org a test makes. */
const MEND_DEPTH = 30

/**
 * Mends what 0.22.7's wallet gets wrong after a re-org. When a block whose coinstake the wallet
 * made is disconnected, the wallet abandons that coinstake and forgets which coin it spent; when
 * the same coinstake is connected again (its block reconsidered, or staked anew from the same coin
 * in the same time slot, which gives the same transaction), the wallet does not learn the spend
 * again. It then lists the spent coin as unspent, and `stakeblock` stakes it again and again,
 * making no block. Each such coinstake of the chain's last blocks is removed from the wallet and
 * imported again with its proof (`removeprunedfunds`, `importprunedfunds`), which records the spend.
 */
async function mendWallet (): Promise<void> {
  const listed = new Set((await privateRpc('listunspent', [0]) as Array<{ txid: string, vout: number }>).map(coin => `${coin.txid}:${coin.vout}`))
  const tip = await privateRpc('getblockcount') as number
  for (let height = Math.max(1, tip - MEND_DEPTH); height <= tip; height++) {
    const hash = await privateRpc('getblockhash', [height]) as string
    const { tx } = await privateRpc('getblock', [hash, 2]) as { tx: Array<{ txid: string, hex: string, vin: Array<{ txid?: string, vout?: number }> }> }
    // tx[0] is the coinbase, tx[1] the coinstake.
    const coinstake = tx[1]
    if (coinstake === undefined || !coinstake.vin.some(input => listed.has(`${input.txid}:${input.vout}`))) continue
    const proof = await privateRpc('gettxoutproof', [[coinstake.txid], hash]) as string
    await privateRpc('removeprunedfunds', [coinstake.txid])
    await privateRpc('importprunedfunds', [coinstake.hex, proof])
  }
}

/** The 32-byte private key of a WIF string (version byte, key, compression flag, checksum). */
export function keyOfWif (wif: string): Uint8Array {
  return bs58check.decode(wif).subarray(1, 33)
}

/** The node's best block, as `getblockcount` and `getbestblockhash` say. */
export async function bestBlock (): Promise<{ height: number, hash: string }> {
  const hash = await privateRpc('getbestblockhash') as string
  const header = await privateRpc('getblockheader', [hash]) as { height: number }
  return { height: header.height, hash }
}

/** A new address of the node's wallet `w` (regtest P2PKH, `m…` or `n…`). */
export async function walletAddress (): Promise<string> {
  return await privateRpc('getnewaddress') as string
}

/** What a payer pays on top of the amount (the host's `feemode: 'exclude'`). */
export const PAYMENT_FEE_SAT = 10_000

export interface WalletPayment {
  txid: string
  /** Where the rest of the spent coin went back to the wallet. */
  changeAddress: string
  changeSat: number
}

/**
 * Pays `satoshi` to `to` from the node's wallet as the host's `sdk.payment` does: the receiver's
 * output, then the memo as one OP_RETURN push of its UTF-8 bytes, then the change; the fee is the
 * payer's. Signed by the wallet and sent: it is in the mempool until a block is staked.
 */
export async function payFromWallet (to: string, satoshi: number, memo: string): Promise<WalletPayment> {
  const changeAddress = await privateRpc('getrawchangeaddress') as string
  const coin = await spendableCoin(satoshi + PAYMENT_FEE_SAT)
  const changeSat = coin.satoshi - satoshi - PAYMENT_FEE_SAT
  const outputs = [{ [to]: formatPkoin(satoshi) }, { data: Buffer.from(memo, 'utf8').toString('hex') }, { [changeAddress]: formatPkoin(changeSat) }]
  const unsigned = await privateRpc('createrawtransaction', [[{ txid: coin.txid, vout: coin.vout }], outputs]) as string
  const signed = await privateRpc('signrawtransactionwithwallet', [unsigned]) as { hex: string, complete: boolean }
  if (!signed.complete) throw new Error(`the wallet did not sign the payment to ${to}`)
  const txid = await privateRpc('sendrawtransaction', [signed.hex]) as string
  return { txid, changeAddress, changeSat }
}

/**
 * Pays `satoshi` to `to` from one coin of the node's wallet that the chain holds unspent (the
 * wallet's own choice can be a coin a re-org left spent in its index: `sendtoaddress` then makes a
 * transaction no block takes), the change back, the fee on the wallet. In the mempool until a block.
 */
export async function fundFromWallet (to: string, satoshi: number): Promise<string> {
  const changeAddress = await privateRpc('getrawchangeaddress') as string
  const coin = await spendableCoin(satoshi + PAYMENT_FEE_SAT)
  const outputs = [{ [to]: formatPkoin(satoshi) }, { [changeAddress]: formatPkoin(coin.satoshi - satoshi - PAYMENT_FEE_SAT) }]
  const unsigned = await privateRpc('createrawtransaction', [[{ txid: coin.txid, vout: coin.vout }], outputs]) as string
  const signed = await privateRpc('signrawtransactionwithwallet', [unsigned]) as { hex: string, complete: boolean }
  if (!signed.complete) throw new Error(`the wallet did not sign the payment to ${to}`)
  return await privateRpc('sendrawtransaction', [signed.hex]) as string
}

/**
 * A coin of the wallet worth at least `satoshi` that the chain holds unspent. The wallet can list
 * a coin the chain has spent (see {@link mendWallet}): each is checked with `gettxout`.
 */
async function spendableCoin (satoshi: number): Promise<{ txid: string, vout: number, satoshi: number }> {
  const coins = await privateRpc('listunspent', [1]) as Array<{ txid: string, vout: number, amount: number, spendable: boolean, confirmations: number }>
  // The deepest first: the dataset's own coins, far from any block a test disconnects.
  for (const coin of coins.filter(coin => coin.spendable).sort((a, b) => b.confirmations - a.confirmations)) {
    const coinSat = pkoinToSatoshi(coin.amount)
    if (coinSat < satoshi) continue
    if (await privateRpc('gettxout', [coin.txid, coin.vout]) === null) continue
    return { txid: coin.txid, vout: coin.vout, satoshi: coinSat }
  }
  throw new Error(`the wallet has no unspent coin of ${formatPkoin(satoshi)} PKOIN or more`)
}

/**
 * Keeps a mempool transaction out of the blocks staked next (`prioritisetransaction` with a fee
 * delta far below any fee), or, with `false`, lets it back in.
 */
export async function holdOutOfBlocks (txid: string, held = true): Promise<void> {
  await privateRpc('prioritisetransaction', [txid, 0, held ? -100_000_000 : 100_000_000])
}

/**
 * Makes the chain go through `block` again after `invalidateblock` disconnected it and
 * `replacement` (a block staked at the same height since) took its place: `reconsiderblock` the
 * first, `invalidateblock` the second. The next {@link stakeBlock} mends the wallet.
 */
export async function restoreBranch (block: string, replacement: string): Promise<void> {
  await privateRpc('reconsiderblock', [block])
  await privateRpc('invalidateblock', [replacement])
  if (await privateRpc('getbestblockhash') === replacement) throw new Error(`the chain did not leave ${replacement}`)
}
