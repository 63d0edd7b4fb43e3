/** Accounts: getuserprofile, getuserstate, getusersubscribers and getusersubscribes. */
import { heightAt, subscriptionHeight, type Dataset, type UserRecord } from '../data/generate.js'
import { RpcError, getInt, getStr, isAddress, typeCheck, typeCheckParams, type ChainState } from './common.js'

export function shortProfile (user: UserRecord): Record<string, unknown> {
  if (user.deleted) return { hash: user.hash, address: user.address, id: user.id, deleted: true }
  return {
    hash: user.hash,
    address: user.address,
    id: user.id,
    name: user.name,
    i: user.avatar,
    b: '',
    r: user.referrer,
    reputation: user.reputation,
    postcnt: user.postCount,
    dltdcnt: 0,
    subscribes_count: user.subscribes.length,
    subscribers_count: user.subscribers.length,
    blockings_count: 0,
    blockers_count: 0,
    likers_count: user.likers,
    k: user.publicKey,
    a: user.about,
    l: user.language,
    s: user.site,
    update: user.update,
    regdate: user.regdate,
    flags: {},
    firstFlags: {},
    // The account's count of actions (the node's account statistics).
    actions: user.postCount + user.subscribes.length,
    bans: {},
    badges: badges(user),
  }
}

/** The node's type codes of contents, as the full profile counts them. */
const CONTENT_TYPE_CODES = { share: '200', video: '201', article: '202' } as const

function badges (user: UserRecord): string[] {
  return user.reputation > 400 ? ['shark'] : []
}

function fullProfile (user: UserRecord): Record<string, unknown> {
  if (user.deleted) return shortProfile(user)
  return {
    ...shortProfile(user),
    subscribes: user.subscribes.map(address => ({ adddress: address, private: 'false' })),
    subscribers: user.subscribers,
    blocking: [],
    content: user.postCount === 0 ? {} : { [CONTENT_TYPE_CODES.share]: user.postCount },
  }
}

export function getUserProfile (dataset: Dataset, params: unknown[]): unknown[] {
  const [address, shortForm = ''] = params
  // Read only when given: absent, it is the full form.
  if (typeof shortForm !== 'string') throw new RpcError(-32603, 'JSON value is not a string as expected')
  const wanted = typeof address === 'string' ? [address] : Array.isArray(address) ? address.filter(item => typeof item === 'string') : []
  const found = [...new Set(wanted)].map(item => dataset.usersByAddress.get(item)).filter(user => user !== undefined)
  found.sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0))
  return found.map(user => (shortForm === '1' ? shortProfile(user) : fullProfile(user)))
}

/** The node's reputation is kept as an integer, ten times the value profiles show. */
const storedReputation = (user: UserRecord): number => Math.round(user.reputation * 10)

/** Mainnet's consensus values at the dataset's heights (above 1,873,500). */
const WINDOW_BLOCKS = 1440
const FULL_REPUTATION = 1000
const FULL_BALANCE = 50 * 100_000_000
const PRO_BALANCE = 250 * 100_000_000
const LIMITS = {
  trial: { post: 5, video: 5, article: 1, stream: 5, audio: 5, complain: 6, comment: 50, comment_score: 100, score: 15 },
  full: { post: 30, video: 30, article: 3, stream: 30, audio: 30, complain: 12, comment: 200, comment_score: 300, score: 200 },
  pro: { post: 30, video: 100, article: 3, stream: 30, audio: 30, complain: 12, comment: 200, comment_score: 300, score: 200 },
}
const MOD_FLAG_LIMIT = 30

/**
 * `getuserstate [address]`: limits and standing of one account. Only a string is read (else -3);
 * it must be a valid address (-5) of a registered account (-5, "not found"). The `*_spent`
 * counts cover the last 1440 blocks; a deleted account has none of them nor the `*_unspent` ones.
 */
