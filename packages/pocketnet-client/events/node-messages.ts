/**
 * The node's WebSocket frames, read (docs/node-events.md, "Messages"): the keep-alive answer
 * `1`, the replies to a registration, and `new block`. The source learns of blocks from the
 * socket and reads what they carried with catch-up calls, so `transaction` and `event` messages
 * (about the one address a socket watches) are recognised and set aside.
 */
import { NodeEventError } from './errors.js'
import { blockHash, wholeNumber } from './wire-values.js'

/** A block the node says it connected. */
export interface AnnouncedBlock {
  height: number
  blockHash: string
  /** Seconds since the epoch. */
  time: number
}

export type NodeMessage =
  | { kind: 'pong' }
  | { kind: 'registered' }
  /** `Unsubscribed`, `Nothing happened`, an error reply: the node did not take what was sent. */
  | { kind: 'refused', result: string, error?: string }
  | { kind: 'new-block', block: AnnouncedBlock }
  /** `transaction` and `event` messages, and anything else well formed. */
  | { kind: 'other' }

function badMessage (why: string): NodeEventError {
  return new NodeEventError('EVENTS_ERR_BAD_MESSAGE', `The node's WebSocket sent ${why}`)
}

/**
 * What a text frame from the node says.
 * @throws EVENTS_ERR_BAD_MESSAGE for a frame that is not the node's JSON, or a `new block` without
 *   a whole height, a 64-hex hash and a whole time
 */
export function readNodeMessage (text: string): NodeMessage {
  if (text === '1') return { kind: 'pong' }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw badMessage('a frame that is not JSON')
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badMessage('a frame that is not a JSON object')
  const message = value as Record<string, unknown>
  if (typeof message.result === 'string') {
    if (message.result === 'Registered') return { kind: 'registered' }
    return { kind: 'refused', result: message.result, ...(typeof message.error === 'string' ? { error: message.error } : {}) }
  }
  if (message.msg !== 'new block') return { kind: 'other' }
  const height = wholeNumber(message.height)
  const hash = blockHash(message.blockhash)
  // The node writes the block's time as a string; a number is read the same.
  const time = wholeNumber(message.time)
  if (height === undefined || hash === undefined || time === undefined) throw badMessage('a new block without a whole height, a 64-hex blockhash and a whole time')
  return { kind: 'new-block', block: { height, blockHash: hash, time } }
}
