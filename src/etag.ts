/** Weak ETags and If-None-Match, for the http-cache plugin and the fast path alike. */
import { createHash } from 'node:crypto'

/** A weak validator: equal bodies, equal tags. */
export function etagOf (body: string | Buffer): string {
  return `W/"${createHash('sha1').update(body).digest('base64url')}"`
}

/** Whether an If-None-Match header names `etag` (or is `*`). */
export function ifNoneMatchHas (ifNoneMatch: string | undefined, etag: string): boolean {
  return ifNoneMatch !== undefined && ifNoneMatch.split(',').some(tag => tag.trim() === etag || tag.trim() === '*')
}
