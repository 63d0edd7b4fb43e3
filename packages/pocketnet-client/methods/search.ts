/**
 * `search`: full-text search. Wire: `[keyword, type, topBlock, pageStart, pageSize, address]`.
 *
 * Library-level meaning, so that the spec's call `search({ keyword, type: 'content',
 * pageStart: page, pageSize })` works against real nodes:
 * - `pageStart` is a zero-based page index; the node wants an item offset, so the client
 *   sends `pageStart * pageSize`.
 * - `type: 'content'` searches posts and videos (`"posts"` on the wire; the node answers `{}`
 *   for `"content"`) and is normalized to {@link ContentPage}.
 */
import { addressRule, isPocketnetAddress } from '../address.js'
import { RpcInvalidParamsError, RpcTransportError } from '../errors.js'
import { INT32_MAX, type MethodSpec, type NodeParams } from './method-spec.js'

/** `content` is ours (normalized posts and videos); the others are the node's own types, passed through. */
/** `tags` is left out: 0.22 nodes fail on it (use `gettags`). */
export type SearchType = 'content' | 'posts' | 'videolink' | 'users'

export interface SearchParams<T extends SearchType = SearchType> {
  /** What the person typed; the client URL-encodes it, as the node URL-decodes it. */
  keyword: string
  type: T
  /** Zero-based page index. Default 0. */
  pageStart?: number
  /** Items per page. Default 20. */
  pageSize?: number
  /** Only content at or below this block height; 0 or absent means no cap. */
  topBlock?: number
  /** Only content by this author. */
  address?: string
}

/** One post or video as the node sends it (short keys), passed through unchanged. */
export interface ContentItem {
  hash?: string
  txid?: string
  /** Author's address. */
  address?: string
  time?: number | string
  /** `share` (post), `video`, `article`, ... */
  type?: string
  /** Caption. */
  c?: string
  /** Message. */
  m?: string
  /** Tags. */
  t?: string[]
  /** Image URLs. */
  i?: string[]
  userprofile?: Record<string, unknown>
  [field: string]: unknown
}

/**
 * One page of content. The node cannot count all matches: `total` counts the matches up to
 * the end of this page (`pageStart * pageSize + results.length`), and `hasMore` tells whether
 * another page exists (the client asks the node for one item more than the page holds).
 */
export interface ContentPage {
  results: ContentItem[]
  total: number
  hasMore: boolean
}

/** The node's own answer for the other types, keyed by type: `{ posts: { data: [...] } }`, `{ tags: ... }`. */
export type RawSearchResult = Record<string, { data: unknown[] } | undefined>

export type SearchResult<T extends SearchType> = T extends 'content' ? ContentPage : RawSearchResult

export const DEFAULT_PAGE_SIZE = 20
const MAX_KEYWORD_LENGTH = 1000
const NODE_TYPES: Record<SearchType, string> = { content: 'posts', posts: 'posts', videolink: 'videolink', users: 'users' }

function invalid (message: string): RpcInvalidParamsError {
  return new RpcInvalidParamsError('search', message)
}

function checkInteger (name: string, value: unknown, min: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw invalid(`${name} must be an integer of at least ${min} (got ${JSON.stringify(value)})`)
  }
  return value
}

export const search: MethodSpec<SearchParams, ContentPage | RawSearchResult> = {
  name: 'search',
  toWire (params, context) {
    const { keyword, type } = params
    if (typeof keyword !== 'string' || keyword.length > MAX_KEYWORD_LENGTH) {
      throw invalid(`keyword must be a string of at most ${MAX_KEYWORD_LENGTH} characters`)
    }
    if ((type as string) === 'tags') throw invalid('type tags is broken on 0.22 nodes (their query for it fails): use gettags')
    const nodeType = NODE_TYPES[type]
    if (typeof type !== 'string' || nodeType === undefined) {
      throw invalid(`type must be one of ${Object.keys(NODE_TYPES).join(', ')} (got ${JSON.stringify(type)})`)
    }
    const page = checkInteger('pageStart', params.pageStart ?? 0, 0)
    const pageSize = checkInteger('pageSize', params.pageSize ?? DEFAULT_PAGE_SIZE, 1)
    // One extra item tells whether another page exists.
    const limit = type === 'content' ? pageSize + 1 : pageSize
    const offset = page * pageSize
    if (offset + limit > INT32_MAX) {
      throw invalid(`pageStart × pageSize must stay below ${INT32_MAX - limit} (the node's 32-bit range)`)
    }
    const wire: NodeParams = {
      // The node turns the keyword into an FTS5 query `"<kw>" OR <kw>*`; a double quote there
      // is an SQLite syntax error, and it can never match anyway.
      keyword: keyword.replaceAll('"', ' ').trim(),
      type: nodeType,
      pageStart: offset,
      pageSize: limit,
    }
    if (params.topBlock !== undefined && params.topBlock !== 0) {
      wire.topBlock = checkInteger('topBlock', params.topBlock, 0)
      if (params.topBlock > INT32_MAX) throw invalid('topBlock must fit in 32 bits')
    }
    if (params.address !== undefined) {
      if (!isPocketnetAddress(params.address, context.network)) throw invalid(`address must be ${addressRule(context.network)}`)
      wire.address = params.address
    }
    return wire
  },
  fromWire (result, params, wire) {
    if (typeof result !== 'object' || result === null || Array.isArray(result)) {
      throw new RpcTransportError('search', 'Pocketnet node answered search with something other than an object')
    }
    if (params.type !== 'content') return result as RawSearchResult
    const data = (result as RawSearchResult).posts?.data
    const items = Array.isArray(data) ? data : []
    const pageSize = (wire.pageSize as number) - 1
    // A node can miss a content row and send null in its place: drop those.
    const results = items.slice(0, pageSize).filter((item): item is ContentItem => typeof item === 'object' && item !== null)
    return {
      results,
      total: (wire.pageStart as number) + results.length,
      hasMore: items.length > pageSize,
    }
  },
}
