/**
 * The signed-in user's storage (storage/, docs/storage.md), registered while storage is on:
 * values under keys, with ETags for optimistic concurrency. Every route is marked `auth`, so it
 * is never replayed by the fast path, and answers `Cache-Control: no-store`: one user's values
 * are never kept by a cache that could hand them to another.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { signedInUser } from '../../auth/plugin.js'
import { deleteConditions, putConditions } from '../../storage/preconditions.js'
import { StorageError } from '../../storage/storage-errors.js'
import type { StorageScope, StorageService } from '../../storage/storage-service.js'
import { StorageDeleteSchema, StorageGetSchema, StorageListSchema, StoragePutSchema } from '../../schemas/storage.js'
import { deletedAnswer, itemAnswer, listingAnswer, putBodyLimit } from './storage-answers.js'

const storageRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const storage = app.storage as StorageService
  const mine = (request: FastifyRequest): StorageScope => storage.forUser(signedInUser(request).address)
  const notFound = (key: string) => new StorageError('STORAGE_ERR_NOT_FOUND', `No value is stored under the key ${key}`)

  app.get('/me/storage', { schema: StorageListSchema, config: { auth: true } }, async (request, reply) => {
    const scope = mine(request)
    const [page, usage] = await Promise.all([scope.list(request.query), scope.usage()])
    return listingAnswer(reply, page, usage, storage.limits)
  })

  app.get('/me/storage/:key', { schema: StorageGetSchema, config: { auth: true } }, async (request, reply) => {
    const item = await mine(request).get(request.params.key)
    if (item === undefined) throw notFound(request.params.key)
    return itemAnswer(reply, 'Stored value retrieved successfully', item)
  })

  app.put('/me/storage/:key', { schema: StoragePutSchema, bodyLimit: putBodyLimit(storage.limits), config: { auth: true } }, async (request, reply) => {
    const item = await mine(request).put(request.params.key, request.body.value, putConditions(request.headers))
    return itemAnswer(reply, 'Value stored successfully', item)
  })

  app.delete('/me/storage/:key', { schema: StorageDeleteSchema, config: { auth: true } }, async (request, reply) => {
    const deleted = await mine(request).delete(request.params.key, deleteConditions(request.headers))
    if (!deleted) throw notFound(request.params.key)
    return deletedAnswer(reply, request.params.key)
  })
}

export default storageRoutes
