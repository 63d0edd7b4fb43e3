/**
 * Schemas of storage (docs/storage.md): the signed-in user's values (/api/me/storage/...), the
 * app's collections (/api/collections/...) and the user's leaving (DELETE /api/me).
 */
import { Type } from 'typebox'
import { STORAGE_ERROR_CODES } from '../storage/storage-errors.js'
import { DEFAULT_LIST_LIMIT, KEY_PATTERN, KEY_RULE, MAX_LIST_LIMIT } from '../storage/storage-rules.js'
import { BEARER_SCHEME, Unauthorized } from './auth.js'
import { ErrorResponses, SuccessEnvelope } from './envelope.js'

const { 400: badRequest, 429: tooManyRequests, 503: unavailable } = ErrorResponses

const STORAGE_CODES = Object.keys(STORAGE_ERROR_CODES)

function refusal (description: string, example: { message: string, error: string, code: string }, { codeAlways = true } = {}) {
  const code = Type.String({ enum: STORAGE_CODES, description: 'Stable reason: docs/storage.md lists them all' })
  return Type.Object({
    message: Type.String(),
    error: Type.String(),
    code: codeAlways ? code : Type.Optional(code),
  }, { description, examples: [example] })
}

const notFound = refusal('No value under this key (or no such route)', { message: 'Key not found', error: 'No value is stored under the key theme', code: 'STORAGE_ERR_NOT_FOUND' })
const preconditionFailed = refusal('If-Match named another version, or If-None-Match: * found the key: nothing was written, the stored value stays', { message: 'Precondition failed', error: 'The key theme was not written: its stored version is another one', code: 'STORAGE_ERR_PRECONDITION_FAILED' })
const tooLarge = refusal('A quota would be passed: `code` says which (STORAGE_ERR_VALUE_TOO_LARGE, STORAGE_ERR_TOO_MANY_KEYS, STORAGE_ERR_OWNER_FULL); a body past the route\'s limit is refused before it is read, without a code', { message: 'Storage quota exceeded', error: 'The key theme was not written: its value takes 70000 bytes as JSON, the most allowed is 65536 (STORAGE_MAX_VALUE_BYTES)', code: 'STORAGE_ERR_VALUE_TOO_LARGE' }, { codeAlways: false })
const forbidden = refusal('Signed in, but not an address of APP_ADMINS', { message: 'Forbidden', error: 'Only the addresses in APP_ADMINS may write collections', code: 'STORAGE_ERR_NOT_ADMIN' })

const databaseFailed = Type.Object({ message: Type.String(), error: Type.String() }, {
  description: 'The database failed (or could not be opened): nothing more is said; the log has the detail',
  examples: [{ message: 'Internal server error', error: 'Unknown error' }],
})

const Key = Type.String({ pattern: KEY_PATTERN, description: `The key: ${KEY_RULE}`, examples: ['theme'] })
const CollectionName = Type.String({ pattern: KEY_PATTERN, description: `The collection's name: ${KEY_RULE}`, examples: ['leaderboard'] })
const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601' })
const ETAG_NOTE = 'The answer\'s `ETag` is the value\'s version, for `If-Match`.'

const Item = Type.Object({
  key: Type.String(),
  value: Type.Unknown({ description: 'Any JSON, as it was stored' }),
  updatedAt: Timestamp,
})
const ITEM_EXAMPLE = { key: 'theme', value: { mode: 'dark', fontSize: 14 }, updatedAt: '2026-11-24T10:00:00.000Z' }

