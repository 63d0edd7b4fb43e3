/** Comments: getcomments. */
import type { CommentRecord, Dataset } from '../data/generate.js'
import { RpcError, getStr, sqlPrepareError, versionAtLeast, type ChainState } from './common.js'

interface CommentIndex {
  /** How many comments the dataset had when indexed: a test that adds one gets a new index. */
  size: number
  byPost: Map<string, CommentRecord[]>
  byId: Map<string, CommentRecord>
  /** Every string the chain knows: addresses, post and comment hashes. */
  known: Set<string>
}

const indexes = new WeakMap<Dataset, CommentIndex>()

function indexOf (dataset: Dataset): CommentIndex {
  let index = indexes.get(dataset)
  if (index === undefined || index.size !== dataset.comments.length) {
    const byPost = new Map<string, CommentRecord[]>()
    for (const comment of dataset.comments) {
      const list = byPost.get(comment.postid)
      if (list === undefined) byPost.set(comment.postid, [comment])
      else list.push(comment)
    }
    const byId = new Map(dataset.comments.map(comment => [comment.id, comment]))
    const known = new Set([...dataset.posts.map(post => post.hash), ...byId.keys()])
    index = { size: dataset.comments.length, byPost, byId, known }
    indexes.set(dataset, index)
  }
  return index
}

/**
 * The by-ids query of 0.22.7 ends its select list with a comma before `from`: SQLite refuses
 * to prepare it, so any call with ids fails (0.22.6 and older answer them).
 */
const BROKEN_BY_IDS_SQL = 'with addr as (select r.RowId as id, r.String as hash from Registry r where r.String = ?), txs as (select r.RowId as id, r.String as hash from Registry r where r.String in ( ? )) select c.Type, ... (select rg.String from Registry rg where rg.RowId = c.RegId1) as LastAddressHash, from txs, addr cross join Transactions c indexed by Transactions_Type_RegId2_RegId1 on c.Type in (204, 205, 206) and c.RegId2 = txs.id ...'

/**
 * `getcomments [postid, parentid?, viewer?, ids?]`.
 * - postid: the post's root txid, read with get_str (-32603 if not a string); "" is refused
 *   (-32602 "Invalid postid") unless at least three params are sent. No params at all: `[]`.
 * - parentid, viewer: get_str whenever present (null is -32603). parentid "" gives the
 *   top-level comments, a comment id its replies. A viewer adds `myScore`; a viewer string the
 *   chain has never seen gives `[]` (the query joins on it).
 * - ids: if present must be an array (-32602 "Invalid inputs params") of strings (-32603);
 *   non-empty, it selects those comments wherever they are, postid and parentid ignored.
 * Every comment of that level comes back, unpaged, numbers as strings; by ids, numbers stay
 * numbers and the list is ordered by hash.
 */
export function getComments (dataset: Dataset, chain: ChainState, params: unknown[]): unknown[] {
  let postid = ''
  if (params.length > 0) {
    postid = getStr(params[0])
    if (postid === '' && params.length < 3) throw new RpcError(-32602, 'Invalid postid')
  }
  const parentid = params.length > 1 ? getStr(params[1]) : ''
  const viewer = params.length > 2 ? getStr(params[2]) : ''
  let ids: string[] = []
  if (params.length > 3) {
    const list = params[3]
    if (!Array.isArray(list)) throw new RpcError(-32602, 'Invalid inputs params')
    ids = list.map(getStr)
  }

  const flags = versionAtLeast(chain.version, 0, 22, 7)
  if (ids.length > 0 && flags) throw sqlPrepareError(BROKEN_BY_IDS_SQL)
  const index = indexOf(dataset)
  // "" is taken as known: some transaction always carries an empty string.
  if (viewer !== '' && !index.known.has(viewer) && !dataset.usersByAddress.has(viewer)) return []

  if (ids.length > 0) {
    const found = [...new Set(ids)].map(id => index.byId.get(id)).filter(comment => comment !== undefined)
    found.sort((a, b) => (a.id < b.id ? -1 : 1))
    return found.map(comment => byIdsRecord(dataset, index, comment, viewer))
  }
  const live = (comment: CommentRecord): boolean => dataset.usersByAddress.get(comment.address)?.deleted === false
  const level = (index.byPost.get(postid) ?? []).filter(comment => comment.parentid === parentid && live(comment))
  return level.map(comment => {
    const record: Record<string, unknown> = {
      id: comment.id,
      postid: comment.postid,
      address: comment.address,
      time: String(comment.time),
      timeUpd: String(comment.time),
      block: String(comment.block),
      msg: comment.msg,
    }
    if (comment.parentid !== '') record.parentid = comment.parentid
    if (comment.answerid !== '') record.answerid = comment.answerid
    record.scoreUp = String(comment.scoreUp)
    record.scoreDown = String(comment.scoreDown)
    // A comment nobody rated has no rating row: the node leaves the field out.
    if (comment.reputation !== 0) record.reputation = String(comment.reputation)
    if (viewer !== '') record.myScore = '0'
    record.children = String(children(dataset, index, comment, live))
    if (comment.donation > 0) Object.assign(record, { amount: comment.donation, donation: 'true' })
    if (flags) record.flags = {}
    return Object.assign(record, { deleted: false, edit: false })
  })
}

