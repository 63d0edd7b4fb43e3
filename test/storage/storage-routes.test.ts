/**
 * Storage through HTTP, with users signed in with real signatures: values round-trip with ETags,
 * a stale If-Match loses nothing, one user's keys are invisible to another (404) and to anonymous
 * callers (401), the limits answer 413 and 400, DELETE /api/me takes the user's storage, the
 * collections are written by admins only; and nothing is ever cached or replayed across users.
 */
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { describe, it } from 'node:test'
import { addressOf, testKey } from '../../devnode/bastyon-host.js'
import { STORAGE_ERROR_CODES, STORAGE_ERROR_STATUS } from '../../src/storage/storage-errors.js'
import { startApp, type TestApp } from '../helpers/build-app.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { APP_ID, bearer, signIn, type Answer } from '../helpers/sign-in.js'
import { freshDataDir } from '../payments/databases.js'

type WithAfter = { after (fn: () => unknown): void }

const START = Date.parse('2026-11-24T10:00:00.000Z')
const ALICE = testKey('alice, who stores')
const BOB = testKey('bob, who stores too')
const ADMIN = testKey('the app\'s admin')

interface Setup { app: TestApp, alice: string, bob: string, admin: string, dataDir: string }

/** The service with sign-in and storage on, its database in a fresh directory, three users signed in. */
async function service (t: WithAfter, env: Record<string, string> = {}): Promise<Setup> {
  const node = await startEmulator(t)
  const dataDir = await freshDataDir()
  t.after(() => rmSync(dataDir, { recursive: true, force: true }))
  const app = await startApp(t, {
    nodes: [node.url],
    now: () => START,
    env: { BASTYON_APP_ID: APP_ID, AUTH_RATE_LIMIT_MAX: '1000', AUTH_SIGNATURE_CHECKS_PER_S: '1000', RATE_LIMIT_MAX: '100000', DATA_DIR: dataDir, APP_ADMINS: addressOf(ADMIN), ...env },
  })
  const [alice, bob, admin] = await Promise.all([ALICE, BOB, ADMIN].map(async key => (await signIn(app, { key, issued: START })).token))
  return { app, alice: alice as string, bob: bob as string, admin: admin as string, dataDir }
}

function call (app: TestApp, method: string, path: string, options: { token?: string, body?: unknown, raw?: string, headers?: Record<string, string> } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...(options.token === undefined ? {} : bearer(options.token).headers), ...options.headers }
  const body = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body))
  if (body !== undefined) headers['content-type'] ??= 'application/json'
  return app.get(path, { method, headers, ...(body === undefined ? {} : { body }) })
}

function assertRefused (answer: Answer, status: number, code: string | undefined, error?: RegExp): void {
  assert.equal(answer.status, status, JSON.stringify(answer.body))
  assert.equal(typeof answer.body.message, 'string')
  assert.equal(typeof answer.body.error, 'string')
  assert.equal(answer.body.code, code, JSON.stringify(answer.body))
  if (error !== undefined) assert.match(answer.body.error, error)
  assert.equal(answer.headers.get('cache-control'), 'no-store')
}