const Listing = Type.Object({
  keys: Type.Array(Type.Object({
    key: Type.String(),
    size: Type.Integer({ description: 'Bytes it takes from the quota: the key\'s and its value\'s JSON' }),
    etag: Type.String({ description: 'Its ETag, as GET answers it' }),
    updatedAt: Timestamp,
  })),
  next: Type.Union([Type.String(), Type.Null()], { description: 'The `after` of the next page; null on the last one' }),
  usage: Type.Object({
    keys: Type.Integer(),
    bytes: Type.Integer(),
    maxKeys: Type.Integer({ description: 'STORAGE_MAX_KEYS' }),
    maxBytes: Type.Integer({ description: 'STORAGE_MAX_USER_BYTES' }),
  }, { description: 'What the owner keeps, against its quotas' }),
})
const LISTING_EXAMPLE = {
  keys: [{ key: 'theme', size: 33, etag: '"q3vX0dPz6Qk1b8hN"', updatedAt: '2026-11-24T10:00:00.000Z' }],
  next: null,
  usage: { keys: 1, bytes: 33, maxKeys: 1024, maxBytes: 1_048_576 },
}

const ListQuery = Type.Object({
  after: Type.Optional(Type.String({ pattern: KEY_PATTERN, description: 'The keys after this one: the previous page\'s `next`' })),
  limit: Type.Integer({ minimum: 1, maximum: MAX_LIST_LIMIT, default: DEFAULT_LIST_LIMIT, description: `Keys per page, a whole number from 1 to ${MAX_LIST_LIMIT}` }),
})

const PutBody = Type.Object({ value: Type.Unknown({ description: 'Any JSON: an object, an array, a string, a number, true, false or null' }) }, {
  additionalProperties: false,
  required: ['value'],
  examples: [{ value: { mode: 'dark', fontSize: 14 } }],
})

const WriteHeaders = Type.Object({
  'if-match': Type.Optional(Type.String({ description: 'Write only if the stored version is this ETag (or one of these); `*`: only if the key exists. Else 412 and nothing changes' })),
  'if-none-match': Type.Optional(Type.String({ description: '`*`: write only if the key does not exist (create only). Else 412' })),
})
const DeleteHeaders = Type.Object({
  'if-match': Type.Optional(Type.String({ description: 'Delete only if the stored version is this ETag; else 412 and nothing changes' })),
})

const signedIn = [{ [BEARER_SCHEME]: [] }]

export const StorageListSchema = {
  tags: ['storage'],
  summary: 'The signed-in user\'s keys, a page at a time, in byte order',
  security: signedIn,
  querystring: ListQuery,
  response: {
    200: SuccessEnvelope(Listing, { message: 'Stored keys listed successfully', data: LISTING_EXAMPLE }),
    400: badRequest,
    401: Unauthorized,
    429: tooManyRequests,
    500: databaseFailed,
    503: unavailable,
  },
}

export const StorageGetSchema = {
  tags: ['storage'],
  summary: 'A value of the signed-in user\'s',
  description: `Only the signed-in user's own keys: another user's key is not found. ${ETAG_NOTE}`,
  security: signedIn,
  params: Type.Object({ key: Key }),
  response: {
    200: SuccessEnvelope(Item, { message: 'Stored value retrieved successfully', data: ITEM_EXAMPLE }),
    400: badRequest,
    401: Unauthorized,
    404: notFound,
    429: tooManyRequests,
    500: databaseFailed,
    503: unavailable,
  },
}

export const StoragePutSchema = {
  tags: ['storage'],
  summary: 'Store a value for the signed-in user',
  description: `The body is \`{"value": <any JSON>}\`. Within the quotas (STORAGE_MAX_KEYS, STORAGE_MAX_VALUE_BYTES, STORAGE_MAX_USER_BYTES; 413 beyond). ${ETAG_NOTE}`,
  security: signedIn,
  params: Type.Object({ key: Key }),
  headers: WriteHeaders,
  body: PutBody,
  response: {
    200: SuccessEnvelope(Item, { message: 'Value stored successfully', data: ITEM_EXAMPLE }),
    400: badRequest,
    401: Unauthorized,
    412: preconditionFailed,
    413: tooLarge,
    429: tooManyRequests,
    500: databaseFailed,
    503: unavailable,
  },
}

