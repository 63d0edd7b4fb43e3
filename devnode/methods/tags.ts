/** Tags: gettags. */
import type { Dataset } from '../data/generate.js'
import { getStr } from './common.js'

/** Per language, every tag with the number of posts carrying it, most used first. */
const counts = new WeakMap<Dataset, Map<string, Array<{ tag: string, count: number }>>>()

function tagsOf (dataset: Dataset, lang: string): Array<{ tag: string, count: number }> {
  let byLanguage = counts.get(dataset)
  if (byLanguage === undefined) {
    const tally = new Map<string, Map<string, number>>()
    for (const post of dataset.posts) {
      let tags = tally.get(post.language)
      if (tags === undefined) tally.set(post.language, tags = new Map())
      for (const tag of new Set(post.tags)) tags.set(tag, (tags.get(tag) ?? 0) + 1)
    }
    byLanguage = new Map([...tally].map(([language, tags]) => [
      language,
      // The node orders by count only; ties go by name here so that answers are stable.
      [...tags].map(([tag, count]) => ({ tag, count })).sort((a, b) => b.count - a.count || (a.tag < b.tag ? -1 : 1)),
    ]))
    counts.set(dataset, byLanguage)
  }
  return byLanguage.get(lang) ?? []
}

/**
 * The node's ParseInt32 on a paging string: nothing changes for "" or text with leading or
 * trailing white space; otherwise C's strtol: the leading decimal digits (0 when none), cut to
 * 32 bits.
 */
const LONG_MAX = 2n ** 63n - 1n

function parseInt32 (text: string, fallback: number): number {
  if (text === '' || /^\s|\s$/.test(text)) return fallback
  const digits = /^[+-]?\d+/.exec(text)?.[0]
  if (digits === undefined) return 0
  const value = BigInt(digits)
  const long = value > LONG_MAX ? LONG_MAX : value < -LONG_MAX - 1n ? -LONG_MAX - 1n : value
  return Number(BigInt.asIntN(32, long))
}

/**
 * `gettags [pageStart, pageSize, _, lang]`: the most used tags of a language, `[{tag, count}]`,
 * count descending. pageStart (an item offset, default "0") and pageSize (default "50") are
 * read with get_str and parsed: they must be STRINGS, a number or null is -32603. Position 2 is
 * never read; lang (default "en") is get_str whenever present.
 */
export function getTags (dataset: Dataset, params: unknown[]): unknown[] {
  const pageStart = params.length > 0 ? parseInt32(getStr(params[0]), 0) : 0
  const pageSize = params.length > 1 ? parseInt32(getStr(params[1]), 50) : 50
  const lang = params.length > 3 ? getStr(params[3]) : 'en'
  const tags = tagsOf(dataset, lang)
  // SQLite: a negative OFFSET is 0, a negative LIMIT is none.
  const start = Math.max(0, pageStart)
  return tags.slice(start, pageSize < 0 ? undefined : start + pageSize).map(item => ({ ...item }))
}
