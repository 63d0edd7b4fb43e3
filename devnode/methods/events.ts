/**
 * The public methods that read the chain's blocks and what they carried, for a client that
 * ingests the chain or catches up after a gap (docs/node-events.md, "Catching up"):
 * `getlastblocks`, `getcompactblock`, `getnotifications` and `getmissedinfo`, with the node's
 * parameter rules and answer shapes.
 */
import type { ChainBlock, ChainHistory, ChainNotification, ChainTransaction } from '../chain.js'
import { RpcError, getInt, runtimeError, typeCheck, typeCheckParams, isAddress, typeName } from './common.js'
import { WITHOUT_PARAMS } from './without-params.js'

/** The filters `getnotifications` accepts, by the node's names. */
const NOTIFICATION_FILTERS = new Set([
  'money', 'answer', 'privatecontent', 'boost', 'referal', 'comment', 'subscriber',
  'commentscore', 'contentscore', 'repost', 'juryassigned', 'juryverdict', 'jurymoderate',
])

/** How far back `getmissedinfo` looks at most (about a month of blocks). */
const MISSED_INFO_DEPTH = 43_200

/** Its `get_int64()`: any whole number a double holds exactly, else the runtime error. */
function getInt64 (value: unknown): number {
  if (typeof value !== 'number') throw runtimeError('JSON value is not an integer as expected')
  if (!Number.isSafeInteger(value)) throw runtimeError('JSON integer out of range')
  return value
}

function missing (method: string, params: unknown[]): void {
  const failure = params.length === 0 ? WITHOUT_PARAMS[method] : undefined
  if (failure !== undefined) throw new RpcError(failure.code, failure.message, failure.status ?? 500)
}

/** `getlastblocks [count = 10 (at most 100), last_height = tip (negative: tip), verbose?]`: ascending. */
export function getLastBlocks (chain: ChainHistory, params: unknown[]): unknown[] {
  let count = 10
  if (typeName(params[0]) === 'number') count = Math.min(getInt(params[0]), 100)
  let last = chain.height
  if (typeName(params[1]) === 'number') {
    last = getInt(params[1])
    if (last < 0) last = chain.height
  }
  if (params.length > 2) typeCheck(params[2], 'bool')
  const verbose = params[2] === true
  const blocks: unknown[] = []
  if (chain.block(last) === undefined) return blocks
  for (let height = Math.max(1, last - count + 1); height <= last; height++) {
    const block = chain.block(height) as ChainBlock
    // Every block holds a coinbase and a coinstake besides its own: `ntx` counts all but the
    // coinbase, and `types` counts those by type (3 the coinstake).
    const entry: Record<string, unknown> = { height, hash: block.hash, time: block.time, ntx: block.transactions.length + 1 }
    if (verbose) {
      const types: Record<string, number> = { 3: 1 }
      for (const transaction of block.transactions) types[transaction.txType] = (types[transaction.txType] ?? 0) + 1
      entry.types = types
    }
    blocks.push(entry)
  }
  return blocks
}

/** `getcompactblock [blockhash?, blocknumber?]`: a block number on the chain wins over the hash. */
export function getCompactBlock (chain: ChainHistory, params: unknown[]): Record<string, unknown> {
  if (params.length === 0) throw new RpcError(-8, 'Missing parameters')
  let block: ChainBlock | undefined
  if (typeof params[0] === 'string' && params[0] !== '') block = chain.blockByHash(params[0])
  const number = typeName(params[1]) === 'number' ? getInt(params[1]) : -1
  if (number >= 0 && number <= chain.height) block = chain.block(number)
  if (block === undefined) throw new RpcError(-5, 'Block not found')
  const previous = chain.block(block.height - 1)
  const next = chain.block(block.height + 1)
  return {
    height: block.height,
    hash: block.hash,
    time: block.time,
    // The coinbase, the coinstake and the block's own.
    nTx: block.transactions.length + 2,
    difficulty: 1,
    merkleroot: block.hash.split('').reverse().join(''),
    bits: '1d00ffff',
    ...(previous === undefined ? {} : { prevhash: previous.hash }),
    ...(next === undefined ? {} : { nexthash: next.hash }),
  }
}

/** The short form of an account the node gives beside a notification: name, avatar, badge, reputation. */
function shortAccount (name: string, avatar: string | undefined): Record<string, unknown> {
  return { n: name, a: avatar ?? '', b: '', r: 0 }
}

