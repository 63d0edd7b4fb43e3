/**
 * The public methods the emulator has no data for: the node's answer with nothing to report (its
 * structure, recorded from a real 0.22.7 node, which the contract suite's emulator-parity test
 * compares), or, for the ones broken on 0.22.x and those served only on testnet, the node's failure.
 */
import type { Dataset } from '../data/generate.js'
import { type ChainState, RpcError, getInt, isAddress, runtimeError, sqlPrepareError, typeCheck } from './common.js'
import { PUBLIC_METHODS, type ResultType } from './public-table.js'
import { WITHOUT_PARAMS } from './without-params.js'

const EMPTY: Record<ResultType, () => unknown> = { array: () => [], object: () => ({}), string: () => '' }

/** What the emulator says its coins issued are per block (a regtest node's 50; mainnet's schedule is not modelled). */
const EMISSION_PER_BLOCK = 50

/**
 * The node's answer with nothing to report, for the methods whose answer has a structure even
 * then: the fields a real node gives, with the emulator's figures (its height, its block; zeros
 * where it keeps no such data).
 */
function noDataAnswer (method: string, params: unknown[], chain: ChainState, dataset: Dataset): unknown {
  const height = chain.height - chain.lag
  switch (method) {
    case 'getaccountearning': {
      // The node names the account only when it has one; zeros: the emulator keeps no earnings.
      const address = typeof params[0] === 'string' && dataset.usersByAddress.has(params[0]) ? params[0] : ''
      return [{ address, amountLottery: 0, amountDonation: 0, amountTransfer: 0 }]
    }
    case 'getaddressinfo': return { lastChange: 0, balance: 0 }
    case 'getboostfeed': return { height, boosts: [] }
    case 'getcoininfo': return { emission: height * EMISSION_PER_BLOCK, height }
    case 'getcontentactions': return { scores: [], boosts: [], donations: [] }
    case 'getlateststat': return latestStat(chain, height)
    case 'getposdifficulty': return { Height: height, Difficulty: 0.0000038 }
    case 'getrecommendedcontentbyaddress': return { contents: [] }
    // Keyed by hours or days back and by transaction type: the emulator's posts, all in the latest.
    case 'getstatisticbyhours': return { 0: { 200: dataset.posts.length, 204: dataset.comments.length } }
    case 'getstatisticcontentbydays': return { 0: dataset.posts.length }
    case 'getstatisticcontentbyhours': return { 1: 0, 0: dataset.posts.length }
    case 'gettime': return { time: Math.floor(Date.now() / 1000) }
    // What the hash or address is: the node tells addresses from transactions, contents included.
    case 'searchbyhash': return { type: isAddress(params[0]) ? 'address' : 'transaction' }
    case 'help': return `== Public ==\n${Object.keys(PUBLIC_METHODS).filter(name => name !== 'help').sort().join('\n')}\n`
  }
  return undefined
}

/** getlateststat: the node's own state, its database's and its RPC server's counters. */
function latestStat (chain: ChainState, height: number): Record<string, unknown> {
  return {
    General: { Version: chain.version, Chain: 'main', 'Height-Network': chain.height, 'Height-Node': height, 'Height-Web': height, SyncWithNet: '100.00%', LastBlock: chain.blockHash, PeersIN: 0, PeersOUT: 0 },
    SQL: { MemoryUsed: 0, MemoryUsedMax: 0, PageCacheUsed: 0, PageCacheUsedMax: 0, PageCacheSize: 0, PageCacheSizeMax: 0, CacheUsed: 0, SharedCacheUsed: 0, CacheHit: 0, CacheMiss: 0, CacheSpill: 0 },
    RPC: { RequestsAll: 0, RequestsFailed: 0, AvgReqTime: 0, AvgExecTime: 0, UniqueIPs: 0 },
  }
}

/** The node's no-data answer of `method`, or its failure; undefined for a name the node does not serve. */
export function otherMethod (method: string, params: unknown[], chain: ChainState, dataset: Dataset): { result: unknown } | undefined {
  const entry = Object.hasOwn(PUBLIC_METHODS, method) ? PUBLIC_METHODS[method] : undefined
  if (entry === undefined) return undefined
  if (entry.status === 'testnet-only') {
    // The emulator is a mainnet node.
    throw runtimeError(method === 'generateaddress' ? 'Only for testnet/regtest\n' : 'Only for testnet or regtest\n')
  }
  const missing = params.length === 0 ? WITHOUT_PARAMS[method] : undefined
  if (missing !== undefined) throw new RpcError(missing.code, missing.message, missing.status ?? 500)
  switch (method) {
    case 'getrecommendedaccountbyaddress':
      // 0.22.7's query does not prepare, whatever the params (found on a real node).
      throw sqlPrepareError('with addr as (select RowId as id, String as hash from Registry ...) ... group by Contents.RegId1 having count() > ? order by count() desc limit ?')
    case 'getbalancehistory':
      throw runtimeError('Reimplementation required because of new db structure')
    case 'gettopaccounts':
      // Below five params its content types stay empty and it answers [] at once; from five on
      // its query, written for the pre-0.22 schema, does not prepare.
      if (params.length < 5) return { result: [] }
      if (params.length > 7) {
        typeCheck(params[7], 'number')
        getInt(params[7])
      }
      throw sqlPrepareError('select t.String1 ... from Transactions t indexed by Transactions_Last_Id_Height ...')
    case 'getprofilecollections':
      return { result: profileCollections(params) }
  }
  return { result: noDataAnswer(method, params, chain, dataset) ?? EMPTY[entry.result]() }
}

/** Its params are read as a profile feed's, then its query, written for the pre-0.22 schema, does not prepare. */
function profileCollections (params: unknown[]): never {
  if (params.length > 9) {
    typeCheck(params[9], 'string')
    const viewer = params[9] as string
    if (viewer !== '' && !isAddress(viewer)) throw new RpcError(-5, `Invalid Pocketcoin address: ${viewer}`)
  }
  const feed = params.length > 10 && typeof params[10] === 'string' ? params[10] : ''
  if (feed !== '' && !isAddress(feed)) throw new RpcError(-5, `Invalid Pocketcoin address: ${feed}`)
  if (feed === '') throw new RpcError(-32600, 'No profile address', 400)
  throw sqlPrepareError('select ... from Transactions t indexed by Transactions_Type_Last_String1_Height_Id ...')
}
