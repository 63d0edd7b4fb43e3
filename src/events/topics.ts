/**
 * What a client can follow on the event stream, as `?topics=` spells it:
 * - `blocks`: every block, and every re-org;
 * - `address:<address>`: payments to an address (of POCKETNET_NETWORK);
 * - `content:<hash>`: comments, scores, boosts and reposts on one post (its root txid);
 * - `app:<channel>`: the mini-app's own events (`app.events.publish`);
 * - `payment:<invoice id>`: an invoice's transitions (docs/payments.md).
 * A signed-in user's own notifications are the topic `user:<address>`, which only a stream
 * ticket opens (routes/api/events.ts): a client cannot name it.
 *
 * The one place a topic is taken apart or put together: everything else indexes events by the
 * text (`Topic`) and reads it through `topicParts`.
 */
import { isPocketnetAddress, type PocketnetNetwork } from 'pocketnet-client'

/** A topic as the wire spells it: what the event log, the hub and the shared log index by. */
export type Topic = string

/** A topic taken apart. */
export type TopicParts =
  | { kind: 'blocks' }
  | { kind: 'address', address: string }
  | { kind: 'user', address: string }
  | { kind: 'content', hash: string }
  | { kind: 'app', channel: string }
  | { kind: 'payment', invoiceId: string }

export type TopicKind = TopicParts['kind']

/** Most topics on one stream. */
export const MAX_TOPICS = 20
/** An app channel: letters, digits, `.`, `_` and `-`. */
export const APP_CHANNEL = /^[A-Za-z0-9._-]{1,64}$/
const CONTENT_HASH = /^[0-9a-f]{64}$/
/** An invoice id: `inv_` and 22 base64url characters. */
const INVOICE_ID = /^inv_[A-Za-z0-9_-]{22}$/

/** The topic's text. */
export function topicOf (parts: TopicParts): Topic {
  switch (parts.kind) {
    case 'blocks': return 'blocks'
    case 'address': return `address:${parts.address}`
    case 'user': return `user:${parts.address}`
    case 'content': return `content:${parts.hash}`
    case 'app': return `app:${parts.channel}`
    case 'payment': return `payment:${parts.invoiceId}`
  }
}

/** The parts of a topic's text by its form alone (the kind, and the value after the colon); undefined for a kind that does not exist. */
export function topicParts (topic: Topic): TopicParts | undefined {
  if (topic === 'blocks') return { kind: 'blocks' }
  const colon = topic.indexOf(':')
  if (colon < 0) return undefined
  const value = topic.slice(colon + 1)
  switch (topic.slice(0, colon)) {
    case 'address': return { kind: 'address', address: value }
    case 'user': return { kind: 'user', address: value }
    case 'content': return { kind: 'content', hash: value }
    case 'app': return { kind: 'app', channel: value }
    case 'payment': return { kind: 'payment', invoiceId: value }
    default: return undefined
  }
}

/** The topic of a signed-in user's own notifications. */
export const userTopic = (address: string): Topic => topicOf({ kind: 'user', address })
/** The topic of an invoice's transitions. */
export const paymentTopic = (invoiceId: string): Topic => topicOf({ kind: 'payment', invoiceId })

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

/** Why a client may not follow `topic`, or undefined when it may. */
function topicError (topic: string, network: PocketnetNetwork): string | undefined {
  const parts = topicParts(topic)
  const shown = JSON.stringify(topic.slice(0, 80))
  switch (parts?.kind) {
    case 'blocks': return undefined
    case 'address': return isPocketnetAddress(parts.address, network) ? undefined : `${shown}: address:<address> takes an address of the ${network} network`
    case 'content': return CONTENT_HASH.test(parts.hash) ? undefined : `${shown}: content:<hash> takes a post's hash, 64 lowercase hex digits`
    case 'app': return APP_CHANNEL.test(parts.channel) ? undefined : `${shown}: app:<channel> takes 1 to 64 letters, digits, '.', '_' or '-'`
    case 'payment': return INVOICE_ID.test(parts.invoiceId) ? undefined : `${shown}: payment:<invoice id> takes an invoice's id`
    // A user's own topic is opened by a stream ticket alone.
    case 'user':
    case undefined: return `${shown} is not a topic: blocks, address:<address>, content:<hash>, app:<channel> or payment:<invoice id>`
  }
}
