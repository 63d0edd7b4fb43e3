/**
 * `kill -9` of the service (the built service, as `npm start` runs it, on the embedded database)
 * while it writes stored values, then a restart on the same DATA_DIR: every write it answered is
 * there, with the value and ETag it answered, and the user's totals add up to their keys.
 */
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { describe, it } from 'node:test'
import { addressOf, testKey } from '../../devnode/bastyon-host.js'
import { openDatabase } from '../../src/db/open-database.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { processAsTestApp, startService } from '../helpers/start-service.js'
import { APP_ID, signIn } from '../helpers/sign-in.js'
import { freshDataDir } from '../payments/databases.js'

const KEY = testKey('a user whose values survive')

describe('a kill -9 of the service while it writes stored values', () => {
  it('keeps every write it answered, with its ETag, after a restart on the same data directory', async (t) => {
    const node = await startEmulator(t)
    const dataDir = await freshDataDir()
    t.after(() => rmSync(dataDir, { recursive: true, force: true }))
    const env = { POCKETNET_NODES: node.url, BASTYON_APP_ID: APP_ID, DATA_DIR: dataDir, MAX_EVENT_LOOP_DELAY_MS: '0', RATE_LIMIT_MAX: '100000' }
    const first = startService(t, env)
    const service = await processAsTestApp(first)
    const { token } = await signIn(service, { key: KEY, issued: Date.now() })
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
    const put = (key: string, value: unknown, extra: Record<string, string> = {}) => fetch(`${service.url}/api/me/storage/${key}`, { method: 'PUT', headers: { ...headers, ...extra }, body: JSON.stringify({ value }) })

    // Writes answered before the kill: what must survive.
    const answered = new Map<string, { value: unknown, etag: string }>()
    for (let i = 0; i < 20; i++) {
      const value = { i, text: `value ${i}`, list: Array.from({ length: i }, (_, j) => j) }
      const response = await put(`key-${i}`, value)
      assert.equal(response.status, 200)
      answered.set(`key-${i}`, { value, etag: response.headers.get('etag') as string })
    }
    const rewritten = await put('key-3', 'rewritten', { 'if-match': (answered.get('key-3') as { etag: string }).etag })
    assert.equal(rewritten.status, 200)
    answered.set('key-3', { value: 'rewritten', etag: rewritten.headers.get('etag') as string })

    // A burst still in flight when the process is killed: each either answered, and kept, or not.
    let firstOfBurst!: () => void
    const oneAnswered = new Promise<void>(resolve => { firstOfBurst = resolve })
    const burst = Array.from({ length: 40 }, (_, i) => put(`burst-${i}`, { i }).then(async response => {
      if (response.status === 200) answered.set(`burst-${i}`, { value: { i }, etag: response.headers.get('etag') as string })
      firstOfBurst()
    }, () => {}))
    // Killed once the first of them is answered, the others still on their way.
    await oneAnswered
    first.child.kill('SIGKILL')
    assert.deepEqual(await first.exited, { code: null, signal: 'SIGKILL' })
    await Promise.all(burst)

    const second = startService(t, env)
    const again = await processAsTestApp(second)
    const renewed = await signIn(again, { key: KEY, issued: Date.now() })
    for (const [key, { value, etag }] of answered) {
      const response = await fetch(`${again.url}/api/me/storage/${key}`, { headers: { authorization: `Bearer ${renewed.token}` } })
      assert.equal(response.status, 200, key)
      assert.equal(response.headers.get('etag'), etag, key)
      assert.deepEqual(((await response.json()) as { data: { value: unknown } }).data.value, value, key)
    }
    second.child.kill('SIGTERM')
    await second.exited

    const db = await openDatabase({ dataDir })
    t.after(() => db.close())
    const { rows } = await db.query<{ keys: number, bytes: number, counted: number, summed: number }>(
      `SELECT u.keys, u.bytes::integer AS bytes, count(i.key)::integer AS counted, coalesce(sum(i.size), 0)::integer AS summed
       FROM storage_usage u LEFT JOIN storage_items i ON i.space = u.space AND i.owner = u.owner
       WHERE u.space = 'user' AND u.owner = $1 GROUP BY u.keys, u.bytes`, [addressOf(KEY)])
    const [totals] = rows
    assert.ok(totals !== undefined)
    assert.equal(totals.keys, totals.counted, 'the usage row counts the keys kept')
    assert.equal(totals.bytes, totals.summed, 'and their bytes')
    assert.ok(totals.keys >= answered.size, `${totals.keys} keys kept, ${answered.size} answered`)
  })
})
