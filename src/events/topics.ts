/**
 * What a client can follow on the event stream, as `?topics=` spells it:
 * - `blocks`: every block, and every re-org;
 * - `address:<address>`: payments to an address (of POCKETNET_NETWORK);
 * - `content:<hash>`: comments, scores, boosts and reposts on one post (its root txid);
 * - `app:<channel>`: the mini-app's own events (`app.events.publish`);
 * - `payment:<invoice id>`: an invoice's transitions (docs/payments.md).
 * A signed-in user's own notifications are the topic `user:<address>`, which only a stream
 * ticket opens (routes/api/events.ts): a client cannot name it.
 */
import { isPocketnetAddress, type PocketnetNetwork } from 'pocketnet-client'

/** Most topics on one stream. */
export const MAX_TOPICS = 20
/** An app channel: letters, digits, `.`, `_` and `-`. */
export const APP_CHANNEL = /^[A-Za-z0-9._-]{1,64}$/
const CONTENT_HASH = /^[0-9a-f]{64}$/
/** An invoice id: `inv_` and 22 base64url characters. */
const INVOICE_ID = /^inv_[A-Za-z0-9_-]{22}$/

export type Topic = string

/** The topics of `text`, in order, each once; or why not (the text of a 400). */
export function parseTopics (text: string | undefined, network: PocketnetNetwork): Topic[] | { error: string } {
  const topics = [...new Set((text ?? '').split(',').map(each => each.trim()).filter(each => each !== ''))]
  // Commas alone (`topics=,,`) name no topic, as an empty value does.
  if (topics.length === 0) return { error: 'topics is required: blocks, address:<address>, content:<hash> or app:<channel>, comma-separated' }
  if (topics.length > MAX_TOPICS) return { error: `At most ${MAX_TOPICS} topics per stream (got ${topics.length})` }
  for (const topic of topics) {
    const error = topicError(topic, network)
    if (error !== undefined) return { error }
  }
  return topics
}

function topicError (topic: string, network: PocketnetNetwork): string | undefined {
  if (topic === 'blocks') return undefined
  const colon = topic.indexOf(':')
  const kind = colon < 0 ? topic : topic.slice(0, colon)
  const value = topic.slice(colon + 1)
  const shown = JSON.stringify(topic.slice(0, 80))
  switch (kind) {
    case 'address': return isPocketnetAddress(value, network) ? undefined : `${shown}: address:<address> takes an address of the ${network} network`
    case 'content': return CONTENT_HASH.test(value) ? undefined : `${shown}: content:<hash> takes a post's hash, 64 lowercase hex digits`
    case 'app': return APP_CHANNEL.test(value) ? undefined : `${shown}: app:<channel> takes 1 to 64 letters, digits, '.', '_' or '-'`
    case 'payment': return INVOICE_ID.test(value) ? undefined : `${shown}: payment:<invoice id> takes an invoice's id`
    default: return `${shown} is not a topic: blocks, address:<address>, content:<hash>, app:<channel> or payment:<invoice id>`
  }
}

/** The topic of a signed-in user's own notifications. */
export const userTopic = (address: string): Topic => `user:${address}`
