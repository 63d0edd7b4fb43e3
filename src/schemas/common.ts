/**
 * Parameter schemas shared by routes, with the rule each one enforces. The rule texts are the
 * ones 400 answers show (see http/error-handler.ts), so the docs and errors agree.
 */
import { Type } from 'typebox'
import { DEFAULT_PAGE_SIZE, POCKETNET_ADDRESS_RULE } from 'pocketnet-client'
import { ParameterError } from '../http/errors.js'
import { KEY_RULE, MAX_LIST_LIMIT } from '../storage/storage-rules.js'

export const MAX_KEYWORD_LENGTH = 200
export const MAX_PAGE_SIZE = 100

/** Rule per parameter name, phrased to follow "<name> must be". */
export const PARAMETER_RULES: Record<string, string> = {
  address: POCKETNET_ADDRESS_RULE,
  keyword: `1 to ${MAX_KEYWORD_LENGTH} characters, not only spaces`,
  page: 'a whole number from 0 (the page index)',
  pageSize: `a whole number from 1 to ${MAX_PAGE_SIZE}`,
  hash: '64 lowercase hexadecimal characters (a transaction hash)',
  lang: 'a two-letter language code in lowercase, such as en or ru',
  key: KEY_RULE,
  name: `a collection's name: ${KEY_RULE}`,
  after: `a key (${KEY_RULE}): the previous page's next`,
  limit: `a whole number from 1 to ${MAX_LIST_LIMIT}`,
}

/** A post as a node sends it (short keys, passed through), for the examples of the API reference. */
export const CONTENT_EXAMPLE = {
  hash: 'c60d1e6b03b5…',
  address: 'PDXnfk67tvSSRQ4exMLqrx6Ujh2aihJFcM',
  time: '1763779420',
  type: 'share',
  c: 'Pourquoi café compte',
  m: "Quelqu'un d'autre aime expresso autant que moi ?",
  t: ['coffee'],
  userprofile: { name: 'lea_art', i: 'https://bastyon.com/images/avatars/7.png' },
}

/** Ajv format name for addresses, registered in app.ts with pocketnet-client's checksum test. */
export const ADDRESS_FORMAT = 'pocketnet-address'

export const Address = Type.String({
  format: ADDRESS_FORMAT,
  description: `The user's blockchain address: ${PARAMETER_RULES.address}`,
  examples: ['P8bbRWJknHBXJRBTDSS88uQJSFvX67iN88'],
})

export const Keyword = Type.String({
  minLength: 1,
  maxLength: MAX_KEYWORD_LENGTH,
  pattern: '\\S',
  description: `Words to find in captions and messages: ${PARAMETER_RULES.keyword}`,
})

export const Page = Type.Integer({ minimum: 0, default: 0, description: `Page index, ${PARAMETER_RULES.page}` })

export const PageSize = Type.Integer({
  minimum: 1,
  maximum: MAX_PAGE_SIZE,
  default: DEFAULT_PAGE_SIZE,
  description: `Items per page, ${PARAMETER_RULES.pageSize}`,
})

/**
 * Paging values the schema's coercion lets through as numbers that are not whole ("Infinity",
 * "1e400" become Infinity, which passes Ajv's integer test): refused with the rule they break.
 */
export function assertFinitePaging (query: { page?: number | undefined, pageSize?: number | undefined }): void {
  for (const field of ['page', 'pageSize'] as const) {
    const value = query[field]
    if (value !== undefined && !Number.isSafeInteger(value)) {
      throw new ParameterError('query parameter', field, `must be ${PARAMETER_RULES[field]} (got ${JSON.stringify(String(value))})`)
    }
  }
}
