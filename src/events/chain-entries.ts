/**
 * Chain events and the entries of the event log, both ways. The instance that ingests the chain
 * puts each chain event on its topics (`ChainEntries`, which the hub's ingest uses); the others
 * get only the entries through the shared log, and turn them back into the chain event
 * (`chainEventOfEntry`), so that the service's own listeners (payments) hear every chain event on
 * every instance, whichever ingested it.
 *
 * A chain event's key names it whatever instance reports it: the shared log keeps it once under
 * that key, and each instance hands it to its listeners once.
 */
import type { ChainEvent, NotificationEvent } from 'pocketnet-client'
import { topicOf, topicParts, userTopic, type Topic } from './topics.js'

/** One event for the log: on a topic, of a type, with its data, and the key that names it on every instance. */
export interface ChainEntry {
  topic: Topic
  type: string
  data: Record<string, unknown>
  key: string
}

/**
 * The entries of each chain event, in order. A notification about a post goes to the user's
 * topic and to the post's. The ingest may report one transaction more than once in a block (for
 * each followed address it concerns, and for the followed post): the post's topic gets it once.
 */
export class ChainEntries {
  /** `<post>:<txid>` of the notifications put on a post's topic since the last block. */
  #onPosts = new Set<string>()

  entriesOf (event: ChainEvent): ChainEntry[] {
    const key = chainEventKey(event)
    switch (event.kind) {
      case 'block':
        this.#onPosts = new Set()
        return [{ topic: topicOf({ kind: 'blocks' }), type: 'block', data: { height: event.height, hash: event.blockHash, time: event.time }, key }]
      case 'reorg':
        return [{ topic: topicOf({ kind: 'blocks' }), type: 'reorg', data: { height: event.height, oldHash: event.oldBlockHash, ...(event.newBlockHash === undefined ? {} : { newHash: event.newBlockHash }) }, key }]
      case 'transaction':
        return [{
          topic: topicOf({ kind: 'address', address: event.address }),
          type: 'transaction',
          data: { address: event.address, txid: event.txid, nout: event.nout, amount: event.amount, height: event.height, blockHash: event.blockHash, time: event.time, ...(event.type === undefined ? {} : { type: event.type }) },
          key,
        }]
      case 'notification': {
        const data = { type: event.type, txid: event.txid, height: event.height, blockHash: event.blockHash, time: event.time, ...event.data }
        // The user's entry carries the whole chain event: the one other instances turn back into it.
        const entries: ChainEntry[] = [{ topic: userTopic(event.address), type: 'notification', data: { address: event.address, ...data }, key }]
        const post = typeof event.data.posttxid === 'string' ? event.data.posttxid : undefined
        if (post !== undefined && !this.#onPosts.has(`${post}:${event.txid}`)) {
          this.#onPosts.add(`${post}:${event.txid}`)
          entries.push({ topic: topicOf({ kind: 'content', hash: post }), type: 'notification', data, key: `content:${event.blockHash}:${event.txid}:${post}` })
        }
        return entries
      }
    }
  }
}

/** The name of `event` on every instance: its block's hash and what in the block it is about. */
export function chainEventKey (event: ChainEvent): string {
  switch (event.kind) {
    case 'block': return `block:${event.blockHash}`
    case 'reorg': return `reorg:${event.height}:${event.oldBlockHash}:${event.newBlockHash ?? ''}`
    case 'transaction': return `tx:${event.blockHash}:${event.txid}:${event.nout}:${event.address}`
    case 'notification': return `user:${event.blockHash}:${event.txid}:${event.type}:${event.address}`
  }
}

/** The notification's fields the hub puts beside the node's own (`data`) in a `user:` entry. */
const NOTIFICATION_FIELDS = new Set(['address', 'type', 'txid', 'height', 'blockHash', 'time'])

const isText = (value: unknown): value is string => typeof value === 'string'
const isWhole = (value: unknown): value is number => Number.isSafeInteger(value)

/**
 * The chain event a shared entry carries, or undefined for any other entry (the app's, a
 * payment's, a post's copy of a notification, whose `user:` entry carries it already).
 */
export function chainEventOfEntry (topic: Topic, type: string, data: Record<string, unknown>): ChainEvent | undefined {
  const kind = topicParts(topic)?.kind
  if (kind === 'blocks' && type === 'block') {
    const { height, hash, time } = data
    return isWhole(height) && isText(hash) && isWhole(time) ? { kind: 'block', height, blockHash: hash, time } : undefined
  }
  if (kind === 'blocks' && type === 'reorg') {
    const { height, oldHash, newHash } = data
    if (!isWhole(height) || !isText(oldHash)) return undefined
    return { kind: 'reorg', height, oldBlockHash: oldHash, ...(isText(newHash) ? { newBlockHash: newHash } : {}) }
  }
  if (kind === 'address' && type === 'transaction') {
    const { address, txid, nout, amount, height, blockHash, time, type: txType } = data
    if (!isText(address) || !isText(txid) || !isWhole(nout) || !isWhole(amount) || !isWhole(height) || !isText(blockHash) || !isWhole(time)) return undefined
    return { kind: 'transaction', address, txid, nout, amount, height, blockHash, time, ...(isText(txType) ? { type: txType } : {}) }
  }
  if (kind === 'user' && type === 'notification') {
    const { address, type: mesType, txid, height, blockHash, time } = data
    if (!isText(address) || !isText(mesType) || !isText(txid) || !isWhole(height) || !isText(blockHash) || !isWhole(time)) return undefined
    const rest: Record<string, unknown> = {}
    for (const [field, value] of Object.entries(data)) if (!NOTIFICATION_FIELDS.has(field)) rest[field] = value
    const event: NotificationEvent = { kind: 'notification', address, type: mesType, txid, height, blockHash, time, data: rest }
    return event
  }
  return undefined
}
