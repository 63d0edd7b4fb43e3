/**
 * The emulator's dataset: 320 users, 3200 posts and their comments, generated from a fixed seed,
 * so that every run (tests, demo, benchmarks) sees the same accounts, posts and heights.
 *
 * Landmarks tests rely on:
 * - `users[0]` is a live account with posts; the last 20 live users have no posts; 5 accounts
 *   are deleted (`deleted: true`).
 * - Two posts carry HTML in their caption (`<img src=x onerror=alert(1)>`, `<script>`); both
 *   are found with the keyword `xsscheck`.
 * - `bitcoin` matches several hundred posts in every language; `music` between 12 and 100.
 * - Each post has exactly `comments` comments (top-level and replies), written by live users.
 *   They come from a second PRNG (seed + 1) after users and posts are made, so that adding them
 *   changed no user or post.
 */
import bs58check from 'bs58check'
import { ABOUT, ANSWER_TEXTS, COMMENT_TEXTS, FIRST_NAMES, LANGUAGES, NAME_SUFFIXES, TEMPLATES, TOPICS, type Language, type Topic } from './vocabulary.js'

export interface UserRecord {
  address: string
  id: number
  hash: string
  name: string
  /** Avatar URL. */
  avatar: string
  about: string
  language: Language
  site: string
  reputation: number
  regdate: number
  update: number
  referrer: string
  publicKey: string
  deleted: boolean
  postCount: number
  subscribes: string[]
  subscribers: string[]
  likers: number
}

export interface PostRecord {
  hash: string
  id: number
  address: string
  height: number
  time: number
  language: Language
  type: 'share' | 'video' | 'article'
  caption: string
  message: string
  url: string
  tags: string[]
  images: string[]
  scoreCnt: number
  scoreSum: number
  comments: number
  reposted: number
  /** Lower-cased words of caption and message, for search. */
  words: string[]
}

/** A comment as the node keeps it: its first version, never edited or deleted. */
export interface CommentRecord {
  /** The comment's root transaction: what replies and getcomments' ids name. */
  id: string
  /** The post's root txid: its `hash` in this dataset. */
  postid: string
  /** The author, a live user. */
  address: string
  /** Unix seconds: the time of its block. */
  time: number
  block: number
  /**
   * The payload as Bastyon writes it and the node stores it: the JSON text of
   * `{message, url, images}`, each value URL-encoded (`encodeURIComponent`).
   */
  msg: string
  /** '' for a top-level comment, else the top-level comment of its thread. */
  parentid: string
  /** '' for a top-level comment, else the comment it answers: its parent or a reply in the same thread. */
  answerid: string
  scoreUp: number
  scoreDown: number
  /** The comment's own rating, an integer as the node stores it. */
  reputation: number
  /** PKOIN sent to the post's author with the comment, in 1e-8 units; 0 for none. */
  donation: number
}

/** What getuserstate reports beyond the profile, per user id. */
export interface AccountRecord {
  /** In 1e-8 PKOIN. */
  balance: number
  /** Scores to posts and to comments, and complaints, in the last day (the node's window). */
  scoresSpent: number
  commentScoresSpent: number
  complainsSpent: number
}

export interface Dataset {
  users: UserRecord[]
  /** Newest first. */
  posts: PostRecord[]
  /** Grouped by post, in the posts' order; within a post in the order written. */
  comments: CommentRecord[]
  /** By user id (which, unlike the address, a test never changes). */
  accounts: Map<number, AccountRecord>
  usersByAddress: Map<string, UserRecord>
  /** The chain height the dataset was generated for; every post is at or below it. */
  height: number
}

export interface DatasetOptions {
  seed?: number
  users?: number
  posts?: number
  height?: number
}

export const DEFAULT_HEIGHT = 3_100_000
/** Unix time of block DEFAULT_HEIGHT; one block a minute before it. */
const ANCHOR_TIME = 1_763_800_000
const DELETED_USERS = 5
const SILENT_USERS = 20