/** How `getnotifications` files a social event: its filter and the type code of the transaction. */
function filed (event: ChainNotification): { filter: string, txType: number } | undefined {
  switch (event.mesType) {
    // Only a comment's first version notifies; edits and deletions do not.
    case 'comment': return { filter: event.reason === 'answer' ? 'answer' : 'comment', txType: 204 }
    case 'upvoteShare': return { filter: 'contentscore', txType: 300 }
    case 'cScore': return { filter: 'commentscore', txType: 301 }
    case 'subscribe': return { filter: 'subscriber', txType: 302 }
    case 'subscribePrivate': return { filter: 'subscriber', txType: 303 }
    case 'contentBoost': return { filter: 'boost', txType: 208 }
    case 'reshare': return { filter: 'repost', txType: 200 }
    case 'postfromprivate': return { filter: 'privatecontent', txType: 200 }
    default: return undefined
  }
}

/** The short form of a plain payment: its inputs and its outputs in order (an OP_RETURN output has no address). */
function moneyData (block: ChainBlock, tx: ChainTransaction, blockNum: number): Record<string, unknown> {
  return {
    hash: tx.txid,
    txType: tx.txType,
    height: block.height,
    blockNum,
    time: tx.time,
    inputs: tx.inputs.map((input, number) => ({ number, value: input.amount, addresshash: input.address, scriptpubkey: '' })),
    outputs: tx.outputs.map(output => ({
      ...(output.address === undefined ? {} : { addresshash: output.address }),
      value: output.amount,
      scriptpubkey: output.memo === undefined ? '' : `6a${output.memo}`,
    })),
  }
}

/** The short form of a social event's transaction, with the content it concerns. */
function socialData (block: ChainBlock, event: ChainNotification, txType: number, blockNum: number): Record<string, unknown> {
  const data: Record<string, unknown> = {
    hash: event.txid,
    txType,
    address: event.addrFrom,
    height: block.height,
    blockNum,
    time: event.time,
  }
  if (txType === 204) {
    data.rootTxHash = event.txid
    if (event.posttxid !== undefined) data.postHash = event.posttxid
  }
  if (event.upvoteVal !== undefined && (txType === 300 || txType === 301)) data.val = event.upvoteVal
  if (event.donation !== undefined && event.reason !== 'answer') {
    data.outputs = [{ addresshash: event.address, value: event.donation, scriptpubkey: '' }]
  }
  if (event.reason === 'answer') {
    data.commentParentId = event.parentid ?? ''
    data.commentAnswerId = event.answerid ?? ''
  }
  data.account = shortAccount(event.nameFrom, event.avatarFrom)
  const related = txType === 301 ? event.commentid : event.posttxid
  if (related !== undefined) data.relatedContent = { hash: related, txType: txType === 301 ? 204 : 200 }
  return data
}

/**
 * `getnotifications [height, filters?]`: every notification of one block for every address,
 * `{data: [short form of a transaction …], notifiers: {address: {e: {filter: [index into data]}}}}`.
 */
export function getNotifications (chain: ChainHistory, params: unknown[]): Record<string, unknown> {
  missing('getnotifications', params)
  typeCheckParams(params, ['number'])
  const height = getInt64(params[0])
  if (height > chain.height) throw new RpcError(-8, 'Spefified height is greater than current chain height')
  const filters = new Set<string>()
  if (Array.isArray(params[1])) {
    for (const filter of params[1]) {
      if (typeof filter !== 'string') continue
      if (!NOTIFICATION_FILTERS.has(filter)) throw new RpcError(-8, `Unexpected filter: ${filter}`)
      filters.add(filter)
    }
  }
  const wanted = (filter: string): boolean => filters.size === 0 || filters.has(filter)
  const data: unknown[] = []
  const notifiers: Record<string, { e: Record<string, number[]> }> = {}
  const notify = (address: string, filter: string, index: number): void => {
    const entry = notifiers[address] ??= { e: {} }
    const indices = entry.e[filter] ??= []
    indices.push(index)
  }
  const block = chain.block(height)
  if (block === undefined) return { data, notifiers }

  // A transaction's position in the block names it: a social event of a transaction of the block shares its position.
  const positions = new Map(block.transactions.map((tx, position) => [tx.txid, position]))
  let nextPosition = block.transactions.length
  const positionOf = (txid: string): number => {
    const known = positions.get(txid)
    if (known !== undefined) return known
    positions.set(txid, nextPosition)
    return nextPosition++
  }
  const indexOf = new Map<number, number>()
  const entry = (position: number, build: () => Record<string, unknown>): number => {
    const known = indexOf.get(position)
    if (known !== undefined) return known
    indexOf.set(position, data.length)
    data.push(build())
    return data.length - 1
  }

  if (wanted('money')) {
    block.transactions.forEach((tx, position) => {
      // Plain payments, coinbase and coinstake only.
      if (tx.txType < 1 || tx.txType > 3) return
      const addresses = new Set(tx.outputs.flatMap(output => output.address === undefined ? [] : [output.address]))
      if (addresses.size === 0) return
      const index = entry(position, () => moneyData(block, tx, position))
      for (const address of addresses) notify(address, 'money', index)
    })
  }
  for (const event of block.notifications) {
    const filing = filed(event)
    if (filing === undefined || !wanted(filing.filter)) continue
    const position = positionOf(event.txid)
    const index = entry(position, () => socialData(block, event, filing.txType, position))
    notify(event.address, filing.filter, index)
  }
  return { data, notifiers }
}

