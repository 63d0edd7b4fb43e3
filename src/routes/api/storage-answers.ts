/**
 * What the storage routes (storage.ts, collections.ts) answer, in one place: the value with its
 * ETag, a page of keys, and `Cache-Control: no-store` on each, set here rather than left to the
 * default, because a stored value is never to be kept by a cache.
 */
import type { FastifyReply } from 'fastify'
import { etagOf } from '../../storage/preconditions.js'
import type { StorageLimits } from '../../storage/storage-rules.js'
import type { StorageList, StoredItem, Usage } from '../../storage/storage-service.js'

/**
 * A PUT's body is `{"value": …}`: the value's limit, and room for the wrapper and some
 * whitespace. A larger body is refused (413) before it is read.
 */
const BODY_OVERHEAD_BYTES = 1024

export function putBodyLimit (limits: StorageLimits): number {
  return limits.maxValueBytes + BODY_OVERHEAD_BYTES
}

export function itemAnswer (reply: FastifyReply, message: string, item: StoredItem) {
  reply.header('cache-control', 'no-store').header('etag', etagOf(item.version))
  return { message, data: { key: item.key, value: item.value, updatedAt: item.updatedAt } }
}

export function deletedAnswer (reply: FastifyReply, key: string) {
  reply.header('cache-control', 'no-store')
  return { message: 'Value deleted successfully', data: { key } }
}

export function listingAnswer (reply: FastifyReply, page: StorageList, usage: Usage, limits: StorageLimits) {
  reply.header('cache-control', 'no-store')
  return {
    message: 'Stored keys listed successfully',
    data: {
      keys: page.keys.map(({ key, size, version, updatedAt }) => ({ key, size, etag: etagOf(version), updatedAt })),
      next: page.next,
      usage: { ...usage, maxKeys: limits.maxKeys, maxBytes: limits.maxOwnerBytes },
    },
  }
}
