/**
 * Sends `{message, data}` for a route's success. The client's answer cache hands back the same
 * `data` object on every hit, so the serialized body and its ETag are kept beside it (in a
 * WeakMap: they go when the cache drops the answer), and a hit on a body of KEEP_FROM_BYTES or
 * more serializes and hashes nothing. A smaller body is serialized again on each hit.
 *
 * It also notes on the reply which cached answer the body renders: the fast path, on a route
 * whose config asks for `replay`, may record the response and answer repeats with it for as long
 * as the client says that answer is still fresh. Sending with sendSuccess alone never makes a
 * route replayable.
 */
import type { FastifyReply } from 'fastify'
import { etagOf } from './etag.js'

interface Serialized {
  message: string
  /** UTF-8 bytes, so that a hit does not encode the string again. */
  body: Buffer
  etag: string
}

/** A success as sent: the cached answer it renders, and its bytes (read by fast-path/recorder.ts). */
export interface RenderedAnswer {
  answer: object
  body: Buffer
  etag: string
}

declare module 'fastify' {
  interface FastifyReply {
    /** Set by sendSuccess; null for every other answer. */
    renderedAnswer: RenderedAnswer | null
  }
}

const serialized = new WeakMap<object, Serialized>()
// Small bodies cost less to serialize again than to keep: each kept one is an object that
// lives as long as the cache entry and then burdens the old-generation GC.
const KEEP_FROM_BYTES = 2048

/**
 * @param answer the cached answer `data` comes from, when `data` is a part of it (a profile
 *   picked from the node's list): the fast path asks the client about this object.
 */
export function sendSuccess (reply: FastifyReply, message: string, data: object, answer: object = data): FastifyReply {
  let entry = serialized.get(data)
  if (entry === undefined || entry.message !== message) {
    const body = Buffer.from(JSON.stringify({ message, data }))
    entry = { message, body, etag: etagOf(body) }
    if (body.length >= KEEP_FROM_BYTES) serialized.set(data, entry)
  }
  reply.renderedAnswer = { answer, body: entry.body, etag: entry.etag }
  return reply.header('etag', entry.etag).type('application/json; charset=utf-8').send(entry.body)
}