/** A payment as the node's explorer writes a transaction (values in PKOIN). */
function explorerTransaction (block: ChainBlock, tx: ChainTransaction): Record<string, unknown> {
  return {
    txid: tx.txid,
    type: tx.txType,
    height: block.height,
    blockHash: block.hash,
    nTime: tx.time,
    vin: tx.inputs.map((input, vout) => ({ txid: '', vout, address: input.address, value: input.amount / 100_000_000 })),
    vout: tx.outputs.map((output, n) => ({
      n,
      value: output.amount / 100_000_000,
      scriptPubKey: { addresses: [output.address ?? ''], hex: output.memo === undefined ? '' : `6a${output.memo}` },
    })),
  }
}

/** What `getmissedinfo` gives for one social event of the address, in the shape of its kind. */
function missedEvent (address: string, event: ChainNotification, height: number): Record<string, unknown> | undefined {
  const from = { addrFrom: event.addrFrom }
  switch (event.mesType) {
    case 'upvoteShare':
      return { addr: address, msg: 'event', mesType: 'upvoteShare', ...from, txid: event.txid, time: event.time, posttxid: event.posttxid ?? '', upvoteVal: event.upvoteVal ?? 5, nblock: height }
    case 'cScore':
      return { addr: address, msg: 'event', mesType: 'cScore', ...from, txid: event.txid, time: event.time, commentid: event.commentid ?? '', upvoteVal: event.upvoteVal ?? 1, nblock: height }
    case 'subscribe':
    case 'subscribePrivate':
    case 'unsubscribe':
      return { addr: address, msg: 'event', mesType: event.mesType, txid: event.txid, time: event.time, nblock: height, ...from, nameFrom: event.nameFrom, ...(event.avatarFrom === undefined ? {} : { avatarFrom: event.avatarFrom }) }
    case 'comment': {
      const reason = event.reason ?? 'post'
      return {
        addr: address,
        msg: 'comment',
        mesType: reason,
        reason,
        txid: event.txid,
        time: event.time,
        nblock: height,
        ...from,
        posttxid: event.posttxid ?? '',
        parentid: event.parentid ?? '',
        answerid: event.answerid ?? '',
        ...(event.donation === undefined || reason === 'answer' ? {} : { donation: 'true', amount: event.donation }),
      }
    }
    case 'reshare':
      return { msg: 'reshare', txid: event.posttxid ?? '', txidRepost: event.txid, ...from, time: event.time, nblock: height }
    default:
      return undefined
  }
}

/**
 * `getmissedinfo [address, block_number, count = 30]`: what `address` missed above `block_number`
 * (a month back at most): first `{block: tip, cntposts, contentsLang}`, then the payments to it
 * and its social events, newest first, at most `count` of each kind.
 */
export function getMissedInfo (chain: ChainHistory, params: unknown[]): unknown[] {
  missing('getmissedinfo', params)
  typeCheckParams(params, ['string', 'number'])
  // The address is checked even when absent; a missing block number fails when it is read.
  typeCheck(params[0], 'string')
  const address = params[0] as string
  if (!isAddress(address)) throw new RpcError(-5, `Invalid address: ${address}`)
  let since = getInt(params[1])
  if (chain.height - since > MISSED_INFO_DEPTH) since = chain.height - MISSED_INFO_DEPTH
  const count = typeName(params[2]) === 'number' ? getInt(params[2]) : 30

  let posts = 0
  const payments: unknown[] = []
  const events = new Map<string, unknown[]>()
  for (let height = chain.height; height > since; height--) {
    const block = chain.block(height)
    if (block === undefined) break
    posts += block.transactions.filter(tx => tx.socialType === 'share' || tx.socialType === 'video' || tx.socialType === 'article').length
    for (const tx of block.transactions) {
      if (payments.length < count && tx.outputs.some(output => output.address === address)) payments.push(explorerTransaction(block, tx))
    }
    for (const event of block.notifications) {
      if (event.address !== address) continue
      const record = missedEvent(address, event, height)
      if (record === undefined) continue
      const kind = `${record.msg}:${record.mesType ?? ''}`
      const list = events.get(kind) ?? []
      if (list.length < count) list.push(record)
      events.set(kind, list)
    }
  }
  return [{ block: chain.height, cntposts: posts, contentsLang: {} }, ...payments, ...[...events.values()].flat()]
}
