/**
 * The events every instance shares through Redis (REDIS_URL): one Redis Stream, bounded by count
 * (exactly) and by age, whose ids (`<ms>-<seq>`, given by Redis) order the events across
 * instances. An instance appends an event and publishes it on a channel in one script; every
 * instance, the author too, delivers what the channel brings to its own streams, in the stream's
 * order. Replay reads the Redis Stream, so it works whichever instance a client reconnects to.
 *
 * Nothing is lost silently. Each entry names the one before it (`prev`), so an instance sees a
 * message it missed (the channel delivers at most once, and not while disconnected) and reads
 * the entries between from the stream; when they are gone too (trimmed, Redis restarted empty),
 * it says so (`onHole`), and the hub tells its streams to resync. A replay is answered only when
 * the first entry after the client's id names that id as its `prev`: else some entry between
 * was trimmed, and the client is told to resync.
 *
 * Events the ingest of several instances reports alike (the same block) are kept once: each
 * carries a key of its own, which the first instance to append it takes for a while.
 *
 * Losing Redis costs only the sharing: `append` answers `unavailable` at once (RedisLink never
 * waits past its budget), and the hub delivers the event on this instance alone.
 */
import type { RedisLink, RedisScript } from 'pocketnet-client'

export interface SharedEntry {
  id: string
  /** The id of the entry before it in the stream; `0-0` for the first. */
  prev: string
  topic: string
  type: string
  data: Record<string, unknown>
}

export interface SharedLogOptions {
  /** Entries the stream keeps (at least one, which the next entry names as its `prev`). */
  maxEvents: number
  /** Milliseconds an entry is kept, on Redis's clock. */
  maxAgeMs: number
}

/** Counts for metrics. */
export interface SharedLogCounts {
  /** Events appended to the stream by this instance. */
  shared: number
  /** Events another instance had appended already (the same block from two ingests). */
  duplicates: number
  /** Events Redis could not take: delivered on this instance alone. */
  unshared: number
  /** Times entries were missing between two this instance delivered. */
  holes: number
}

export type AppendOutcome = { outcome: 'shared', id: string } | { outcome: 'duplicate' | 'unavailable' }

const STREAM = 'events:log'
const CHANNEL = 'events:new'
const SEEN = 'events:seen:'
/** How long the first instance to append a chain event keeps others from appending it again. */
const DUPLICATE_WINDOW_MS = 10 * 60_000
/** An id Redis takes in a range: two numbers short enough never to overflow its 64 bits. */
const STREAM_ID = /^\d{1,16}-\d{1,16}$/

/**
 * KEYS: the stream, the event's key (the stream's again when it has none).
 * ARGV: channel, maxEvents, maxAgeMs, duplicateWindowMs, topic, type, data (JSON), has a key (1|0).
 * → {id, prev}, or false when another instance appended the same event.
 */
const APPEND = `
if ARGV[8] == '1' and not redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[4]) then return false end
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local prev = last[1] and last[1][1] or '0-0'
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '=', ARGV[2], '*', 'prev', prev, 'topic', ARGV[5], 'type', ARGV[6], 'data', ARGV[7])
local time = redis.call('TIME')
local oldest = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000) - tonumber(ARGV[3])
if oldest > 0 then redis.call('XTRIM', KEYS[1], 'MINID', '=', string.format('%d-0', oldest)) end
redis.call('PUBLISH', ARGV[1], id .. '\\n' .. prev .. '\\n' .. ARGV[5] .. '\\n' .. ARGV[6] .. '\\n' .. ARGV[7])
return {id, prev}`

/**
 * KEYS: the stream. ARGV: the id seen last, then the topics.
 * → {'gap'} when what follows that id is not all kept; else {'ok', id, topic, type, data, ...} for
 * the entries after it on the topics, oldest first.
 */
const SINCE = `
local after = redis.call('XRANGE', KEYS[1], '(' .. ARGV[1], '+')
local chained
if #after == 0 then
  local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
  chained = (last[1] and last[1][1] or '0-0') == ARGV[1]
else
  chained = after[1][2][2] == ARGV[1]
end
if not chained then return {'gap'} end
local wanted = {}
for i = 2, #ARGV do wanted[ARGV[i]] = true end
local found = {'ok'}
for _, entry in ipairs(after) do
  local fields = entry[2]
  if wanted[fields[4]] then
    table.insert(found, entry[1])
    table.insert(found, fields[4])
    table.insert(found, fields[6])
    table.insert(found, fields[8])
  end
end
return found`

/** Orders two stream ids: negative, zero or positive. */
export function compareStreamIds (a: string, b: string): number {
  const [aMs = 0, aSeq = 0] = a.split('-').map(Number)
  const [bMs = 0, bSeq = 0] = b.split('-').map(Number)
  return aMs - bMs || aSeq - bSeq
}

export const isStreamId = (id: string): boolean => STREAM_ID.test(id)

/** The entry a channel message (`id`, `prev`, `topic`, `type`, data, one a line) carries. */
function parseMessage (message: string): SharedEntry | undefined {
  const [id, prev, topic, type, ...rest] = message.split('\n')
  if (id === undefined || prev === undefined || topic === undefined || type === undefined) return undefined
  try {
    return { id, prev, topic, type, data: JSON.parse(rest.join('\n')) }
  } catch {
    return undefined
  }
}