function children (dataset: Dataset, index: CommentIndex, comment: CommentRecord, counted: (reply: CommentRecord) => boolean): number {
  if (comment.parentid !== '') return 0
  return (index.byPost.get(comment.postid) ?? []).filter(reply => reply.parentid === comment.id && counted(reply)).length
}

/** A comment as the by-ids query of 0.22.6 and older gives it: its tx type, numbers as numbers. */
function byIdsRecord (dataset: Dataset, index: CommentIndex, comment: CommentRecord, viewer: string): Record<string, unknown> {
  const record: Record<string, unknown> = {
    type: 204,
    id: comment.id,
    postid: comment.postid,
    address: comment.address,
    time: comment.time,
    timeUpd: comment.time,
    block: comment.block,
    msg: comment.msg,
  }
  if (comment.parentid !== '') record.parentid = comment.parentid
  if (comment.answerid !== '') record.answerid = comment.answerid
  Object.assign(record, { scoreUp: comment.scoreUp, scoreDown: comment.scoreDown, reputation: comment.reputation })
  if (viewer !== '') record.myScore = 0
  record.children = children(dataset, index, comment, reply => dataset.usersByAddress.get(reply.address)?.deleted === false)
  if (comment.donation > 0) Object.assign(record, { amount: comment.donation, donation: 'true' })
  return Object.assign(record, { deleted: false, edit: false })
}

/**
 * A content item's `lastComment`: its newest top-level comment by a live account, numbers as
 * numbers (unlike getcomments), or null when it has none. (The node puts a comment that paid the
 * author more than 0.5 PKOIN first.)
 */
export function lastComment (dataset: Dataset, post: { hash: string }): Record<string, unknown> | null {
  const index = indexOf(dataset)
  const live = (comment: CommentRecord): boolean => dataset.usersByAddress.get(comment.address)?.deleted === false
  const top = (index.byPost.get(post.hash) ?? []).filter(comment => comment.parentid === '' && live(comment))
  const paid = top.filter(comment => comment.donation > 50_000_000)
  const comment = (paid.length > 0 ? paid : top).at(-1)
  if (comment === undefined) return null
  const record: Record<string, unknown> = {
    id: comment.id,
    cid: dataset.comments.indexOf(comment) + 1,
    edit: false,
    deleted: false,
    postid: comment.postid,
    address: comment.address,
    time: comment.time,
    timeUpd: comment.time,
    block: comment.block,
    msg: comment.msg,
    scoreUp: comment.scoreUp,
    scoreDown: comment.scoreDown,
  }
  if (comment.reputation !== 0) record.reputation = String(comment.reputation)
  record.children = children(dataset, index, comment, live)
  if (comment.donation > 0) Object.assign(record, { donation: 'true', amount: comment.donation })
  record.flags = {}
  return record
}
