/**
 * Chain events and the shared log's entries, both ways. The instance that follows the chain puts
 * each chain event on its topics (hub.ts); the others get only the entries, and turn them back
 * into the chain event, so that the service's own listeners (payments) hear every chain event on
 * every instance, whichever ingested it.
 *
 * A chain event's key names it whatever instance reports it: the shared log keeps it once under
 * that key, and each instance hands it to its listeners once.
 */
import type { ChainEvent, NotificationEvent } from 'pocketnet-client'

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
export function chainEventOfEntry (topic: string, type: string, data: Record<string, unknown>): ChainEvent | undefined {
  if (topic === 'blocks' && type === 'block') {
    const { height, hash, time } = data
    return isWhole(height) && isText(hash) && isWhole(time) ? { kind: 'block', height, blockHash: hash, time } : undefined
  }
  if (topic === 'blocks' && type === 'reorg') {
    const { height, oldHash, newHash } = data
    if (!isWhole(height) || !isText(oldHash)) return undefined
    return { kind: 'reorg', height, oldBlockHash: oldHash, ...(isText(newHash) ? { newBlockHash: newHash } : {}) }
  }
  if (topic.startsWith('address:') && type === 'transaction') {
    const { address, txid, nout, amount, height, blockHash, time, type: txType } = data
    if (!isText(address) || !isText(txid) || !isWhole(nout) || !isWhole(amount) || !isWhole(height) || !isText(blockHash) || !isWhole(time)) return undefined
    return { kind: 'transaction', address, txid, nout, amount, height, blockHash, time, ...(isText(txType) ? { type: txType } : {}) }
  }
  if (topic.startsWith('user:') && type === 'notification') {
    const { address, type: mesType, txid, height, blockHash, time } = data
    if (!isText(address) || !isText(mesType) || !isText(txid) || !isWhole(height) || !isText(blockHash) || !isWhole(time)) return undefined
    const rest: Record<string, unknown> = {}
    for (const [field, value] of Object.entries(data)) if (!NOTIFICATION_FIELDS.has(field)) rest[field] = value
    const event: NotificationEvent = { kind: 'notification', address, type: mesType, txid, height, blockHash, time, data: rest }
    return event
  }
  return undefined
}
