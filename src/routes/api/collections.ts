/**
 * The app's collections (storage/, docs/storage.md), registered while storage is on: values every
 * user reads, signed in or not, and only the addresses of APP_ADMINS write through the API (the
 * app's own code writes them with `app.storage.collection(name)`).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { signedInUser } from '../../auth/plugin.js'
import { deleteConditions, putConditions } from '../../storage/preconditions.js'
import { StorageError } from '../../storage/storage-errors.js'
import type { StorageScope, StorageService } from '../../storage/storage-service.js'
import { CollectionDeleteSchema, CollectionGetSchema, CollectionListSchema, CollectionPutSchema } from '../../schemas/storage.js'
import { deletedAnswer, itemAnswer, listingAnswer, putBodyLimit } from './storage-answers.js'

const collectionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const storage = app.storage as StorageService
  const notFound = (name: string, key: string) => new StorageError('STORAGE_ERR_NOT_FOUND', `No value is stored under the key ${key} in the collection ${name}`)
  /** The collection, for a signed-in admin only. */
  const writable = (request: FastifyRequest, name: string): StorageScope => {
    if (!storage.isAdmin(signedInUser(request).address)) throw new StorageError('STORAGE_ERR_NOT_ADMIN', 'Only the addresses in APP_ADMINS may write collections')
    return storage.collection(name)
  }

  app.get('/collections/:name', { schema: CollectionListSchema }, async (request, reply) => {
    const scope = storage.collection(request.params.name)
    const [page, usage] = await Promise.all([scope.list(request.query), scope.usage()])
    return listingAnswer(reply, page, usage, storage.limits)
  })

  app.get('/collections/:name/:key', { schema: CollectionGetSchema }, async (request, reply) => {
    const { name, key } = request.params
    const item = await storage.collection(name).get(key)
    if (item === undefined) throw notFound(name, key)
    return itemAnswer(reply, 'Stored value retrieved successfully', item)
  })

  app.put('/collections/:name/:key', { schema: CollectionPutSchema, bodyLimit: putBodyLimit(storage.limits), config: { auth: true } }, async (request, reply) => {
    const { name, key } = request.params
    const item = await writable(request, name).put(key, request.body.value, putConditions(request.headers))
    return itemAnswer(reply, 'Value stored successfully', item)
  })

  app.delete('/collections/:name/:key', { schema: CollectionDeleteSchema, config: { auth: true } }, async (request, reply) => {
    const { name, key } = request.params
    const deleted = await writable(request, name).delete(key, deleteConditions(request.headers))
    if (!deleted) throw notFound(name, key)
    return deletedAnswer(reply, key)
  })
}

export default collectionRoutes
