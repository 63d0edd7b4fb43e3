/**
 * What subscribers on every instance follow (REDIS_URL), for the one instance that follows the
 * chain for all (the ingest lease's holder, plugin.ts): the addresses (payments, a user's notifications) and the
 * posts (comments, scores) to read each block for.
 *
 * - Each instance keeps its own set in Redis, `events:interests:<id>` (members `a:<address>` and
 *   `c:<post>`), with a time to live of one lease, its id in an index (a sorted set scored by
 *   when its entry expires, on Redis's clock), and a token naming the set's content (a hash,
 *   `events:interests:tokens`), replaced with each change. It writes what changed when a topic
 *   gains its first subscriber or loses its last, and refreshes its entry every third of a lease;
 *   a set found out of step (expired, Redis restarted empty, a write whose answer was lost) is
 *   written whole again. A change is announced on a channel with the instance's id.
 * - The instance that ingests the chain reads the index every third of a lease, and the set of
 *   each instance whose token it has not read yet, or that announced a change: the periodic read
 *   costs a few bytes per instance, a set is read only when it changed. The addresses and posts
 *   of interest are the union, kept in memory between reads (the ingest asks once per block).
 * - Bounded: an instance writes at most MAX_PER_INSTANCE of its own, and the holder follows at
 *   most MAX_IN_ALL for the others. What is past either is not followed for the other instances
 *   (logged once).
 * - Writes, and reads of one instance's set, run at most once per GAP_MS each, whatever the churn.
 *
 * Losing Redis: writes and reads are skipped; what was read last stays until the next read.
 */
import { randomUUID } from 'node:crypto'
import type { RedisLink, RedisScript, TimerHandle, Timers } from 'pocketnet-client'
import type { Followed } from './interests.js'
import { Throttled } from './throttled.js'

/** Most addresses and posts one instance writes for the others to follow. */
export const MAX_PER_INSTANCE = 20_000
/** Most addresses and posts the holder follows for the other instances, in all. */
export const MAX_IN_ALL = 100_000
/** Least time between two writes of one instance, or two reads of one instance's set. */
const GAP_MS = 250

const INDEX = 'events:interests'
const TOKENS = 'events:interests:tokens'
const SET = 'events:interests:set:'
const CHANNEL = 'events:interests'

/** Lua: Redis's clock in milliseconds. */
const NOW_MS = `
local time = redis.call('TIME')
local nowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)`

/**
 * KEYS: the index, the tokens, the instance's set. ARGV: instance id, ttlMs, channel, replace
 * (1|0), the count the set must have after, a new token, the number of members to add, then the
 * members to add, then those to remove. → 1, or 0 when the set did not have the count after (it
 * was out of step). The token changes when the members may have.
 */
const WRITE = NOW_MS + `
local ttl = tonumber(ARGV[2])
if ARGV[4] == '1' then redis.call('DEL', KEYS[3]) end
local lastAdded = 7 + tonumber(ARGV[7])
for i = 8, lastAdded, 1000 do redis.call('SADD', KEYS[3], unpack(ARGV, i, math.min(i + 999, lastAdded))) end
for i = lastAdded + 1, #ARGV, 1000 do redis.call('SREM', KEYS[3], unpack(ARGV, i, math.min(i + 999, #ARGV))) end
if redis.call('SCARD', KEYS[3]) ~= tonumber(ARGV[5]) then return 0 end
if tonumber(ARGV[5]) > 0 then redis.call('PEXPIRE', KEYS[3], ttl) end
redis.call('ZADD', KEYS[1], nowMs + ttl, ARGV[1])
local changed = ARGV[4] == '1' or #ARGV > 7
if changed or redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then redis.call('HSET', KEYS[2], ARGV[1], ARGV[6]) end
for i = 1, 2 do
  if redis.call('PTTL', KEYS[i]) < ttl then redis.call('PEXPIRE', KEYS[i], ttl) end
end
if changed then redis.call('PUBLISH', ARGV[3], ARGV[1]) end
return 1`

/** KEYS: the index, the tokens. Forgets the instances whose entry expired. → {id, token, id, token…}. */
const READ_INDEX = NOW_MS + `
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', nowMs)) do redis.call('HDEL', KEYS[2], id) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', nowMs)
local answer = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  table.insert(answer, id)
  table.insert(answer, redis.call('HGET', KEYS[2], id) or '')
end
return answer`

