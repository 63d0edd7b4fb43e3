/**
 * The storage rules on both databases (the embedded one and a PostgreSQL server), through
 * `app.storage`'s own class: versions and conditional writes, quotas, paging, owners kept apart,
 * and, on the server, two instances writing for one owner at once.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Database } from '../../src/db/database.js'
import { openDatabase } from '../../src/db/open-database.js'
import { StorageService } from '../../src/storage/storage-service.js'
import { DEFAULT_STORAGE_LIMITS, type StorageLimits } from '../../src/storage/storage-rules.js'
import { startPostgres } from '../helpers/start-postgres.js'
import { backends, sharedDatabase } from '../payments/databases.js'

const postgres = await startPostgres({ after })
const START = Date.parse('2026-11-24T10:00:00.000Z')

let owners = 0
/** An address of its own for each test on the shared database (storage does not check its form). */
const newOwner = (): string => `P-test-owner-${++owners}`

function service (db: Database, limits: Partial<StorageLimits> = {}, clock = { now: START }): StorageService {
  return new StorageService(async () => db, { limits: { ...DEFAULT_STORAGE_LIMITS, ...limits }, now: () => clock.now })
}

/** What the owner's usage row says against what its keys add up to: they must agree. */
async function accounted (db: Database, space: string, owner: string): Promise<{ usage: { keys: number, bytes: number }, actual: { keys: number, bytes: number } }> {
  const { rows: [usage] } = await db.query<{ keys: number, bytes: number }>('SELECT keys, bytes::integer AS bytes FROM storage_usage WHERE space = $1 AND owner = $2', [space, owner])
  const { rows: [actual] } = await db.query<{ keys: number, bytes: number }>('SELECT count(*)::integer AS keys, coalesce(sum(size), 0)::integer AS bytes FROM storage_items WHERE space = $1 AND owner = $2', [space, owner])
  return { usage: usage ?? { keys: 0, bytes: 0 }, actual: actual as { keys: number, bytes: number } }
}

