/** Weak ETags and If-None-Match, for the http-cache plugin and the fast path alike. */
import { hash } from 'node:crypto'

/** A weak validator: equal bodies, equal tags. */
export function etagOf (body: string | Buffer): string {
  // The one-shot hash(): a Hash object per body cost more than the hashing of a small one.
  return `W/"${hash('sha1', body, 'base64url')}"`
}

/** Whether an If-None-Match header names `etag` (or is `*`). */
export function ifNoneMatchHas (ifNoneMatch: string | undefined, etag: string): boolean {
  return ifNoneMatch !== undefined && ifNoneMatch.split(',').some(tag => tag.trim() === etag || tag.trim() === '*')
}