/** KEYS: the index, the tokens, one instance's set. ARGV: its id. → {token, members…}, or false when its entry expired. */
const READ_ONE = NOW_MS + `
local expires = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not expires or tonumber(expires) <= nowMs then return false end
local answer = redis.call('SMEMBERS', KEYS[3])
table.insert(answer, 1, redis.call('HGET', KEYS[2], ARGV[1]) or '')
return answer`

export interface ClusterInterestsOptions {
  /** This instance's id (the lease's holder id). */
  instanceId: string
  /** How long an instance's set outlives its last refresh: one lease. */
  ttlMs: number
  timers: Timers
  /** This instance's own interests, now. */
  local: () => { addresses: string[], contents: string[] }
  /** Told once when a cap left interests out. Must not throw. */
  onTruncated?: (what: string) => void
}

const memberOf = (kind: 'a' | 'c', value: string): string => `${kind}:${value}`

/** Another instance's set, as last read. */
interface ReadSet { token: string, members: string[] }

export class ClusterInterests {
  readonly #link: RedisLink
  readonly #options: ClusterInterestsOptions
  readonly #index: string
  readonly #tokens: string
  readonly #write: RedisScript<number>
  readonly #readIndex: RedisScript<string[]>
  readonly #readOne: RedisScript<string[] | null>
  readonly #writer: Throttled
  /** What Redis holds of this instance's, as far as known. */
  #written = new Set<string>()
  /** The next write replaces the whole set: Redis may hold something else. */
  #outOfStep = true
  #writes = 0
  /** Each other instance's set, while reading. */
  #byInstance = new Map<string, ReadSet>()
  readonly #readers = new Map<string, Throttled>()
  #union: { addresses: Set<string>, contents: Set<string> } | undefined
  #reading = false
  #timer: TimerHandle | undefined
  #closed = false
  readonly #unsubscribe: () => void
  readonly #toldTruncated = new Set<string>()

  constructor (link: RedisLink, options: ClusterInterestsOptions) {
    this.#link = link
    this.#options = options
    this.#index = link.keyPrefix + INDEX
    this.#tokens = link.keyPrefix + TOKENS
    this.#write = link.script('events-interests-write', 3, WRITE)
    this.#readIndex = link.script('events-interests-index', 2, READ_INDEX)
    this.#readOne = link.script('events-interests-read', 3, READ_ONE)
    this.#writer = new Throttled(() => this.#writeNow(), GAP_MS, options.timers)
    this.#unsubscribe = link.subscribe(CHANNEL, id => this.#announced(id))
  }

  /** Writes this instance's interests now, then refreshes them (and reads the others', while reading) every third of a lease. */
  start (): void {
    this.#writer.request()
    this.#schedule()
  }

  /** This instance's interests changed: written soon. */
  changed (): void {
    this.#writer.request()
  }

