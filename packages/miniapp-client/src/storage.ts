/**
 * The signed-in user's stored values (`/api/me/storage`) and the app's collections
 * (`/api/collections`): JSON under keys, each with an ETag for optimistic concurrency. A missing
 * key is `undefined` (get) or `false` (delete), not an error; a write whose `ifMatch` or
 * `ifNoneMatch` does not hold rejects with a MiniAppError of status 412 and changes nothing.
 */
import { MiniAppError } from './errors.js'
import type { Answer, RequestOptions } from './request.js'
import type { StorageListing, StoredItem } from './api-types.js'

/** A stored value with its ETag, to pass as `ifMatch` to the next write. */
export type StoredValue<T = unknown> = Omit<StoredItem, 'value'> & { value: T, etag: string }

export interface PutOptions {
  /** Write only if the stored value still has this ETag (`'*'`: only if the key exists). */
  ifMatch?: string
  /** `'*'`: write only if the key does not exist yet. */
  ifNoneMatch?: '*'
}

export interface UpdateOptions {
  /** Reads and writes tried before the last 412 is thrown (default 5). */
  attempts?: number
}

export interface StorageArea {
  get<T = unknown>(key: string): Promise<StoredValue<T> | undefined>
  put<T>(key: string, value: T, options?: PutOptions): Promise<StoredValue<T>>
  /** True when a value was deleted, false when there was none. */
  delete (key: string, options?: Pick<PutOptions, 'ifMatch'>): Promise<boolean>
  /** A page of keys in byte order, with their sizes and ETags; `next` is the `after` of the next page. */
  list (options?: { after?: string, limit?: number }): Promise<StorageListing>
  /**
   * Reads the value, writes `change(value)` only if nobody wrote in between (If-Match), and tries
   * again from a fresh read when somebody did: a counter, a list appended to from two tabs.
   */
  update<T>(key: string, change: (current: T | undefined) => T, options?: UpdateOptions): Promise<StoredValue<T>>
}

export interface Storage extends StorageArea {
  /** An app-wide collection: anyone reads it; only the addresses of the service's APP_ADMINS write it. */
  collection (name: string): StorageArea
}

type Send = <T>(path: string, options?: RequestOptions) => Promise<Answer<T>>

const isMissing = (error: unknown): boolean => error instanceof MiniAppError && error.code === 'STORAGE_ERR_NOT_FOUND'
const isStale = (error: unknown): boolean => error instanceof MiniAppError && error.status === 412

function area (send: Send, base: string, readsNeedSignIn: boolean): StorageArea {
  const path = (key: string): string => `${base}/${encodeURIComponent(key)}`
  const stored = <T>({ data, headers }: Answer<StoredItem>): StoredValue<T> => ({ ...data, value: data.value as T, etag: headers.get('etag') ?? '' })

  const self: StorageArea = {
    async get<T> (key: string) {
      try {
        return stored<T>(await send<StoredItem>(path(key), { auth: readsNeedSignIn }))
      } catch (error) {
        if (isMissing(error)) return undefined
        throw error
      }
    },
    async put<T> (key: string, value: T, options: PutOptions = {}) {
      const headers: Record<string, string> = {}
      if (options.ifMatch !== undefined) headers['if-match'] = options.ifMatch
      if (options.ifNoneMatch !== undefined) headers['if-none-match'] = options.ifNoneMatch
      return stored<T>(await send<StoredItem>(path(key), { method: 'PUT', body: { value }, auth: true, headers }))
    },
    async delete (key, options = {}) {
      try {
        await send(path(key), { method: 'DELETE', auth: true, headers: options.ifMatch === undefined ? {} : { 'if-match': options.ifMatch } })
        return true
      } catch (error) {
        if (isMissing(error)) return false
        throw error
      }
    },
    async list (options = {}) {
      const query = new URLSearchParams()
      if (options.after !== undefined) query.set('after', options.after)
      if (options.limit !== undefined) query.set('limit', String(options.limit))
      const search = query.toString()
      return (await send<StorageListing>(search === '' ? base : `${base}?${search}`, { auth: readsNeedSignIn })).data
    },
    async update<T> (key: string, change: (current: T | undefined) => T, options: UpdateOptions = {}) {
      const attempts = options.attempts ?? 5
      for (let attempt = 1; ; attempt++) {
        const current = await self.get<T>(key)
        try {
          return await self.put(key, change(current?.value), current === undefined ? { ifNoneMatch: '*' } : { ifMatch: current.etag })
        } catch (error) {
          if (!isStale(error) || attempt >= attempts) throw error
        }
      }
    },
  }
  return self
}

export function storageOf (send: Send): Storage {
  return {
    ...area(send, '/api/me/storage', true),
    collection: name => area(send, `/api/collections/${encodeURIComponent(name)}`, false),
  }
}
