/**
 * The node's public read methods over the dataset, with the node's own parameter rules
 * (docs/pocketnet-node.md, "Methods"), one file per area. Written from the node's rules, not from
 * packages/pocketnet-client/: an emulator that reused the client's encoding would hide its bugs.
 */
import type { ChainHistory } from '../chain.js'
import { getRawTransaction, getTransactions } from './transactions.js'
import { estimateSmartFee, DEFAULT_FEE_RATE_PER_KB } from './fee-estimate.js'
import { txUnspent } from './unspents.js'
import type { Dataset } from '../data/generate.js'
import { getUserProfile, getUserState, getUserSubscribers, getUserSubscribes } from './accounts.js'
import { getAppItems, getApps } from './apps.js'
import { getComments } from './comments.js'
import { RpcError, type ChainState } from './common.js'
import { getContent, search } from './contents.js'
import { getCompactBlock, getLastBlocks, getMissedInfo, getNotifications } from './events.js'
import { FEED_METHODS, feed } from './feeds.js'
import { otherMethod } from './other.js'
import { PUBLIC_METHODS } from './public-table.js'
import { nodeInfo } from './system.js'
import { getTags } from './tags.js'

export { RpcError, type ChainState } from './common.js'
export { PUBLIC_METHODS } from './public-table.js'
export { SEND_METHODS, sendRawTransaction } from './send-transaction.js'
export { DEFAULT_FEE_RATE_PER_KB } from './fee-estimate.js'

/**
 * The methods answered from the dataset; every other public name answers as the node does without
 * data. The wallet side's `txunspent` and `estimatesmartfee` answer from the chain and the fee rate
 * set, but stay out of this list: about addresses and hashes nobody knows, they answer as a node
 * does, which the contract suite's parity test keeps checking.
 */
export const IMPLEMENTED_METHODS: ReadonlySet<string> = new Set([
  'getnodeinfo', 'getuserprofile', 'search', 'getcontent', 'getcomments', 'getuserstate', 'gettags',
  'getusersubscribers', 'getusersubscribes', 'getapps', 'getappscores', 'getappcomments',
  'getlastblocks', 'getcompactblock', 'getnotifications', 'getmissedinfo',
  'getrawtransaction', 'gettransactions',
  // The feeds, from the dataset's posts (feeds.ts).
  'gethierarchicalfeed', 'gethierarchicalstrip', 'gethistoricalfeed', 'gethistoricalstrip', 'getmostcommentedfeed', 'gettopfeed',
  'getprofilefeed', 'getsubscribesfeed', 'getrandomcontents',
])

/** Every name the read path serves but the write path (`/post/`) does not: all but the built-in `help`. */
export const READ_ONLY_METHODS: ReadonlySet<string> = new Set(Object.keys(PUBLIC_METHODS).filter(name => name !== 'help'))

/**
 * The result of `method`, or the RpcError the node answers; an unknown name is -32601 (HTTP 404).
 * `blocks` is the chain's history (the block methods read it), `wsPort` the WebSocket's port.
 */
export function callMethod (dataset: Dataset, chain: ChainState, method: string, params: unknown[], blocks?: ChainHistory, wsPort?: number): unknown {
  if (blocks !== undefined) {
    switch (method) {
      case 'getlastblocks': return getLastBlocks(blocks, params)
      case 'getcompactblock': return getCompactBlock(blocks, params)
      case 'getnotifications': return getNotifications(blocks, params)
      case 'getmissedinfo': return getMissedInfo(blocks, params)
      case 'getrawtransaction': return getRawTransaction(blocks, params)
      case 'gettransactions': return getTransactions(blocks, params)
      case 'txunspent': return txUnspent(blocks, params)
    }
  }
  switch (method) {
    case 'getnodeinfo': return nodeInfo(chain, wsPort)
    case 'estimatesmartfee': return estimateSmartFee(params, chain.feeRatePerKb === undefined ? DEFAULT_FEE_RATE_PER_KB : chain.feeRatePerKb)
    case 'getuserprofile': return getUserProfile(dataset, params)
    case 'search': return search(dataset, chain, params)
    case 'getcontent': return getContent(dataset, params)
    case 'getcomments': return getComments(dataset, chain, params)
    case 'getuserstate': return getUserState(dataset, chain, params)
    case 'gettags': return getTags(dataset, params)
    case 'getusersubscribers': return getUserSubscribers(dataset, params)
    case 'getusersubscribes': return getUserSubscribes(dataset, params)
    case 'getapps': return getApps(params)
    case 'getappscores':
    case 'getappcomments': return getAppItems(params)
  }
  if (FEED_METHODS.has(method)) return feed(dataset, chain, method, params)
  const other = otherMethod(method, params, chain, dataset)
  if (other === undefined) throw new RpcError(-32601, 'Method not found', 404)
  return other.result
}
