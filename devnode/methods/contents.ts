/** Contents: search and getcontent, and the content items both answer. */
import { wordsOf, type Dataset, type PostRecord } from '../data/generate.js'
import { shortProfile } from './accounts.js'
import { lastComment } from './comments.js'
import { type ChainState, INT32_MAX, INT32_MIN, isAddress, RpcError, versionAtLeast } from './common.js'

/** Nodes before 0.22.1 read paging numbers as strings and ignore JSON numbers; later ones do the opposite. */
function readsPagingAsStrings (version: string): boolean {
  const [major = 0, minor = 0, patch = 0] = version.split('.').map(Number)
  return major === 0 && (minor < 22 || (minor === 22 && patch < 1))
}

/** One paging parameter: the node's default unless it has the form this node version reads. */
function pagingParam (value: unknown, fallback: number, legacy: boolean): number {
  if (legacy) {
    if (typeof value !== 'string' || !/^-?\d+$/.test(value)) return fallback
    const parsed = Number(value)
    if (parsed < INT32_MIN || parsed > INT32_MAX) throw new RpcError(-32603, 'JSON integer out of range')
    return parsed
  }
  if (typeof value !== 'number') return fallback
  if (!Number.isInteger(value)) throw new RpcError(-32603, 'JSON value is not an integer as expected')
  if (value < INT32_MIN || value > INT32_MAX) throw new RpcError(-32603, 'JSON integer out of range')
  return value
}

/** The node URL-decodes the keyword (`+` is a space); a malformed escape leaves it as it is. */
function urlDecode (text: string): string {
  const spaced = text.replaceAll('+', ' ')
  try {
    return decodeURIComponent(spaced)
  } catch {
    return spaced
  }
}

export function contentItem (dataset: Dataset, post: PostRecord): Record<string, unknown> {
  const author = dataset.usersByAddress.get(post.address)
  // The node leaves out a column that is null: the URL of a post without one, the settings.
  const item: Record<string, unknown> = {
    hash: post.hash,
    txid: post.hash,
    id: post.id,
    address: post.address,
    time: post.time,
    l: post.language,
    type: post.type,
    c: post.caption,
    m: post.message,
  }
  if (post.url !== '') item.u = post.url
  return Object.assign(item, {
    t: post.tags,
    i: post.images,
    scoreCnt: post.scoreCnt,
    scoreSum: post.scoreSum,
    reposted: post.reposted,
    comments: post.comments,
    versions: [],
    flags: {},
    lastComment: lastComment(dataset, post),
    userprofile: author ? shortProfile(author) : null,
  })
}

/** Where each word occurs, so that a search does not scan every post. */
interface WordIndex {
  /** Post indices (newest first) per word. */
  postsByWord: Map<string, number[]>
  /** Every word, sorted, for prefix look-ups. */
  sortedWords: string[]
}

const indexes = new WeakMap<Dataset, WordIndex>()

function indexOf (dataset: Dataset): WordIndex {
  let index = indexes.get(dataset)
  if (index === undefined) {
    const postsByWord = new Map<string, number[]>()
    dataset.posts.forEach((post, position) => {
      for (const word of new Set(post.words)) {
        const list = postsByWord.get(word)
        if (list === undefined) postsByWord.set(word, [position])
        else list.push(position)
      }
    })
    index = { postsByWord, sortedWords: [...postsByWord.keys()].sort() }
    indexes.set(dataset, index)
  }
  return index
}

/**
 * Posts matching SQLite FTS5's `"<kw>" OR <kw>*`, newest first. The phrase implies the
 * second form, which is: every word but the last present, and a word starting with the last.
 */
function matchingPosts (dataset: Dataset, terms: string[]): PostRecord[] {
  const { postsByWord, sortedWords } = indexOf(dataset)
  const last = terms[terms.length - 1] as string
  let low = 0
  let high = sortedWords.length
  while (low < high) {
    const mid = (low + high) >>> 1
    if ((sortedWords[mid] as string) < last) low = mid + 1
    else high = mid
  }
  const found = new Set<number>()
  for (let i = low; i < sortedWords.length && (sortedWords[i] as string).startsWith(last); i++) {
    for (const position of postsByWord.get(sortedWords[i] as string) as number[]) found.add(position)
  }
  const required = terms.slice(0, -1).map(term => new Set(postsByWord.get(term) ?? []))
  return [...found].filter(position => required.every(set => set.has(position))).sort((a, b) => a - b).map(position => dataset.posts[position] as PostRecord)
}

