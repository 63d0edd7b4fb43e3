/**
 * Sends `{message, data}` for a route's success. The client's answer cache hands back the same
 * `data` object on every hit, so the serialized body and its ETag are kept beside it (in a
 * WeakMap: they go when the cache drops the answer) and a cache hit serializes and hashes nothing.
 */
import { createHash } from 'node:crypto'
import type { FastifyReply } from 'fastify'

interface Serialized {
  message: string
  /** UTF-8 bytes, so that a hit does not encode the string again. */
  body: Buffer
  etag: string
}

const serialized = new WeakMap<object, Serialized>()
// Small bodies cost less to serialize again than to keep: each kept one is an object that
// lives as long as the cache entry and then burdens the old-generation GC.
const KEEP_FROM_BYTES = 2048

/** A weak validator: equal bodies, equal tags. */
export function etagOf (body: string | Buffer): string {
  return `W/"${createHash('sha1').update(body).digest('base64url')}"`
}

export function sendSuccess (reply: FastifyReply, message: string, data: object): FastifyReply {
  let entry = serialized.get(data)
  if (entry === undefined || entry.message !== message) {
    const body = Buffer.from(JSON.stringify({ message, data }))
    entry = { message, body, etag: etagOf(body) }
    if (body.length >= KEEP_FROM_BYTES) serialized.set(data, entry)
  }
  return reply.header('etag', entry.etag).type('application/json; charset=utf-8').send(entry.body)
}
