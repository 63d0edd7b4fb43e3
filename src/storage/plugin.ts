/**
 * Storage (docs/storage.md), on whenever sign-in is (BASTYON_APP_ID) unless STORAGE=false:
 * `app.storage` for the routes and the app's own code, on the service's database, which opens on
 * the first value asked for or written. The addresses of APP_ADMINS may write the collections
 * through the API (`app.storage.isAdmin`).
 */
import fp from 'fastify-plugin'
import { StorageService } from './storage-service.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Undefined while storage is off (sign-in off, or STORAGE=false). */
    storage: StorageService | undefined
  }
}

export interface StoragePluginOptions {
  /** Milliseconds since the epoch, for `updatedAt` (tests). */
  now?: (() => number) | undefined
}

export default fp<StoragePluginOptions>(async (app, { now = Date.now }) => {
  const config = app.miniAppConfig
  if (config.BASTYON_APP_ID === '' || !config.STORAGE) {
    app.decorate('storage', undefined)
    return
  }
  app.decorate('storage', new StorageService(() => app.database.open(), {
    limits: { maxKeys: config.STORAGE_MAX_KEYS, maxValueBytes: config.STORAGE_MAX_VALUE_BYTES, maxOwnerBytes: config.STORAGE_MAX_USER_BYTES },
    admins: config.APP_ADMINS.split(',').map(address => address.trim()).filter(address => address !== ''),
    now,
  }))
}, { name: 'storage', dependencies: ['database'] })
