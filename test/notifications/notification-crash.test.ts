/**
 * `kill -9` of the service (the built service, as `npm start` runs it, on the embedded database)
 * while a push is in flight at the user's proxy, then a restart on the same DATA_DIR: the
 * notification accepted before the crash is pushed after it, once, without another send.
 */
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { describe, it } from 'node:test'
import { addressOf, testKey } from '../../devnode/bastyon-host.js'
import { startBastyonProxy } from '../../devnode/bastyon-proxy.js'
import { openDatabase } from '../../src/db/open-database.js'
import { freshDataDir } from '../../scripts/pglite-template.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { APP_ID, bearer, signIn } from '../helpers/sign-in.js'
import { processAsTestApp, startService } from '../helpers/start-service.js'
import { waitFor } from '../helpers/wait-for.js'

const ADMIN_TOKEN = 'an-admin-token-of-at-least-32-characters!'
const KEY = testKey('a user notified across a crash')

describe('a kill -9 of the service with a push in flight', () => {
  it('pushes the notification after the restart, once', async (t) => {
    const node = await startEmulator(t)
    const proxy = await startBastyonProxy({ apps: { [APP_ID]: { name: 'Demo', scope: 'demo.pocketnet.app' } } })
    t.after(() => proxy.close())
    const dataDir = await freshDataDir()
    t.after(() => rmSync(dataDir, { recursive: true, force: true }))
    const env = {
      POCKETNET_NODES: node.url,
      BASTYON_APP_ID: APP_ID,
      DATA_DIR: dataDir,
      NOTIFY_BASTYON_PROXIES: proxy.url,
      // A push in hand when the process dies goes out again this plus 5 s later.
      NOTIFY_BASTYON_TIMEOUT_MS: '1000',
      ADMIN_TOKEN,
      MAX_EVENT_LOOP_DELAY_MS: '0',
    }
    const first = startService(t, env)
    const app = await processAsTestApp(first)
    const user = addressOf(KEY)
    proxy.addToken(APP_ID, user)
    const { token } = await signIn(app, { key: KEY, issued: Date.now() })
    const optedIn = await app.get('/api/me/notifications/bastyon', { method: 'PUT', headers: { ...bearer(token).headers, 'content-type': 'application/json' }, body: JSON.stringify({ proxy: proxy.url }) })
    assert.equal(optedIn.status, 200, JSON.stringify(optedIn.body))

    // The proxy takes the push and never answers; the service dies meanwhile.
    proxy.fault('hang')
    const send = (base: string): Promise<Response> => fetch(`${base}/api/admin/notifications`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ to: user, header: 'Across a crash', path: '/crash', id: 'crash-1' }),
    })
    const cut = send(app.url).catch((err: unknown) => err)
    await waitFor('the push at the proxy', () => proxy.sendCalls === 1)
    first.child.kill('SIGKILL')
    assert.deepEqual(await first.exited, { code: null, signal: 'SIGKILL' })
    assert.ok(await cut instanceof Error, 'the send\'s answer was cut short with the process')
    assert.deepEqual(proxy.pushes(), [])

    const second = startService(t, env)
    const again = await processAsTestApp(second)
    await waitFor('the push after the restart', () => proxy.pushes().length === 1)
    assert.deepEqual(proxy.pushes().map(push => [push.address, push.body, push.url]), [[user, 'Demo: Across a crash', `application?id=${APP_ID}&p=${Buffer.from('/crash').toString('hex')}`]])
    const repeated = await send(again.url)
    assert.deepEqual((await repeated.json() as { data: unknown }).data, { results: [{ address: user, status: 'duplicate' }] })
    second.child.kill('SIGTERM')
    await second.exited
    assert.equal(proxy.pushes().length, 1, 'once')

    const db = await openDatabase({ dataDir })
    t.after(() => db.close())
    const { rows } = await db.query<{ status: string, attempts: number }>('SELECT status, attempts FROM notification_deliveries')
    assert.deepEqual(rows, [{ status: 'delivered', attempts: 2 }], 'one delivery, claimed before the crash and after it')
  })
})