export function getUserState (dataset: Dataset, chain: ChainState, params: unknown[]): Record<string, unknown> {
  if (params.length === 0) throw new RpcError(-5, 'Invalid or empty Pocketcoin address')
  typeCheck(params[0], 'string')
  const address = params[0] as string
  if (!isAddress(address)) throw new RpcError(-5, `Invalid Pocketcoin address: ${address}`)
  const user = dataset.usersByAddress.get(address)
  if (user === undefined) throw new RpcError(-5, `Pocketcoin address not found : ${address}`)
  const account = dataset.accounts.get(user.id) ?? { balance: 0, scoresSpent: 0, commentScoresSpent: 0, complainsSpent: 0 }

  const result: Record<string, unknown> = { address_id: user.id, address: user.address }
  let spent: Record<keyof typeof LIMITS.full, number> | undefined
  if (user.deleted) {
    result.deleted = true
  } else {
    const since = chain.height - WINDOW_BLOCKS
    const posts = dataset.posts.filter(post => post.address === address && post.height >= since)
    spent = {
      post: posts.filter(post => post.type === 'share').length,
      video: posts.filter(post => post.type === 'video').length,
      article: posts.filter(post => post.type === 'article').length,
      stream: 0,
      audio: 0,
      comment: dataset.comments.filter(comment => comment.address === address && comment.block >= since).length,
      score: account.scoresSpent,
      comment_score: account.commentScoresSpent,
      complain: account.complainsSpent,
    }
    Object.assign(result, {
      post_spent: spent.post,
      video_spent: spent.video,
      article_spent: spent.article,
      stream_spent: spent.stream,
      audio_spent: spent.audio,
      comment_spent: spent.comment,
      score_spent: spent.score,
      comment_score_spent: spent.comment_score,
      complain_spent: spent.complain,
      mod_flag_spent: 0,
    })
  }
  const reputation = storedReputation(user)
  const mode = reputation >= FULL_REPUTATION || account.balance >= FULL_BALANCE ? (account.balance >= PRO_BALANCE ? 2 : 1) : 0
  Object.assign(result, {
    mode,
    trial: mode === 0,
    reputation: reputation / 10,
    badges: badges(user),
    user_reg_date: user.regdate,
    user_reg_height: heightAt(dataset, user.regdate),
    balance: account.balance,
    likers: user.likers,
  })
  if (spent !== undefined) {
    const limits = mode === 0 ? LIMITS.trial : mode === 1 ? LIMITS.full : LIMITS.pro
    for (const kind of ['post', 'video', 'article', 'stream', 'audio', 'complain', 'comment', 'comment_score', 'score'] as const) {
      result[`${kind}_unspent`] = limits[kind] - spent[kind]
    }
    result.mod_flag_unspent = MOD_FLAG_LIMIT
  }
  return result
}

/**
 * `getusersubscribers` / `getusersubscribes [address, orderby?, orderdesc?, offset?, limit?]`.
 * The address is type-checked (-3) but not validated: an unknown one gives `[]`. The node keeps
 * `min(0, x)` of any offset or limit it is sent: a number at offset changes nothing, a number at
 * limit lifts the limit (every row), and leaving limit out gives 10 rows.
 */
function subscriptions (dataset: Dataset, params: unknown[], direction: 'subscribers' | 'subscribes'): unknown[] {
  typeCheckParams(params, ['string'])
  const address = getStr(params[0])
  const orderBy = typeof params[1] === 'string' ? params[1].toLowerCase() : 'height'
  const orderDesc = typeof params[2] === 'boolean' ? params[2] : true
  let offset = 0
  if (params.length > 3 && typeof params[3] === 'number') offset = Math.min(0, getInt(params[3]))
  let limit = 10
  if (params.length > 4 && typeof params[4] === 'number') limit = Math.min(0, getInt(params[4]))

  const user = dataset.usersByAddress.get(address)
  if (user === undefined) return []
  const rows = user[direction].map(other => dataset.usersByAddress.get(other)).filter(other => other !== undefined).map(other => {
    const [follower, followed] = direction === 'subscribers' ? [other, user] : [user, other]
    return { address: other.address, private: 0, reputation: storedReputation(other), height: subscriptionHeight(dataset, follower, followed) }
  })
  const key = orderBy === 'reputation' ? 'reputation' : orderBy === 'height' ? 'height' : undefined
  if (key !== undefined) rows.sort((a, b) => (orderDesc ? b[key] - a[key] : a[key] - b[key]))
  // SQLite reads a negative OFFSET as 0; the limit (and with it the offset) is sent only when positive.
  const page = limit > 0 ? rows.slice(Math.max(0, offset), Math.max(0, offset) + limit) : rows
  // The subscribes query names its address column with three d's.
  const addressKey = direction === 'subscribes' ? 'adddress' : 'address'
  return page.map(row => ({ [addressKey]: row.address, private: row.private, reputation: row.reputation, height: row.height }))
}

export function getUserSubscribers (dataset: Dataset, params: unknown[]): unknown[] {
  return subscriptions(dataset, params, 'subscribers')
}

export function getUserSubscribes (dataset: Dataset, params: unknown[]): unknown[] {
  return subscriptions(dataset, params, 'subscribes')
}