export const StorageDeleteSchema = {
  tags: ['storage'],
  summary: 'Delete a value of the signed-in user\'s',
  security: signedIn,
  params: Type.Object({ key: Key }),
  headers: DeleteHeaders,
  response: {
    200: SuccessEnvelope(Type.Object({ key: Type.String() }), { message: 'Value deleted successfully', data: { key: 'theme' } }),
    400: badRequest,
    401: Unauthorized,
    404: notFound,
    412: preconditionFailed,
    429: tooManyRequests,
    500: databaseFailed,
    503: unavailable,
  },
}

export const CollectionListSchema = {
  tags: ['storage'],
  summary: 'The keys of an app-wide collection, a page at a time (anyone may read)',
  params: Type.Object({ name: CollectionName }),
  querystring: ListQuery,
  response: {
    200: SuccessEnvelope(Listing, { message: 'Stored keys listed successfully', data: LISTING_EXAMPLE }),
    400: badRequest,
    429: tooManyRequests,
    500: databaseFailed,
    503: unavailable,
  },
}

export const CollectionGetSchema = {
  tags: ['storage'],
  summary: 'A value of an app-wide collection (anyone may read)',
  description: ETAG_NOTE,
  params: Type.Object({ name: CollectionName, key: Key }),
  response: {
    200: SuccessEnvelope(Item, { message: 'Stored value retrieved successfully', data: ITEM_EXAMPLE }),
    400: badRequest,
    404: notFound,
    429: tooManyRequests,
    500: databaseFailed,
    503: unavailable,
  },
}

export const CollectionPutSchema = {
  tags: ['storage'],
  summary: 'Store a value in an app-wide collection (the addresses of APP_ADMINS only)',
  description: `As PUT /api/me/storage/{key}, with the same quotas for each collection. ${ETAG_NOTE}`,
  security: signedIn,
  params: Type.Object({ name: CollectionName, key: Key }),
  headers: WriteHeaders,
  body: PutBody,
  response: {
    200: SuccessEnvelope(Item, { message: 'Value stored successfully', data: ITEM_EXAMPLE }),
    400: badRequest,
    401: Unauthorized,
    403: forbidden,
    412: preconditionFailed,
    413: tooLarge,
    429: tooManyRequests,
    500: databaseFailed,
    503: unavailable,
  },
}

export const CollectionDeleteSchema = {
  tags: ['storage'],
  summary: 'Delete a value of an app-wide collection (the addresses of APP_ADMINS only)',
  security: signedIn,
  params: Type.Object({ name: CollectionName, key: Key }),
  headers: DeleteHeaders,
  response: {
    200: SuccessEnvelope(Type.Object({ key: Type.String() }), { message: 'Value deleted successfully', data: { key: 'theme' } }),
    400: badRequest,
    401: Unauthorized,
    403: forbidden,
    404: notFound,
    412: preconditionFailed,
    429: tooManyRequests,
    500: databaseFailed,
    503: unavailable,
  },
}

export const LeaveSchema = {
  tags: ['storage'],
  summary: 'The signed-in user leaves: their stored values and notification channels are deleted',
  description: 'Every key of the user\'s storage and its usage go, in one transaction (`storage`, while storage is on); so do their notification channels, de-duplication keys and pushes not made yet (`notifications`, while notifications are on). Records of payment (invoices, entitlements) and of pushes made are kept. The token stays valid: sign out with DELETE /api/auth/session.',
  security: signedIn,
  response: {
    200: SuccessEnvelope(Type.Object({
      address: Type.String(),
      storage: Type.Optional(Type.Object({ keys: Type.Integer(), bytes: Type.Integer() }, { description: 'What was deleted of storage (while storage is on)' })),
      notifications: Type.Optional(Type.Object({ channels: Type.Integer() }, { description: 'Notification channels deleted (while notifications are on)' })),
    }), { message: 'User data deleted successfully', data: { address: 'PEmxMUL35Z5rtULmHMuYLNYsQGu23HXBeX', storage: { keys: 12, bytes: 4096 }, notifications: { channels: 1 } } }),
    401: Unauthorized,
    429: tooManyRequests,
    500: databaseFailed,
    503: unavailable,
  },
}