export function search (dataset: Dataset, chain: ChainState, params: unknown[]): Record<string, unknown> {
  const [rawKeyword, rawType] = params
  // Type-checked when present (-3); read as a string when absent (-32603).
  if (rawKeyword === undefined || rawType === undefined) throw new RpcError(-32603, 'JSON value is not a string as expected')
  if (typeof rawKeyword !== 'string' || typeof rawType !== 'string') throw new RpcError(-3, `Expected type string, got ${typeof (typeof rawKeyword !== 'string' ? rawKeyword : rawType)}`)
  const legacy = readsPagingAsStrings(chain.version)
  const topBlock = pagingParam(params[2], 0, legacy)
  const pageStart = pagingParam(params[3], 0, legacy)
  const pageSize = pagingParam(params[4], 10, legacy)
  let author: string | undefined
  if (params.length > 5) {
    if (!isAddress(params[5])) throw new RpcError(-5, 'Invalid address')
    author = params[5]
  }
  const keyword = urlDecode(rawKeyword)
  // The node wraps the keyword in an FTS5 query; a double quote breaks its syntax.
  if (keyword.includes('"')) throw new RpcError(-32603, 'fts5: syntax error near """')
  const type = rawType.toLowerCase()
  const terms = wordsOf(keyword)
  const page = <T>(items: T[]): T[] => items.slice(Math.max(0, pageStart), pageSize < 0 ? undefined : Math.max(0, pageStart) + pageSize)

  switch (type) {
    case 'posts':
    case 'videolink': {
      if (terms.length === 0) return { [type === 'posts' ? 'posts' : 'videos']: { data: [] } }
      const candidates = type === 'posts' ? matchingPosts(dataset, terms) : dataset.posts
      const found = candidates.filter(post =>
        (topBlock <= 0 || post.height <= topBlock) &&
        (author === undefined || post.address === author) &&
        (type === 'posts' ? post.type !== 'article' : post.type === 'video' && post.url.toLowerCase().includes(keyword.toLowerCase())))
      return { [type === 'posts' ? 'posts' : 'videos']: { data: page(found).map(post => contentItem(dataset, post)) } }
    }
    case 'tags': {
      // 0.22 nodes run MATCH on a plain table, which SQLite refuses.
      if (versionAtLeast(chain.version, 0, 22, 0)) throw new RpcError(500, 'SQLiteDatabase: unable to use function MATCH in the requested context')
      const prefix = keyword.toLowerCase()
      const tags = new Set<string>()
      for (const post of dataset.posts) for (const tag of post.tags) if (prefix !== '' && tag.startsWith(prefix)) tags.add(tag)
      return { tags: { data: page([...tags].sort()) } }
    }
    case 'users': {
      const prefix = keyword.toLowerCase()
      const found = prefix === '' ? [] : dataset.users.filter(user => !user.deleted && user.name.toLowerCase().startsWith(prefix))
      return { users: { data: found.slice(0, 30).map(shortProfile) } }
    }
    default:
      return {}
  }
}

const postsByHash = new WeakMap<Dataset, Map<string, PostRecord>>()
/** How many hashes one getcontent call reads; the node keeps about 100. */
const MAX_CONTENT_HASHES = 100

/**
 * `getcontent [hashes, viewer?, last?]`: the posts among `hashes` (one string, or an array of
 * strings, each any version's hash or the root txid), in no set order; unknown hashes are
 * absent. The third position is read only as a JSON number, and any number but 1 there gives
 * `[]` on 0.22 nodes.
 */
export function getContent (dataset: Dataset, params: unknown[]): unknown[] {
  const [hashes, , last] = params
  // Neither a string nor a list (or nothing): no hashes, so nothing found.
  const list = typeof hashes === 'string' ? [hashes] : Array.isArray(hashes) ? hashes : []
  if (list.some(hash => typeof hash !== 'string')) throw new RpcError(-32603, 'JSON value is not a string as expected')
  if (typeof last === 'number' && last !== 1) return []
  let index = postsByHash.get(dataset)
  if (index === undefined) postsByHash.set(dataset, index = new Map(dataset.posts.map(post => [post.hash, post])))
  const wanted = new Set((list as string[]).filter(hash => hash !== '').slice(0, MAX_CONTENT_HASHES))
  const found = [...wanted].map(hash => index.get(hash)).filter(post => post !== undefined)
  // Not the request's order: the node assembles the answer by its own row ids.
  found.sort((a, b) => a.id - b.id)
  return found.map(post => contentItem(dataset, post))
}