/** Entries as XRANGE answers them: `[id, [field, value, ...]]`. */
function parseRange (range: Array<[string, string[]]>): SharedEntry[] {
  return range.map(([id, fields]) => {
    const value: Record<string, string> = {}
    for (let i = 0; i + 1 < fields.length; i += 2) value[fields[i] as string] = fields[i + 1] as string
    return { id, prev: value.prev ?? '', topic: value.topic ?? '', type: value.type ?? '', data: JSON.parse(value.data ?? '{}') }
  })
}

export class SharedEventLog {
  readonly counts: SharedLogCounts = { shared: 0, duplicates: 0, unshared: 0, holes: 0 }
  readonly #link: RedisLink
  readonly #options: SharedLogOptions
  readonly #deliver: (entry: SharedEntry) => void
  readonly #onHole: () => void
  readonly #append: RedisScript<[string, string] | null>
  readonly #since: RedisScript<string[]>
  readonly #stream: string
  readonly #unsubscribe: () => void
  /** The last entry delivered here; undefined before the first. */
  #last: string | undefined
  /** Deliveries, one after another, in the stream's order. */
  #queue: Promise<void> = Promise.resolve()

  /**
   * @param deliver hands an entry to this instance's streams, each once, in the stream's order
   * @param onHole called when entries before the next one delivered are lost
   */
  constructor (link: RedisLink, options: SharedLogOptions, deliver: (entry: SharedEntry) => void, onHole: () => void) {
    this.#link = link
    this.#options = options
    this.#deliver = deliver
    this.#onHole = onHole
    this.#stream = link.keyPrefix + STREAM
    this.#append = link.script('events-append', 2, APPEND)
    this.#since = link.script('events-since', 1, SINCE)
    this.#unsubscribe = link.subscribe(CHANNEL, message => {
      const entry = parseMessage(message)
      if (entry !== undefined) this.#accept(entry)
    })
  }

  /**
   * Appends an event, and resolves once this instance delivered it (or found it was appended
   * already, or could not append it). Never rejects.
   * @param key the event's own key, when other instances may report it too
   */
  async append (topic: string, type: string, data: Record<string, unknown>, key?: string): Promise<AppendOutcome> {
    const json = JSON.stringify(data)
    const keyName = key === undefined ? this.#stream : this.#link.keyPrefix + SEEN + key
    const added = await this.#append([this.#stream, keyName], [
      this.#link.keyPrefix + CHANNEL, Math.max(1, this.#options.maxEvents), this.#options.maxAgeMs, DUPLICATE_WINDOW_MS, topic, type, json, key === undefined ? '0' : '1',
    ])
    if (added === undefined) {
      this.counts.unshared++
      return { outcome: 'unavailable' }
    }
    if (added === null) {
      this.counts.duplicates++
      return { outcome: 'duplicate' }
    }
    this.counts.shared++
    const [id, prev] = added
    // Delivered here in order, whether or not the channel's copy comes (it is then skipped).
    await this.#accept({ id, prev, topic, type, data: JSON.parse(json) })
    return { outcome: 'shared', id }
  }

  /**
   * The entries after `id` on `topics` (a replay), `gap` when some are no longer kept or `id` is
   * no id of the stream, `undefined` when Redis could not answer.
   */
  async since (id: string, topics: ReadonlySet<string>): Promise<SharedEntry[] | 'gap' | undefined> {
    if (!isStreamId(id)) return 'gap'
    const answer = await this.#since([this.#stream], [id, ...topics])
    if (answer === undefined) return undefined
    if (answer[0] !== 'ok') return 'gap'
    const entries: SharedEntry[] = []
    for (let i = 1; i + 3 < answer.length; i += 4) {
      entries.push({ id: answer[i] as string, prev: '', topic: answer[i + 1] as string, type: answer[i + 2] as string, data: JSON.parse(answer[i + 3] as string) })
    }
    return entries
  }

  /**
   * Looks for entries this instance has not delivered (a channel message lost while it was
   * disconnected from Redis) and delivers them: called now and then by the plugin.
   */
  async catchUp (): Promise<void> {
    if (this.#last === undefined) return
    const newest = await this.#link.run('events-newest', redis => redis.xrevrange(this.#stream, '+', '-', 'COUNT', 1))
    const [entry] = parseRange((newest ?? []) as Array<[string, string[]]>)
    if (entry !== undefined && this.#last !== undefined && compareStreamIds(entry.id, this.#last) > 0) await this.#accept(entry)
  }

  close (): void {
    this.#unsubscribe()
  }

  #accept (entry: SharedEntry): Promise<void> {
    this.#queue = this.#queue.then(() => this.#inOrder(entry)).catch(() => {})
    return this.#queue
  }

  async #inOrder (entry: SharedEntry): Promise<void> {
    const last = this.#last
    if (last !== undefined && compareStreamIds(entry.id, last) <= 0) return
    if (last !== undefined && entry.prev !== last) {
      const between = await this.#link.run('events-range', redis => redis.xrange(this.#stream, `(${last}`, `(${entry.id}`))
      const missed = between === undefined ? undefined : parseRange(between as Array<[string, string[]]>)
      if (missed === undefined || (missed[0]?.prev ?? entry.prev) !== last) {
        this.counts.holes++
        this.#onHole()
      }
      for (const each of missed ?? []) this.#handOver(each)
    }
    this.#handOver(entry)
  }

  #handOver (entry: SharedEntry): void {
    this.#last = entry.id
    this.#deliver(entry)
  }
}
