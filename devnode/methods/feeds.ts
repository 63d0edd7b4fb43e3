/**
 * The feeds: the node's lists of contents from its own choice of posts (newest, most commented,
 * best rated, an author's, an account's subscriptions), each item as getcontent gives it, in
 * `{height, contents}`; and getrandomcontents, a list of one such item. The emulator keeps to
 * the answer's structure and a plausible choice, not the node's ranking rules.
 */
import type { Dataset, PostRecord } from '../data/generate.js'
import { type ChainState, isAddress, RpcError } from './common.js'
import { contentItem } from './contents.js'

/** Items in a feed page when the request names no count (the node's default). */
const DEFAULT_COUNT = 10
/** The most a page holds, whatever the request asks. */
const MAX_COUNT = 100

/** The feed methods, by the order of their posts (none: the dataset's, newest first). */
const ORDERS: Readonly<Record<string, (a: PostRecord, b: PostRecord) => number>> = {
  gethierarchicalfeed: () => 0,
  gethierarchicalstrip: () => 0,
  gethistoricalfeed: () => 0,
  gethistoricalstrip: () => 0,
  getmostcommentedfeed: (a, b) => b.comments - a.comments,
  gettopfeed: (a, b) => b.scoreSum - a.scoreSum,
}

export const FEED_METHODS: ReadonlySet<string> = new Set([...Object.keys(ORDERS), 'getprofilefeed', 'getsubscribesfeed', 'getsubsciptionsgroupedbyauthors', 'getrandomcontents'])

/**
 * Feed params as the node reads them: topHeight, topContentHash, countOut, lang, …; a count that
 * is not a whole number is not read (the node's default; found on a real node).
 */
function pageSize (params: unknown[]): number {
  const count = params[2]
  return typeof count === 'number' && Number.isInteger(count) ? Math.min(Math.max(count, 0), MAX_COUNT) : DEFAULT_COUNT
}

function language (params: unknown[]): string {
  return typeof params[3] === 'string' ? params[3] : ''
}

/** The address a profile or subscriptions feed is for (its 11th param), checked as the node checks it. */
function feedAddress (params: unknown[]): string {
  const address = typeof params[10] === 'string' ? params[10] : ''
  if (address !== '' && !isAddress(address)) throw new RpcError(-5, `Invalid Pocketcoin address: ${address}`)
  return address
}

/** The answer of a feed method (FEED_METHODS). */
export function feed (dataset: Dataset, chain: ChainState, method: string, params: unknown[]): unknown {
  // The height the node reports, as getnodeinfo does (a lagging node's).
  const height = chain.height - chain.lag
  const lang = language(params)
  const live = (post: PostRecord): boolean => (lang === '' || post.language === lang) && dataset.usersByAddress.get(post.address)?.deleted !== true
  const page = (posts: PostRecord[]): Record<string, unknown> => ({ height, contents: posts.filter(live).slice(0, pageSize(params)).map(post => contentItem(dataset, post)) })
  switch (method) {
    case 'getrandomcontents': {
      // One post drawn at random, as a 0.22.7 node draws it.
      const posts = dataset.posts.filter(live)
      const drawn = posts[Math.floor(Math.random() * posts.length)]
      return drawn === undefined ? [] : [contentItem(dataset, drawn)]
    }
    case 'getprofilefeed': {
      const address = feedAddress(params)
      if (address === '') throw new RpcError(-32600, 'No profile address', 400)
      return page(dataset.posts.filter(post => post.address === address))
    }
    case 'getsubscribesfeed': {
      const address = feedAddress(params)
      if (address === '') throw new RpcError(-32600, 'No profile or addresses_extended addresses', 400)
      const authors = new Set(dataset.usersByAddress.get(address)?.subscribes ?? [])
      return page(dataset.posts.filter(post => authors.has(post.address)))
    }
    case 'getsubsciptionsgroupedbyauthors':
      // Its own params (address, addressPagination, …). Groups the emulator does not make: the
      // node's answer for an account with no subscriptions, and for none named, {}.
      return typeof params[0] === 'string' && params[0] !== '' ? { height, contents: [] } : {}
  }
  const order = ORDERS[method]
  if (order === undefined) throw new Error(`not a feed: ${method}`)
  return page([...dataset.posts].sort(order))
}