for (const backend of backends(postgres)) {
  describe(`storage on the ${backend.name} database`, () => {
    const database = sharedDatabase(backend, { before, after })

    it('stores any JSON under a key, answers it with a new version on each write, and deletes it', async () => {
      const clock = { now: START }
      const user = service(database(), {}, clock).forUser(newOwner())
      assert.equal(await user.get('theme'), undefined)
      const values = [{ mode: 'dark', sizes: [1, 2.5, -3], nested: { ok: true, none: null } }, 'text with "quotes" and ünïcode ✓', 42, true, null, [], {}]
      const versions = new Set<string>()
      for (const value of values) {
        clock.now += 1000
        const stored = await user.put('theme', value)
        assert.deepEqual(stored, { key: 'theme', value, version: stored.version, updatedAt: new Date(clock.now).toISOString() })
        assert.match(stored.version, /^[A-Za-z0-9_-]{16}$/)
        versions.add(stored.version)
        assert.deepEqual(await user.get('theme'), stored)
      }
      assert.equal(versions.size, values.length, 'each write a new version')
      // Object keys keep the order they were written in (the value is kept as its JSON text).
      const ordered = await user.put('ordered', { zebra: 1, apple: 2, mango: 3 })
      assert.deepEqual(Object.keys((await user.get('ordered'))?.value as object), ['zebra', 'apple', 'mango'])
      assert.equal(ordered.key, 'ordered')
      assert.equal(await user.delete('theme'), true)
      assert.equal(await user.get('theme'), undefined)
      assert.equal(await user.delete('theme'), false, 'nothing left to delete')
    })

    it('writes only when If-Match names the stored version, and If-None-Match: * only when the key is new; a failed condition changes nothing', async () => {
      const user = service(database()).forUser(newOwner())
      await assert.rejects(user.put('score', 1, { ifVersion: 'AAAAAAAAAAAAAAAA' }), { code: 'STORAGE_ERR_PRECONDITION_FAILED', statusCode: 412, message: /does not exist/ })
      await assert.rejects(user.put('score', 1, { ifVersion: '*' }), { code: 'STORAGE_ERR_PRECONDITION_FAILED' })
      assert.equal(await user.get('score'), undefined)
      const first = await user.put('score', 1, { ifAbsent: true })
      await assert.rejects(user.put('score', 2, { ifAbsent: true }), { code: 'STORAGE_ERR_PRECONDITION_FAILED', message: /exists already/ })
      const second = await user.put('score', 2, { ifVersion: first.version })
      await assert.rejects(user.put('score', 3, { ifVersion: first.version }), { code: 'STORAGE_ERR_PRECONDITION_FAILED', message: /another one/ })
      assert.deepEqual(await user.get('score'), second, 'the stale write lost nothing')
      const third = await user.put('score', 3, { ifVersion: ['AAAAAAAAAAAAAAAA', second.version] })
      const fourth = await user.put('score', 4, { ifVersion: '*' })
      assert.notEqual(third.version, fourth.version)
      await assert.rejects(user.delete('score', { ifVersion: third.version }), { code: 'STORAGE_ERR_PRECONDITION_FAILED' })
      assert.deepEqual(await user.get('score'), fourth)
      await assert.rejects(user.delete('missing', { ifVersion: '*' }), { code: 'STORAGE_ERR_PRECONDITION_FAILED' })
      assert.equal(await user.delete('score', { ifVersion: fourth.version }), true)
    })

    it('keeps each owner\'s keys apart: users from one another and from the collections', async () => {
      const storage = service(database())
      const a = newOwner()
      const b = newOwner()
      await storage.forUser(a).put('profile', { owner: 'a' })
      await storage.collection(a).put('profile', { owner: 'collection' })
      assert.equal(await storage.forUser(b).get('profile'), undefined)
      assert.equal(await storage.forUser(b).delete('profile'), false)
      assert.deepEqual((await storage.forUser(b).list()).keys, [])
      assert.deepEqual((await storage.forUser(a).get('profile'))?.value, { owner: 'a' })
      assert.deepEqual((await storage.collection(a).get('profile'))?.value, { owner: 'collection' })
      assert.deepEqual(await storage.deleteUser(a), { keys: 1, bytes: 'profile'.length + '{"owner":"a"}'.length })
      assert.equal(await storage.forUser(a).get('profile'), undefined)
      assert.deepEqual((await storage.collection(a).get('profile'))?.value, { owner: 'collection' }, 'a user who leaves takes no collection with them')
      assert.deepEqual(await storage.deleteUser(a), { keys: 0, bytes: 0 })
      assert.deepEqual(await accounted(database(), 'user', a), { usage: { keys: 0, bytes: 0 }, actual: { keys: 0, bytes: 0 } })
    })

    it('refuses keys and collection names out of the rule, and values that are not JSON, before the database', async () => {
      const storage = service(database())
      const user = storage.forUser(newOwner())
      for (const key of ['', 'a'.repeat(129), 'with space', 'slash/key', 'ключ', 'a%2F', '..\u0000']) {
        await assert.rejects(user.put(key, 1), { code: 'STORAGE_ERR_KEY_INVALID', statusCode: 400 }, JSON.stringify(key))
        await assert.rejects(user.get(key), { code: 'STORAGE_ERR_KEY_INVALID' })
        assert.throws(() => storage.collection(key), { code: 'STORAGE_ERR_KEY_INVALID', message: /collection name/ })
      }
      assert.ok(await user.put('a'.repeat(128), 1))
      assert.ok(await user.put('A-z_0.9', 1))
      const loop: Record<string, unknown> = {}
      loop.self = loop
      for (const value of [undefined, () => 1, 10n, loop]) {
        await assert.rejects(user.put('bad', value), { code: 'STORAGE_ERR_VALUE_INVALID', statusCode: 400 })
      }
      assert.equal(await user.get('bad'), undefined)
    })

    it('holds the quotas: bytes of a value, keys of an owner, bytes of an owner; a write that shrinks is let through', async () => {
      const limits = { maxKeys: 3, maxValueBytes: 100, maxOwnerBytes: 250 }
      const owner = newOwner()
      const user = service(database(), limits).forUser(owner)
      // "xxx…" is its length plus two quotes as JSON.
      await assert.rejects(user.put('big', 'x'.repeat(99)), { code: 'STORAGE_ERR_VALUE_TOO_LARGE', statusCode: 413, message: /101 bytes as JSON, the most allowed is 100 \(STORAGE_MAX_VALUE_BYTES\)/ })
      await user.put('big', 'x'.repeat(98))
      await user.put('b', 'x'.repeat(98))
      // 103 + 101 so far; a third key of 101 bytes would make 305.
      await assert.rejects(user.put('c', 'x'.repeat(98)), { code: 'STORAGE_ERR_OWNER_FULL', statusCode: 413, message: /would take 305 bytes, the most allowed is 250 \(STORAGE_MAX_USER_BYTES\)/ })
      await user.put('c', 'x')
      await assert.rejects(user.put('d', 1), { code: 'STORAGE_ERR_TOO_MANY_KEYS', statusCode: 413, message: /3 keys are stored, the most allowed is 3 \(STORAGE_MAX_KEYS\)/ })
      // Rewriting a key is no new key, and within the bytes it is let through.
      await user.put('c', 'y'.repeat(20))
      assert.deepEqual(await user.usage(), { keys: 3, bytes: 103 + 101 + 23 })

      // Quotas lowered since: the owner is above them, and may still shrink, never grow.
      const lowered = service(database(), { maxKeys: 1, maxValueBytes: 100, maxOwnerBytes: 100 }).forUser(owner)
      await lowered.put('big', 'small')
      await assert.rejects(lowered.put('big', 'x'.repeat(90)), { code: 'STORAGE_ERR_OWNER_FULL' })
      await assert.rejects(lowered.put('e', 1), { code: 'STORAGE_ERR_TOO_MANY_KEYS' })
      assert.equal(await lowered.delete('b'), true)
    })

    it('lists keys in byte order, a page at a time, with their sizes and versions', async () => {
      const clock = { now: START }
      const user = service(database(), {}, clock).forUser(newOwner())
      const keys = ['b', 'B', 'a.1', 'a-2', 'a_3', '0', 'z', 'Z9', '_x', '-y']
      for (const key of keys) await user.put(key, { key })
      const sorted = [...keys].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)))
      const seen: string[] = []
      let after: string | undefined
      for (let page = 0; ; page++) {
        const listed = await user.list({ after, limit: 3 })
        assert.ok(listed.keys.length <= 3)
        seen.push(...listed.keys.map(entry => entry.key))
        for (const entry of listed.keys) {
          const stored = await user.get(entry.key)
          assert.deepEqual(entry, { key: entry.key, size: entry.key.length + JSON.stringify({ key: entry.key }).length, version: stored?.version, updatedAt: new Date(START).toISOString() })
        }
        if (listed.next === null) break
        assert.equal(listed.next, listed.keys.at(-1)?.key)
        after = listed.next
        assert.ok(page < 5)
      }
      assert.deepEqual(seen, sorted)
      assert.deepEqual((await user.list({ limit: 1000 })).keys.map(entry => entry.key), sorted)
      assert.deepEqual(await user.list({ after: 'z' }), { keys: [], next: null })
      await assert.rejects(user.list({ limit: 0 }), RangeError)
      await assert.rejects(user.list({ limit: 1001 }), RangeError)
      await assert.rejects(user.list({ after: 'bad key' }), { code: 'STORAGE_ERR_KEY_INVALID' })
    })

    it('of two writes made with the same expected version, applies one and refuses the other, every time', async (t) => {
      // On the server, two instances: each its own connection pool.
      const [first, second] = backend.name === 'server'
        ? await twoConnections(t)
        : [database(), database()]
      const owner = newOwner()
      const a = service(first).forUser(owner)
      const b = service(second).forUser(owner)
      let version = (await a.put('counter', 0)).version
      for (let round = 1; round <= 20; round++) {
        const outcomes = await Promise.allSettled([a.put('counter', { by: 'a', round }, { ifVersion: version }), b.put('counter', { by: 'b', round }, { ifVersion: version })])
        const won = outcomes.filter(outcome => outcome.status === 'fulfilled')
        const lost = outcomes.filter(outcome => outcome.status === 'rejected')
        assert.equal(won.length, 1, `round ${round}`)
        assert.equal((lost[0]?.reason as { code?: string }).code, 'STORAGE_ERR_PRECONDITION_FAILED')
        const winner = (won[0] as PromiseFulfilledResult<{ version: string, value: unknown }>).value
        assert.deepEqual((await b.get('counter'))?.value, winner.value, 'the winner\'s value is the stored one')
        version = winner.version
      }
    })

    it('keeps the quotas when many writes for one owner race, and its totals exact', async (t) => {
      const [first, second] = backend.name === 'server' ? await twoConnections(t) : [database(), database()]
      const owner = newOwner()
      const limits = { maxKeys: 10, maxValueBytes: 100, maxOwnerBytes: 400 }
      const a = service(first, limits).forUser(owner)
      const b = service(second, limits).forUser(owner)
      const writes = Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? a : b).put(`k${i}`, 'x'.repeat(i % 5 === 0 ? 60 : 10)))
      const outcomes = await Promise.allSettled(writes)
      const refused = outcomes.flatMap(outcome => outcome.status === 'rejected' ? [(outcome.reason as { code: string }).code] : [])
      assert.ok(refused.every(code => code === 'STORAGE_ERR_TOO_MANY_KEYS' || code === 'STORAGE_ERR_OWNER_FULL'), refused.join())
      const { usage, actual } = await accounted(first, 'user', owner)
      assert.deepEqual(usage, actual, 'the usage row adds up to the keys')
      assert.ok(actual.keys <= 10 && actual.bytes <= 400, JSON.stringify(actual))
      assert.equal(outcomes.length - refused.length, actual.keys)
      // Deletes racing with writes keep the totals exact too.
      const listed = (await a.list()).keys.map(entry => entry.key)
      await Promise.allSettled([...listed.map((key, i) => (i % 2 === 0 ? a : b).delete(key)), ...Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? b : a).put(`n${i}`, i))])
      const again = await accounted(first, 'user', owner)
      assert.deepEqual(again.usage, again.actual)
      assert.ok(again.actual.keys <= 10)
    })

    it('creates a new owner\'s totals once when its first writes race, and again when its keys were deleted meanwhile', async (t) => {
      const [first, second] = backend.name === 'server' ? await twoConnections(t) : [database(), database()]
      for (let round = 0; round < 5; round++) {
        const owner = newOwner()
        const a = service(first).forUser(owner)
        const b = service(second).forUser(owner)
        const written = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? a : b).put(`k${i}`, i)))
        assert.equal(written.length, 6)
        const { usage, actual } = await accounted(first, 'user', owner)
        assert.deepEqual(usage, { keys: 6, bytes: actual.bytes }, `round ${round}`)
        assert.deepEqual(usage, actual)
        // The owner leaves while writes go on: the writes after it start its totals again.
        const outcomes = await Promise.allSettled([
          ...Array.from({ length: 4 }, (_, i) => (i % 2 === 0 ? b : a).put(`n${i}`, { i })),
          service(round % 2 === 0 ? first : second).deleteUser(owner),
          ...Array.from({ length: 4 }, (_, i) => (i % 2 === 0 ? a : b).put(`m${i}`, { i })),
        ])
        assert.ok(outcomes.every(outcome => outcome.status === 'fulfilled'), JSON.stringify(outcomes.filter(outcome => outcome.status === 'rejected')))
        const after = await accounted(second, 'user', owner)
        assert.deepEqual(after.usage, after.actual, `round ${round}: the totals add up to the keys left`)
      }
    })

    it('keeps the last guard in the schema: a size that does not add up, a key out of the rule, negative totals', async () => {
      const db = database()
      const owner = newOwner()
      await service(db).forUser(owner).put('k', 1)
      await assert.rejects(db.query("INSERT INTO storage_items (space, owner, key, value, size, version, updated_at_ms) VALUES ('user', $1, 'x', '1', 1, 'AAAAAAAAAAAAAAAA', 0)", [owner]), { code: '23514' })
      await assert.rejects(db.query("INSERT INTO storage_items (space, owner, key, value, size, version, updated_at_ms) VALUES ('user', $1, 'a b', '1', 4, 'AAAAAAAAAAAAAAAA', 0)", [owner]), { code: '23514' })
      await assert.rejects(db.query('UPDATE storage_usage SET keys = -1 WHERE owner = $1', [owner]), { code: '23514' })
      await assert.rejects(db.query("INSERT INTO storage_items (space, owner, key, value, size, version, updated_at_ms) VALUES ('user', 'nobody', 'x', '1', 2, 'AAAAAAAAAAAAAAAA', 0)"), { code: '23503' })
    })
  })
}

/** Two instances' connections to one new database on the server. */
async function twoConnections (t: { after (fn: () => unknown): void }): Promise<[Database, Database]> {
  const url = await postgres.freshDatabase()
  const [a, b] = await Promise.all([openDatabase({ databaseUrl: url }), openDatabase({ databaseUrl: url })])
  t.after(() => Promise.all([a.close(), b.close()]))
  return [a, b]
}