/** mulberry32: a small seeded PRNG (also drives the benchmark's request mix). */
export function seeded (seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6D2B79F5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Splits text into lower-cased words as SQLite's unicode61 tokenizer does (CJK runs stay whole). */
export function wordsOf (text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []
}

export function generateDataset (options: DatasetOptions = {}): Dataset {
  const random = seeded(options.seed ?? 2024)
  const height = options.height ?? DEFAULT_HEIGHT
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T
  const hex = (bytes: number): string => Array.from({ length: bytes }, () => Math.floor(random() * 256).toString(16).padStart(2, '0')).join('')
  const timeAt = (blockHeight: number): number => ANCHOR_TIME - (height - blockHeight) * 60

  const users: UserRecord[] = []
  const userCount = options.users ?? 320
  for (let i = 0; i < userCount; i++) {
    const payload = new Uint8Array(21)
    payload[0] = 0x37
    for (let b = 1; b < 21; b++) payload[b] = Math.floor(random() * 256)
    const language = LANGUAGES[i % LANGUAGES.length] as Language
    const regHeight = height - 900_000 + Math.floor(random() * 800_000)
    users.push({
      address: bs58check.encode(payload),
      id: 1000 + i,
      hash: hex(32),
      name: `${pick(FIRST_NAMES[language])}${pick(NAME_SUFFIXES)}${i % 7 === 0 ? i : ''}`,
      avatar: `https://bastyon.com/images/avatars/${(i % 64) + 1}.png`,
      about: ABOUT[language],
      language,
      site: i % 5 === 0 ? `https://example.org/~user${i}` : '',
      reputation: i % 9 === 0 ? 0 : Math.round(random() * 5000) / 10,
      regdate: timeAt(regHeight),
      update: timeAt(regHeight + Math.floor(random() * 50_000)),
      referrer: '',
      publicKey: `02${hex(32)}`,
      deleted: i > 0 && i % 61 === 0 && i / 61 <= DELETED_USERS,
      postCount: 0,
      subscribes: [],
      subscribers: [],
      likers: Math.floor(random() * 300),
    })
  }
  const live = users.filter(user => !user.deleted)
  const authors = live.slice(0, live.length - SILENT_USERS)
  for (const user of live) {
    const count = Math.floor(random() * 6)
    for (let s = 0; s < count; s++) {
      const other = pick(live)
      if (other !== user && !user.subscribes.includes(other.address)) {
        user.subscribes.push(other.address)
        other.subscribers.push(user.address)
      }
    }
  }

  const totalWeight = TOPICS.reduce((sum, topic) => sum + topic.weight, 0)
  const pickTopic = (): Topic => {
    let target = random() * totalWeight
    for (const topic of TOPICS) {
      target -= topic.weight
      if (target <= 0) return topic
    }
    return TOPICS[0] as Topic
  }

  const posts: PostRecord[] = []
  const postCount = options.posts ?? 3200
  for (let i = 0; i < postCount; i++) {
    // users[0] writes often, so that it is a good example account.
    const author = i % 40 === 0 ? users[0] as UserRecord : pick(authors)
    const language = random() < 0.85 ? author.language : pick(LANGUAGES)
    const topic = pickTopic()
    const words = topic.words[language]
    const templates = TEMPLATES[language]
    const fill = (template: string): string => template.replace('{w}', pick(words))
    const sentences = Array.from({ length: 1 + Math.floor(random() * 3) }, () => fill(pick(templates.sentences)))
    const roll = random()
    const type = roll < 0.85 ? 'share' : roll < 0.97 ? 'video' : 'article'
    const postHeight = height - Math.floor(random() * 100_000)
    const hash = hex(32)
    const caption = fill(pick(templates.captions))
    const message = sentences.join(' ')
    posts.push({
      hash,
      id: 500_000 + i,
      address: author.address,
      height: postHeight,
      time: timeAt(postHeight),
      language,
      type,
      caption,
      message,
      url: type === 'video' ? `https://bastyon.com/video/${hash.slice(0, 16)}` : '',
      tags: [topic.tag, ...(random() < 0.3 ? [pick(TOPICS).tag] : [])].filter((tag, index, all) => all.indexOf(tag) === index),
      images: random() < 0.4 ? [`https://bastyon.com/images/posts/${hash.slice(0, 12)}.jpg`] : [],
      scoreCnt: Math.floor(random() * 50),
      scoreSum: 0,
      comments: Math.floor(random() * 20),
      reposted: Math.floor(random() * 5),
      words: wordsOf(`${caption} ${message}`),
    })
  }
  // User content with HTML, for the front-end's escaping tests.
  const xss = [
    ['Check this <img src=x onerror=alert(1)> xsscheck', 'An image tag in a caption must show as text. xsscheck'],
    ['<script>alert(1)</script> xsscheck script', '<b>bold?</b> Markup from the chain is text, not HTML. xsscheck'],
  ]
  xss.forEach(([caption, message], index) => {
    const post = posts[index * 7 + 3] as PostRecord
    post.caption = caption as string
    post.message = message as string
    post.words = wordsOf(`${post.caption} ${post.message}`)
  })

  for (const post of posts) {
    post.scoreSum = post.scoreCnt * (3 + Math.floor(random() * 3))
    const author = users.find(user => user.address === post.address)
    if (author) author.postCount++
  }
  posts.sort((a, b) => b.time - a.time || b.id - a.id)
  const more = seeded((options.seed ?? 2024) + 1)
  return {
    users,
    posts,
    comments: generateComments(more, users, posts, height),
    accounts: new Map(users.map(user => [user.id, generateAccount(more)])),
    usersByAddress: new Map(users.map(user => [user.address, user])),
    height,
  }
}

/** `count` comments for every post: about a third of them replies, each after what it answers. */
function generateComments (random: () => number, users: UserRecord[], posts: PostRecord[], height: number): CommentRecord[] {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T
  const txid = (): string => {
    let text = ''
    for (let i = 0; i < 8; i++) text += Math.floor(random() * 2 ** 32).toString(16).padStart(8, '0')
    return text
  }
  const live = users.filter(user => !user.deleted)
  const comments: CommentRecord[] = []
  for (const post of posts) {
    const word = wordsOf(post.caption)[0] ?? ''
    const threads: CommentRecord[][] = []
    for (let n = 0; n < post.comments; n++) {
      const thread = threads.length > 0 && random() < 0.35 ? pick(threads) : undefined
      const answered = thread === undefined ? undefined : pick(thread)
      const after = answered?.block ?? post.height
      const block = after + Math.floor(random() * random() * (height - after + 1))
      const author = pick(live)
      const text = pick((answered ? ANSWER_TEXTS : COMMENT_TEXTS)[post.language]).replace('{w}', word)
      const scoreUp = Math.floor(random() * random() * 12)
      const scoreDown = random() < 0.15 ? 1 + Math.floor(random() * 3) : 0
      const donation = author.address !== post.address && random() < 0.04 ? (1 + Math.floor(random() * 50)) * 10_000_000 : 0
      const comment: CommentRecord = {
        id: txid(),
        postid: post.hash,
        address: author.address,
        time: ANCHOR_TIME - (height - block) * 60,
        block,
        msg: JSON.stringify({ message: encodeURIComponent(text), url: '', images: [] }),
        parentid: thread?.[0]?.id ?? '',
        answerid: answered?.id ?? '',
        scoreUp,
        scoreDown,
        reputation: scoreUp - scoreDown,
        donation,
      }
      if (thread === undefined) threads.push([comment])
      else thread.push(comment)
      comments.push(comment)
    }
  }
  return comments
}

function generateAccount (random: () => number): AccountRecord {
  return {
    balance: Math.floor(random() ** 3 * 400 * 100_000_000),
    scoresSpent: Math.floor(random() * 20),
    commentScoresSpent: Math.floor(random() * 30),
    complainsSpent: random() < 0.1 ? 1 : 0,
  }
}

/** The block at Unix time `time` in `dataset` (one a minute). */
export function heightAt (dataset: Dataset, time: number): number {
  return dataset.height - Math.round((ANCHOR_TIME - time) / 60)
}

/**
 * The block in which `follower` subscribed to `followed`: the dataset keeps no such height, so
 * it is derived from the two addresses, after both registered and at or below the dataset's height.
 */
export function subscriptionHeight (dataset: Dataset, follower: UserRecord, followed: UserRecord): number {
  const from = Math.min(dataset.height, Math.max(heightAt(dataset, follower.regdate), heightAt(dataset, followed.regdate)))
  let hash = 0x811c9dc5
  for (const char of `${follower.address}>${followed.address}`) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193) >>> 0
  return from + (hash % (dataset.height - from + 1))
}

let defaultDataset: Dataset | undefined

/** The default dataset, generated once per process and shared by every emulator in it. */
export function getDefaultDataset (): Dataset {
  defaultDataset ??= generateDataset()
  return defaultDataset
}
