/**
 * One block's `getnotifications` answer, turned into the events for the addresses and posts of
 * interest (docs/node-events.md, "Catching up"). The node answers for every address at once:
 * `{data: [a transaction's short form …], notifiers: {address: {e: {category: [index into data]}}}}`.
 *
 * - `money` entries are payments: one `transaction` event per address of interest among the
 *   outputs, for its first output (as the node's `transaction` message gives it; a change output
 *   counts too).
 * - Every other category is a social event: one `notification` event for the address notified,
 *   typed and named as the node's WebSocket `event` message (`comment`, `upvoteShare`, `cScore`,
 *   `subscribe` …), its fields in `data` with amounts in integer satoshi.
 *
 * A notification about a post of interest is reported even when its address is not of interest:
 * once per transaction, after those for addresses of interest, and not at all when one of those
 * already reported the transaction.
 */
import type { NotificationEvent, TransactionEvent } from './chain-event.js'
import { NodeEventError } from './errors.js'
import { satoshi, wholeNumber } from './wire-values.js'

export interface BlockStamp {
  height: number
  blockHash: string
  time: number
}

export interface Interest {
  addresses: ReadonlySet<string>
  /** Post hashes: their comments, scores, boosts and reposts are reported whoever is notified. */
  contents: ReadonlySet<string>
}

export interface BlockActivity {
  transactions: TransactionEvent[]
  notifications: NotificationEvent[]
  /** Entries skipped for want of the fields the node gives. */
  malformed: number
}

type Item = Record<string, unknown>

function object (value: unknown): Item | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Item : undefined
}

function text (value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined
}

/** The node's WebSocket name for a category of `getnotifications`, by the transaction's type where one category covers two. */
function eventType (category: string, txType: unknown): string {
  switch (category) {
    case 'comment':
    case 'answer': return 'comment'
    case 'contentscore': return 'upvoteShare'
    case 'commentscore': return 'cScore'
    case 'subscriber': return txType === 303 ? 'subscribePrivate' : 'subscribe'
    case 'boost': return 'contentBoost'
    case 'repost': return 'reshare'
    case 'privatecontent': return 'postfromprivate'
    default: return category
  }
}

/** Satoshi paid to `address` by the outputs of `item`, when any. */
function paidTo (item: Item, address: string): number {
  const outputs = Array.isArray(item.outputs) ? item.outputs : []
  let total = 0
  for (const output of outputs) {
    const each = object(output)
    if (each?.addresshash === address) total += satoshi(each.value, 'an output value')
  }
  return total
}

/** The event's fields in the WebSocket message's words. */
function notificationData (category: string, item: Item, address: string): Record<string, unknown> {
  const account = object(item.account)
  const related = object(item.relatedContent)
  const data: Record<string, unknown> = { category }
  const from = text(item.address)
  if (from !== undefined) data.addrFrom = from
  if (text(account?.n) !== undefined) data.nameFrom = account?.n
  if (text(account?.a)) data.avatarFrom = account?.a
  switch (category) {
    case 'comment':
    case 'answer': {
      data.reason = category === 'answer' ? 'answer' : 'post'
      data.posttxid = text(item.postHash) ?? text(related?.hash)
      data.parentid = text(item.commentParentId) ?? ''
      data.answerid = text(item.commentAnswerId) ?? ''
      const donation = category === 'comment' ? paidTo(item, address) : 0
      if (donation > 0) Object.assign(data, { donation: true, amount: donation })
      break
    }
    case 'contentscore':
      Object.assign(data, { posttxid: text(related?.hash), upvoteVal: item.val })
      break
    case 'commentscore':
      Object.assign(data, { commentid: text(related?.hash), posttxid: text(related?.postHash), upvoteVal: item.val })
      break
    case 'boost':
    case 'repost':
      data.posttxid = text(related?.hash)
      break
    case 'juryassigned':
    case 'juryverdict':
    case 'jurymoderate':
      Object.assign(data, { reason: item.val, juryHash: text(item.description), contentHash: text(related?.hash), contentAddress: text(related?.address) })
      break
  }
  for (const key of Object.keys(data)) if (data[key] === undefined) delete data[key]
  return data
}

/**
 * The events of one block for `interest`.
 * @throws EVENTS_ERR_BAD_MESSAGE when the answer is not `{data: [], notifiers: {}}`
 */
export function blockActivity (answer: unknown, block: BlockStamp, interest: Interest): BlockActivity {
  const root = object(answer)
  const notifiers = object(root?.notifiers)
  if (root === undefined || !Array.isArray(root.data) || notifiers === undefined) {
    throw new NodeEventError('EVENTS_ERR_BAD_MESSAGE', 'getnotifications did not answer {data, notifiers}')
  }
  const data = root.data
  const activity: BlockActivity = { transactions: [], notifications: [], malformed: 0 }
  // Reported for a post of interest alone: once per transaction, unless already reported for an address.
  const forContent = new Map<string, NotificationEvent>()
  const stamp = { height: block.height, blockHash: block.blockHash }

  for (const [address, notifier] of Object.entries(notifiers)) {
    const categories = object(object(notifier)?.e) ?? {}
    const addressWanted = interest.addresses.has(address)
    for (const [category, indices] of Object.entries(categories)) {
      if (!Array.isArray(indices)) {
        activity.malformed++
        continue
      }
      for (const index of indices) {
        const item = typeof index === 'number' ? object(data[index]) : undefined
        const txid = text(item?.hash)
        if (item === undefined || txid === undefined) {
          activity.malformed++
          continue
        }
        const time = wholeNumber(item.time) ?? block.time
        try {
          if (category === 'money') {
            if (!addressWanted) continue
            const outputs = Array.isArray(item.outputs) ? item.outputs : []
            const nout = outputs.findIndex(output => object(output)?.addresshash === address)
            if (nout < 0) {
              activity.malformed++
              continue
            }
            const amount = satoshi(object(outputs[nout])?.value, 'a payment')
            activity.transactions.push({ kind: 'transaction', address, txid, nout, amount, ...stamp, time })
            continue
          }
          const fields = notificationData(category, item, address)
          const post = text(fields.posttxid)
          const contentWanted = post !== undefined && interest.contents.has(post)
          if (!addressWanted && !contentWanted) continue
          // A comment is known by its first version's hash, as in the node's messages.
          const id = category === 'comment' || category === 'answer' ? text(item.rootTxHash) ?? txid : txid
          const event: NotificationEvent = { kind: 'notification', address, type: eventType(category, item.txType), txid: id, ...stamp, time, data: fields }
          if (addressWanted) activity.notifications.push(event)
          else if (!forContent.has(id)) forContent.set(id, event)
        } catch (err) {
          if ((err as NodeEventError).code !== 'EVENTS_ERR_BAD_MESSAGE') throw err
          activity.malformed++
        }
      }
    }
  }
  const reported = new Set(activity.notifications.map(event => event.txid))
  for (const [id, event] of forContent) if (!reported.has(id)) activity.notifications.push(event)
  return activity
}
