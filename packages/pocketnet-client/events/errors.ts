/**
 * What the node event source reports when something goes wrong. The source never throws these at
 * its caller: it goes on (another node, a retry, polling) and hands them to `onError`, for logs.
 * Match on `err.code`. Messages name nodes by their position ("node 2"), never by URL.
 */

export const EVENT_ERROR_CODES = {
  EVENTS_ERR_SOCKET: 'The node WebSocket could not be opened or registered, or was lost; the source moves to another node and polls meanwhile.',
  EVENTS_ERR_BAD_MESSAGE: 'A node sent a WebSocket message or a catch-up answer without the fields and types of the node protocol; it was skipped.',
  EVENTS_ERR_CATCH_UP: 'Reading blocks or their notifications failed; nothing was reported for them yet, and the read is retried.',
  EVENTS_ERR_GAP: 'More blocks were missed than maxCatchUpBlocks allows reading back: the oldest were skipped (their heights are on the error).',
  EVENTS_ERR_LISTENER: 'A listener (onEvent, addressesOfInterest …) threw; the source went on.',
  EVENTS_ERR_OFF_CHAIN: 'The chain followed is not the node\'s from some height (a re-org, the block resumed from not on the node\'s chain, a node reporting another tip): reported as `reorg`, and the blocks read again from where the chains agree.',
} as const

export type EventErrorCode = keyof typeof EVENT_ERROR_CODES

export interface NodeEventErrorOptions {
  cause?: unknown
  /** The node concerned, by position ("node 2"). */
  node?: string
  /** EVENTS_ERR_GAP: the first and last heights skipped. */
  skipped?: { fromHeight: number, toHeight: number }
}

export class NodeEventError extends Error {
  readonly code: EventErrorCode
  readonly node: string | undefined
  readonly skipped: { fromHeight: number, toHeight: number } | undefined

  constructor (code: EventErrorCode, message: string, options: NodeEventErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'NodeEventError'
    this.code = code
    this.node = options.node
    this.skipped = options.skipped
  }
}