  /** Reads the other instances' interests from now on (this instance ingests the chain for all), or stops and forgets them. */
  setReading (reading: boolean): void {
    if (reading === this.#reading) return
    this.#reading = reading
    if (reading) {
      this.#readEveryIndex().catch(() => {})
      return
    }
    for (const reader of this.#readers.values()) reader.close().catch(() => {})
    this.#readers.clear()
    this.#byInstance = new Map()
    this.#union = undefined
  }

  /** The other instances' addresses and posts, as last read (nothing while not reading). */
  readonly others = (): Followed => {
    if (this.#union !== undefined) return this.#union
    const addresses = new Set<string>()
    const contents = new Set<string>()
    for (const { members } of this.#byInstance.values()) {
      for (const member of members) {
        if (addresses.size + contents.size >= MAX_IN_ALL) {
          this.#truncated(`the other instances follow more than ${MAX_IN_ALL} addresses and posts: the rest are not followed`)
          break
        }
        if (member.startsWith('a:')) addresses.add(member.slice(2))
        else if (member.startsWith('c:')) contents.add(member.slice(2))
      }
    }
    this.#union = { addresses, contents }
    return this.#union
  }

  /** How many addresses and posts the other instances follow, as last read. */
  get size (): number {
    this.others()
    return (this.#union?.addresses.size ?? 0) + (this.#union?.contents.size ?? 0)
  }

  /** Stops, and takes this instance's interests out of Redis. */
  async close (): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    this.#unsubscribe()
    this.#options.timers.clearTimeout(this.#timer)
    for (const reader of this.#readers.values()) reader.close().catch(() => {})
    // A write in flight would put back what is taken out below.
    await this.#writer.close()
    const id = this.#options.instanceId
    await this.#link.run('events-interests-remove', redis => redis.multi().zrem(this.#index, id).hdel(this.#tokens, id).del(this.#setKey(id)).exec(), true)
  }

  #setKey (id: string): string {
    return this.#link.keyPrefix + SET + id
  }

  #schedule (): void {
    if (this.#closed) return
    this.#timer = this.#options.timers.setTimeout(() => {
      this.#writer.request()
      if (this.#reading) this.#readEveryIndex().catch(() => {})
      this.#schedule()
    }, Math.max(1, Math.floor(this.#options.ttlMs / 3)))
  }

  /** The members this instance writes: its addresses and posts, each once, at most MAX_PER_INSTANCE. */
  #current (): Set<string> {
    const { addresses, contents } = this.#options.local()
    const members = new Set<string>()
    for (const address of addresses) members.add(memberOf('a', address))
    for (const content of contents) members.add(memberOf('c', content))
    if (members.size <= MAX_PER_INSTANCE) return members
    this.#truncated(`this instance follows more than ${MAX_PER_INSTANCE} addresses and posts: the rest are followed only while it ingests the chain itself`)
    return new Set([...members].slice(0, MAX_PER_INSTANCE))
  }

  async #writeNow (): Promise<void> {
    if (this.#closed) return
    const current = this.#current()
    let answer = this.#outOfStep ? 0 : await this.#writeDelta(current, false)
    if (answer === 0) answer = await this.#writeDelta(current, true)
    if (answer === 1) {
      this.#written = current
      this.#outOfStep = false
    } else {
      // Unanswered: it may have been applied, or not.
      this.#outOfStep = true
    }
  }

  #writeDelta (current: Set<string>, replace: boolean): Promise<number | undefined> {
    const added = replace ? [...current] : [...current].filter(member => !this.#written.has(member))
    const removed = replace ? [] : [...this.#written].filter(member => !current.has(member))
    const { instanceId, ttlMs } = this.#options
    // A token no other write had, this process's or another's, even across a Redis restart.
    const token = `${randomUUID()}-${++this.#writes}`
    return this.#write([this.#index, this.#tokens, this.#setKey(instanceId)], [
      instanceId, ttlMs, this.#link.keyPrefix + CHANNEL, replace ? 1 : 0, current.size, token, added.length, ...added, ...removed,
    ])
  }

  /** Reads the index: forgets the instances gone, and reads the sets whose token changed. */
  async #readEveryIndex (): Promise<void> {
    const answer = await this.#readIndex([this.#index, this.#tokens], [])
    if (answer === undefined || !this.#reading) return
    const live = new Map<string, string>()
    for (let i = 0; i + 1 < answer.length; i += 2) live.set(String(answer[i]), String(answer[i + 1]))
    live.delete(this.#options.instanceId)
    for (const id of this.#byInstance.keys()) if (!live.has(id)) this.#forget(id)
    for (const [id, token] of live) if (this.#byInstance.get(id)?.token !== token) this.#readSoon(id)
  }

  /** Another instance announced a change: its set is read again. */
  #announced (id: string): void {
    if (!this.#reading || this.#closed || id === this.#options.instanceId) return
    this.#readSoon(id)
  }

  /** Reads one instance's set, at once or after the gap since its last read. */
  #readSoon (id: string): void {
    let reader = this.#readers.get(id)
    if (reader === undefined) this.#readers.set(id, reader = new Throttled(() => this.#readInstance(id), GAP_MS, this.#options.timers))
    reader.request()
  }

  async #readInstance (id: string): Promise<void> {
    const answer = await this.#readOne([this.#index, this.#tokens, this.#setKey(id)], [id])
    if (answer === undefined || !this.#reading) return
    if (answer === null) {
      this.#forget(id)
      return
    }
    const [token = '', ...members] = answer
    this.#byInstance.set(id, { token, members })
    this.#union = undefined
  }

  #forget (id: string): void {
    if (this.#byInstance.delete(id)) this.#union = undefined
    this.#readers.get(id)?.close().catch(() => {})
    this.#readers.delete(id)
  }

  #truncated (what: string): void {
    if (this.#toldTruncated.has(what)) return
    this.#toldTruncated.add(what)
    this.#options.onTruncated?.(what)
  }
}