describe('per-user storage over HTTP', () => {
  it('round-trips a value with its ETag; a stale If-Match is 412 and loses nothing; If-None-Match: * creates only', async (t) => {
    const { app, alice } = await service(t)
    const value = { mode: 'dark', fontSize: 14, recent: ['a', 'b'], ratio: 0.5, none: null }
    const put = await call(app, 'PUT', '/api/me/storage/settings', { token: alice, body: { value } })
    assert.equal(put.status, 200, JSON.stringify(put.body))
    assert.deepEqual(put.body, { message: 'Value stored successfully', data: { key: 'settings', value, updatedAt: new Date(START).toISOString() } })
    const etag = put.headers.get('etag') as string
    assert.match(etag, /^"[A-Za-z0-9_-]{16}"$/)
    assert.equal(put.headers.get('cache-control'), 'no-store')

    const got = await call(app, 'GET', '/api/me/storage/settings', { token: alice })
    assert.deepEqual([got.status, got.body], [200, { message: 'Stored value retrieved successfully', data: { key: 'settings', value, updatedAt: new Date(START).toISOString() } }])
    assert.equal(got.headers.get('etag'), etag)
    assert.equal(got.headers.get('cache-control'), 'no-store')

    const updated = await call(app, 'PUT', '/api/me/storage/settings', { token: alice, body: { value: { mode: 'light' } }, headers: { 'if-match': etag } })
    assert.equal(updated.status, 200)
    const newEtag = updated.headers.get('etag') as string
    assert.notEqual(newEtag, etag)
    // The second writer still holds the first ETag.
    const stale = await call(app, 'PUT', '/api/me/storage/settings', { token: alice, body: { value: { mode: 'sepia' } }, headers: { 'if-match': etag } })
    assertRefused(stale, 412, 'STORAGE_ERR_PRECONDITION_FAILED', /was not written/)
    assert.equal(stale.body.message, 'Precondition failed')
    const kept = await call(app, 'GET', '/api/me/storage/settings', { token: alice })
    assert.deepEqual([kept.body.data.value, kept.headers.get('etag')], [{ mode: 'light' }, newEtag], 'nothing lost')
    // A weak tag never matches If-Match (strong comparison); a list matches any of its tags.
    assertRefused(await call(app, 'PUT', '/api/me/storage/settings', { token: alice, body: { value: 1 }, headers: { 'if-match': `W/${newEtag}` } }), 412, 'STORAGE_ERR_PRECONDITION_FAILED')
    assert.equal((await call(app, 'PUT', '/api/me/storage/settings', { token: alice, body: { value: 2 }, headers: { 'if-match': `${etag}, ${newEtag}` } })).status, 200)
    assert.equal((await call(app, 'PUT', '/api/me/storage/settings', { token: alice, body: { value: 3 }, headers: { 'if-match': '*' } })).status, 200)
    assertRefused(await call(app, 'PUT', '/api/me/storage/missing', { token: alice, body: { value: 1 }, headers: { 'if-match': '*' } }), 412, 'STORAGE_ERR_PRECONDITION_FAILED')

    assertRefused(await call(app, 'PUT', '/api/me/storage/settings', { token: alice, body: { value: 'again' }, headers: { 'if-none-match': '*' } }), 412, 'STORAGE_ERR_PRECONDITION_FAILED', /exists already/)
    const created = await call(app, 'PUT', '/api/me/storage/fresh', { token: alice, body: { value: 'new' }, headers: { 'if-none-match': '*' } })
    assert.equal(created.status, 200)

    // Any JSON: a string, a number, null, an array.
    for (const scalar of ['text', 7, null, false, [1, [2]]]) {
      assert.equal((await call(app, 'PUT', '/api/me/storage/scalar', { token: alice, body: { value: scalar } })).status, 200)
      assert.deepEqual((await call(app, 'GET', '/api/me/storage/scalar', { token: alice })).body.data.value, scalar)
    }

    const current = (await call(app, 'GET', '/api/me/storage/fresh', { token: alice })).headers.get('etag') as string
    assertRefused(await call(app, 'DELETE', '/api/me/storage/fresh', { token: alice, headers: { 'if-match': etag } }), 412, 'STORAGE_ERR_PRECONDITION_FAILED')
    assert.equal((await call(app, 'GET', '/api/me/storage/fresh', { token: alice })).status, 200, 'a refused delete deletes nothing')
    const deleted = await call(app, 'DELETE', '/api/me/storage/fresh', { token: alice, headers: { 'if-match': current } })
    assert.deepEqual([deleted.status, deleted.body], [200, { message: 'Value deleted successfully', data: { key: 'fresh' } }])
    assertRefused(await call(app, 'GET', '/api/me/storage/fresh', { token: alice }), 404, 'STORAGE_ERR_NOT_FOUND', /No value is stored under the key fresh/)
    assertRefused(await call(app, 'DELETE', '/api/me/storage/fresh', { token: alice }), 404, 'STORAGE_ERR_NOT_FOUND')
  })

  it('keeps one user\'s keys from another (404) and from anonymous callers (401), however often they were read', async (t) => {
    const { app, alice, bob } = await service(t)
    assert.equal((await call(app, 'PUT', '/api/me/storage/secret', { token: alice, body: { value: 'alice only' } })).status, 200)
    // Read often enough that anything replayable would be replayed by now.
    for (let i = 0; i < 4; i++) assert.equal((await call(app, 'GET', '/api/me/storage/secret', { token: alice })).status, 200)
    assertRefused(await call(app, 'GET', '/api/me/storage/secret', { token: bob }), 404, 'STORAGE_ERR_NOT_FOUND')
    assertRefused(await call(app, 'DELETE', '/api/me/storage/secret', { token: bob }), 404, 'STORAGE_ERR_NOT_FOUND')
    assertRefused(await call(app, 'PUT', '/api/me/storage/secret', { token: bob, body: { value: 'mine' }, headers: { 'if-match': '*' } }), 412, 'STORAGE_ERR_PRECONDITION_FAILED')
    const bobs = await call(app, 'GET', '/api/me/storage', { token: bob })
    assert.deepEqual(bobs.body.data.keys, [])
    // Bob's own key of the same name is his.
    assert.equal((await call(app, 'PUT', '/api/me/storage/secret', { token: bob, body: { value: 'bob only' } })).status, 200)
    assert.equal((await call(app, 'GET', '/api/me/storage/secret', { token: alice })).body.data.value, 'alice only')
    assert.equal((await call(app, 'GET', '/api/me/storage/secret', { token: bob })).body.data.value, 'bob only')

    for (const [method, path, body] of [['GET', '/api/me/storage/secret'], ['GET', '/api/me/storage'], ['PUT', '/api/me/storage/secret', { value: 1 }], ['DELETE', '/api/me/storage/secret'], ['DELETE', '/api/me']] as const) {
      const anonymous = await call(app, method, path, { body })
      assertRefused(anonymous, 401, 'AUTH_MISSING')
      assert.equal(anonymous.headers.get('www-authenticate'), 'Bearer')
      assertRefused(await call(app, method, path, { body, token: 'x'.repeat(43) }), 401, 'AUTH_TOKEN_INVALID')
    }
    assert.equal((await call(app, 'GET', '/api/me/storage/secret', { token: alice })).body.data.value, 'alice only', 'nothing was touched')
  })

  it('lists the user\'s keys a page at a time, with their sizes, ETags and usage', async (t) => {
    const { app, alice } = await service(t)
    const keys = ['b', 'a', 'C', 'a.b', 'z-1']
    const etags = new Map<string, string>()
    for (const key of keys) etags.set(key, (await call(app, 'PUT', `/api/me/storage/${key}`, { token: alice, body: { value: key.length } })).headers.get('etag') as string)
    const first = await call(app, 'GET', '/api/me/storage?limit=2', { token: alice })
    assert.equal(first.status, 200, JSON.stringify(first.body))
    assert.equal(first.headers.get('cache-control'), 'no-store')
    assert.equal(first.body.message, 'Stored keys listed successfully')
    assert.deepEqual(first.body.data.keys, ['C', 'a'].map(key => ({ key, size: key.length + 1, etag: etags.get(key), updatedAt: new Date(START).toISOString() })))
    assert.equal(first.body.data.next, 'a')
    assert.deepEqual(first.body.data.usage, { keys: 5, bytes: keys.reduce((sum, key) => sum + key.length + 1, 0), maxKeys: 1024, maxBytes: 1_048_576 })
    const second = await call(app, 'GET', `/api/me/storage?limit=2&after=${first.body.data.next}`, { token: alice })
    assert.deepEqual(second.body.data.keys.map((entry: { key: string }) => entry.key), ['a.b', 'b'])
    const last = await call(app, 'GET', `/api/me/storage?limit=2&after=${second.body.data.next}`, { token: alice })
    assert.deepEqual([last.body.data.keys.map((entry: { key: string }) => entry.key), last.body.data.next], [['z-1'], null])
    assert.deepEqual((await call(app, 'GET', '/api/me/storage', { token: alice })).body.data.keys.length, 5, '100 by default')
    for (const query of ['limit=0', 'limit=1001', 'limit=x', 'after=bad%20key', `after=${'a'.repeat(129)}`]) {
      const refused = await call(app, 'GET', `/api/me/storage?${query}`, { token: alice })
      assert.equal(refused.status, 400, query)
      assert.match(refused.body.message, /^Invalid query parameter: (limit|after)$/, query)
    }
  })

  it('takes a 64 KiB value, refuses a larger one with 413 saying which limit, and a larger body before reading it', async (t) => {
    const { app, alice } = await service(t, { STORAGE_MAX_KEYS: '3', STORAGE_MAX_USER_BYTES: '140000' })
    // A string of n characters is n + 2 bytes as JSON.
    const full = await call(app, 'PUT', '/api/me/storage/full', { token: alice, body: { value: 'x'.repeat(65_534) } })
    assert.equal(full.status, 200, JSON.stringify(full.body).slice(0, 300))
    assert.equal((await call(app, 'GET', '/api/me/storage/full', { token: alice })).body.data.value.length, 65_534)
    const over = await call(app, 'PUT', '/api/me/storage/over', { token: alice, body: { value: 'x'.repeat(65_535) } })
    assertRefused(over, 413, 'STORAGE_ERR_VALUE_TOO_LARGE', /65537 bytes as JSON, the most allowed is 65536 \(STORAGE_MAX_VALUE_BYTES\)/)
    assert.equal(over.body.message, 'Storage quota exceeded')
    const huge = await call(app, 'PUT', '/api/me/storage/huge', { token: alice, body: { value: 'x'.repeat(200_000) } })
    assertRefused(huge, 413, undefined, /larger than the 66560 bytes this route takes/)
    assert.equal(huge.body.message, 'Payload too large')

    assert.equal((await call(app, 'PUT', '/api/me/storage/second', { token: alice, body: { value: 'x'.repeat(65_534) } })).status, 200)
    assertRefused(await call(app, 'PUT', '/api/me/storage/third', { token: alice, body: { value: 'x'.repeat(10_000) } }), 413, 'STORAGE_ERR_OWNER_FULL', /STORAGE_MAX_USER_BYTES/)
    assert.equal((await call(app, 'PUT', '/api/me/storage/third', { token: alice, body: { value: 1 } })).status, 200)
    assertRefused(await call(app, 'PUT', '/api/me/storage/fourth', { token: alice, body: { value: 1 } }), 413, 'STORAGE_ERR_TOO_MANY_KEYS', /the most allowed is 3 \(STORAGE_MAX_KEYS\)/)
    assert.equal((await call(app, 'GET', '/api/me/storage/fourth', { token: alice })).status, 404)
  })

  it('answers 400 for a key out of the rule, a malformed body or header, with nothing stored', async (t) => {
    const { app, alice } = await service(t)
    for (const key of ['bad%20key', 'a'.repeat(129), '%D0%BA%D0%BB%D1%8E%D1%87', 'a%2Fb']) {
      const refused = await call(app, 'PUT', `/api/me/storage/${key}`, { token: alice, body: { value: 1 } })
      assert.equal(refused.status, 400, key)
      assert.equal(refused.body.message, 'Invalid path parameter: key', key)
      assert.match(refused.body.error, /1 to 128 characters/, key)
      assert.equal((await call(app, 'GET', `/api/me/storage/${key}`, { token: alice })).status, 400, key)
    }
    const bodies: Array<[string, string | undefined, RegExp]> = [
      ['{"value": ', 'application/json', /^Bad request$/],
      ['{}', 'application/json', /^Missing body field: value$/],
      ['[1]', 'application/json', /^Invalid body field: body$|^Invalid body/],
      ['"just a string"', 'application/json', /^Invalid body/],
      [`{"value": ${'['.repeat(20)}${']'.repeat(20)}}`, 'application/json', /^Bad request$/],
    ]
    for (const [raw, type, message] of bodies) {
      const refused = await call(app, 'PUT', '/api/me/storage/k', { token: alice, raw, headers: type === undefined ? {} : { 'content-type': type } })
      assert.equal(refused.status, 400, raw)
      assert.match(refused.body.message, message, `${raw}: ${JSON.stringify(refused.body)}`)
    }
    assert.equal((await call(app, 'PUT', '/api/me/storage/k', { token: alice, raw: 'value=1', headers: { 'content-type': 'text/plain' } })).status, 400)
    assert.equal((await call(app, 'PUT', '/api/me/storage/k', { token: alice, raw: 'value=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } })).status, 415)
    for (const [name, value] of [['if-match', 'no-quotes'], ['if-match', '"ok", broken'], ['if-none-match', '"abc"']]) {
      const refused = await call(app, 'PUT', '/api/me/storage/k', { token: alice, body: { value: 1 }, headers: { [name as string]: value as string } })
      assert.equal(refused.status, 400, `${name}: ${value}`)
      assert.equal(refused.body.message, `Invalid header: ${name}`)
    }
    assert.equal((await call(app, 'DELETE', '/api/me/storage/k', { token: alice, headers: { 'if-none-match': '*' } })).status, 400)
    assert.deepEqual((await call(app, 'GET', '/api/me/storage', { token: alice })).body.data.keys, [], 'nothing stored')
  })

  it('DELETE /api/me deletes the user\'s storage, in full, and nobody else\'s', async (t) => {
    const { app, alice, bob, admin } = await service(t)
    for (const key of ['one', 'two', 'three']) await call(app, 'PUT', `/api/me/storage/${key}`, { token: alice, body: { value: { key } } })
    await call(app, 'PUT', '/api/me/storage/one', { token: bob, body: { value: 'bob' } })
    await call(app, 'PUT', '/api/collections/news/today', { token: admin, body: { value: 'kept' } })
    const left = await call(app, 'DELETE', '/api/me', { token: alice })
    assert.equal(left.status, 200, JSON.stringify(left.body))
    const bytes = ['one', 'two', 'three'].reduce((sum, key) => sum + key.length + JSON.stringify({ key }).length, 0)
    assert.deepEqual(left.body, { message: 'User data deleted successfully', data: { address: addressOf(ALICE), storage: { keys: 3, bytes }, notifications: { channels: 0 } } })
    assert.equal(left.headers.get('cache-control'), 'no-store')
    const after = await call(app, 'GET', '/api/me/storage', { token: alice })
    assert.deepEqual([after.body.data.keys, after.body.data.usage.keys, after.body.data.usage.bytes], [[], 0, 0])
    assert.equal((await call(app, 'GET', '/api/me/storage/one', { token: bob })).body.data.value, 'bob')
    assert.equal((await call(app, 'GET', '/api/collections/news/today')).body.data.value, 'kept')
    // The token still works (signing out is DELETE /api/auth/session), and there is nothing left.
    assert.deepEqual((await call(app, 'DELETE', '/api/me', { token: alice })).body.data.storage, { keys: 0, bytes: 0 })
    // The database holds no row of hers.
    const db = await app.app.database.open()
    const { rows } = await db.query('SELECT count(*)::integer AS rows FROM storage_items WHERE owner = $1 UNION ALL SELECT count(*)::integer FROM storage_usage WHERE owner = $1', [addressOf(ALICE)])
    assert.deepEqual(rows, [{ rows: 0 }, { rows: 0 }])
  })

  it('lets anyone read a collection, only APP_ADMINS write it (403 otherwise), and server code write both kinds', async (t) => {
    const { app, alice, admin } = await service(t)
    const storage = app.app.storage
    assert.ok(storage !== undefined)
    assertRefused(await call(app, 'GET', '/api/collections/leaderboard/top'), 404, 'STORAGE_ERR_NOT_FOUND', /in the collection leaderboard/)
    const refused = await call(app, 'PUT', '/api/collections/leaderboard/top', { token: alice, body: { value: ['alice'] } })
    assertRefused(refused, 403, 'STORAGE_ERR_NOT_ADMIN', /APP_ADMINS/)
    assert.equal(refused.body.message, 'Forbidden')
    assertRefused(await call(app, 'PUT', '/api/collections/leaderboard/top', { body: { value: ['anyone'] } }), 401, 'AUTH_MISSING')
    const written = await call(app, 'PUT', '/api/collections/leaderboard/top', { token: admin, body: { value: ['admin'] } })
    assert.equal(written.status, 200, JSON.stringify(written.body))
    const read = await call(app, 'GET', '/api/collections/leaderboard/top')
    assert.deepEqual([read.status, read.body.data.value, read.headers.get('etag'), read.headers.get('cache-control')], [200, ['admin'], written.headers.get('etag'), 'no-store'])
    assert.equal((await call(app, 'GET', '/api/collections/leaderboard/top', { token: alice })).body.data.value[0], 'admin')
    assertRefused(await call(app, 'PUT', '/api/collections/leaderboard/top', { token: admin, body: { value: [] }, headers: { 'if-match': '"AAAAAAAAAAAAAAAA"' } }), 412, 'STORAGE_ERR_PRECONDITION_FAILED')
    assertRefused(await call(app, 'DELETE', '/api/collections/leaderboard/top', { token: alice }), 403, 'STORAGE_ERR_NOT_ADMIN')

    // Server code: no admin needed, the same rules.
    await storage.collection('leaderboard').put('weekly', { winner: 'bob' })
    await storage.forUser(addressOf(ALICE)).put('from-server', 42)
    assert.equal((await call(app, 'GET', '/api/me/storage/from-server', { token: alice })).body.data.value, 42)
    const listed = await call(app, 'GET', '/api/collections/leaderboard')
    assert.deepEqual(listed.body.data.keys.map((entry: { key: string }) => entry.key), ['top', 'weekly'])
    assert.deepEqual(listed.body.data.usage.keys, 2)
    await assert.rejects(storage.collection('leaderboard').put('bad key', 1), { code: 'STORAGE_ERR_KEY_INVALID' })

    const deleted = await call(app, 'DELETE', '/api/collections/leaderboard/top', { token: admin })
    assert.equal(deleted.status, 200)
    assertRefused(await call(app, 'GET', '/api/collections/leaderboard/top'), 404, 'STORAGE_ERR_NOT_FOUND')
    assert.equal((await call(app, 'GET', '/api/collections/bad%20name/top')).status, 400)
  })

  it('is off without sign-in, or with STORAGE=false, and opens no database until a value is asked for', async (t) => {
    const node = await startEmulator(t)
    const off = await startApp(t, { nodes: [node.url] })
    assert.equal(off.app.storage, undefined)
    assert.equal((await off.get('/api/collections/news')).status, 404)
    const switchedOff = await startApp(t, { nodes: [node.url], env: { BASTYON_APP_ID: APP_ID, STORAGE: 'false' } })
    assert.equal(switchedOff.app.storage, undefined)
    assert.equal((await switchedOff.get('/api/collections/news')).status, 404)

    const { app, alice } = await service(t)
    assert.equal((await call(app, 'GET', '/api/me', { token: alice })).status, 200)
    assert.equal(app.app.database.isOpen, false, 'signed in, nothing stored: no database')
    assert.equal((await call(app, 'GET', '/api/me/storage/k', { token: alice })).status, 404)
    assert.equal(app.app.database.isOpen, true)
  })

  it('lets the origins in CORS_ORIGINS write with If-Match from a browser, and read the ETag', async (t) => {
    const { app, alice } = await service(t, { CORS_ORIGINS: 'https://app.example' })
    const preflight = await app.get('/api/me/storage/theme', {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'PUT', 'access-control-request-headers': 'authorization,content-type,if-match,if-none-match' },
    })
    assert.equal(preflight.status, 204)
    assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /PUT/)
    for (const header of ['Authorization', 'Content-Type', 'If-Match', 'If-None-Match']) assert.match(preflight.headers.get('access-control-allow-headers') ?? '', new RegExp(header, 'i'))
    const put = await call(app, 'PUT', '/api/me/storage/theme', { token: alice, body: { value: 'dark' }, headers: { origin: 'https://app.example' } })
    assert.equal(put.headers.get('access-control-allow-origin'), 'https://app.example')
    assert.match(put.headers.get('access-control-expose-headers') ?? '', /ETag/i)
  })

  it('has every refusal code documented in docs/storage.md, with its status and meaning', async () => {
    const doc = await readFile(new URL('../../docs/storage.md', import.meta.url), 'utf8')
    for (const [code, meaning] of Object.entries(STORAGE_ERROR_CODES)) {
      assert.ok(doc.includes(`| \`${code}\` | ${STORAGE_ERROR_STATUS[code as keyof typeof STORAGE_ERROR_CODES]} | ${meaning} |`), `${code} is in docs/storage.md with its status and meaning`)
    }
  })
})
