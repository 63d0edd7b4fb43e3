/**
 * Notifications end to end over real HTTP: the service (sign-in and notifications on, its database
 * in a fresh directory), the node emulator, and the Bastyon proxy emulator on loopback. Users opt
 * in with the proxy their host registered with and opt out; a proxy not allowed is a 400; the
 * operators' route wants ADMIN_TOKEN; an opted-in user gets exactly one push per id across a
 * retried 500 and repeated sends; an unregistered or opted-out user gets none; the limits hold and
 * are reported; a proxy that refuses every attempt makes `failed`; a 1000-recipient send answers
 * 1000 results in order; leaving (DELETE /api/me) takes the user's channels.
 */
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import bs58check from 'bs58check'
import { addressOf, hostSignature, testKey } from '../../devnode/bastyon-host.js'
import { startBastyonProxy, type BastyonProxy } from '../../devnode/bastyon-proxy.js'
import type { NotificationsService } from '../../src/notifications/notifications-service.js'
import { startApp, type TestApp } from '../helpers/build-app.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { APP_ID, bearer, postJson, signIn, type Answer } from '../helpers/sign-in.js'
import { waitFor } from '../helpers/wait-for.js'
import { freshDataDir } from '../payments/databases.js'

type WithAfter = { after (fn: () => unknown): void }

const ADMIN_TOKEN = 'an-admin-token-of-at-least-32-characters!'
const BOB = testKey('bob, who never opts in')
let users = 0
/** A user of each test's own on the shared service. */
const newKey = (): Uint8Array => testKey(`user ${++users} of the notification tests`)
/** Addresses without keys, quick to make by the thousand. */
const recipient = (i: number): string => bs58check.encode(Uint8Array.from([0x37, ...testKey(`recipient ${i}`).subarray(0, 20)]))

/** `proxy`: where the users' hosts registered; `other`: an allowed proxy that holds no user's token, first in the list. */
interface Setup { app: TestApp, proxy: BastyonProxy, other: BastyonProxy, notifications: NotificationsService }

async function service (t: WithAfter, env: Record<string, string> = {}, options: { now?: () => number, waitMs?: number } = {}): Promise<Setup> {
  const node = await startEmulator(t)
  const proxy = await startBastyonProxy({ apps: { [APP_ID]: { name: 'Demo', scope: 'demo.pocketnet.app' } } })
  t.after(() => proxy.close())
  const other = await startBastyonProxy({ apps: { [APP_ID]: { name: 'Demo', scope: 'demo.pocketnet.app' } } })
  t.after(() => other.close())
  const dataDir = await freshDataDir()
  t.after(() => rmSync(dataDir, { recursive: true, force: true }))
  const app = await startApp(t, {
    nodes: [node.url],
    ...(options.now === undefined ? {} : { now: options.now }),
    notificationWaitMs: options.waitMs ?? 5000,
    // Quick retries: a test waits for them on real timers.
    notificationRetry: { firstDelayMs: 20, maxDelayMs: 40, jitter: 0, maxAttempts: 3 },
    env: {
      BASTYON_APP_ID: APP_ID,
      AUTH_RATE_LIMIT_MAX: '1000',
      AUTH_SIGNATURE_CHECKS_PER_S: '1000',
      RATE_LIMIT_MAX: '100000',
      DATA_DIR: dataDir,
      NOTIFY_BASTYON_PROXIES: `${other.url},${proxy.url}`,
      NOTIFY_USER_INTERVAL_S: '0',
      ADMIN_TOKEN,
      ...env,
    },
  })
  return { app, proxy, other, notifications: app.app.notifications as NotificationsService }
}

function call (app: TestApp, method: string, path: string, options: { token?: string, body?: unknown, headers?: Record<string, string> } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...(options.token === undefined ? {} : bearer(options.token).headers), ...options.headers }
  if (options.body !== undefined) headers['content-type'] = 'application/json'
  return app.get(path, { method, headers, ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }) })
}

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }
const send = (app: TestApp, body: unknown, headers: Record<string, string> = admin): Promise<Answer> => call(app, 'POST', '/api/admin/notifications', { body, headers })

/** What the host's registerForNotifications() does at the proxy, then what the front-end does here. */
async function optIn (setup: Setup, key: Uint8Array, issued = Date.now()): Promise<string> {
  const { app, proxy } = setup
  const address = addressOf(key)
  const added = await postJson({ ...app, get: async (path, init) => { const r = await fetch(proxy.url + path, init); return { status: r.status, body: await r.json(), headers: r.headers } } }, '/miniapp/addToken', { appId: APP_ID, address, signature: hostSignature('pocketnetproxy', { key, issued }) })
  assert.equal(added.status, 200, JSON.stringify(added.body))
  const { token } = await signIn(app, { key, issued })
  const put = await call(app, 'PUT', '/api/me/notifications/bastyon', { token, body: { proxy: proxy.url } })
  assert.equal(put.status, 200, JSON.stringify(put.body))
  return token
}

describe('notifications over HTTP', () => {
  // One service for the tests of this block, each with users and ids of its own.
  let shared: Setup | undefined
  const cleanups: Array<() => unknown> = []
  before(async () => { shared = await service({ after: fn => cleanups.push(fn) }) })
  after(async () => { for (const cleanup of cleanups.reverse()) await cleanup() })
  const setupOf = (): Setup => shared as Setup

  it('opts a user in with an allowed proxy, lists the channel, opts out, and refuses other proxies and anonymous callers', async () => {
    const { app, proxy, other } = setupOf()
    const { token } = await signIn(app, { key: newKey(), issued: Date.now() })
    const empty = await call(app, 'GET', '/api/me/notifications', { token })
    assert.deepEqual([empty.status, empty.body], [200, { message: 'Notification channels retrieved successfully', data: { channels: [] } }])
    assert.equal(empty.headers.get('cache-control'), 'no-store')

    const put = await call(app, 'PUT', '/api/me/notifications/bastyon', { token, body: { proxy: `${proxy.url}/` } })
    assert.equal(put.status, 200, JSON.stringify(put.body))
    assert.deepEqual({ ...put.body.data, since: undefined }, { channel: 'bastyon', proxy: proxy.url, since: undefined })
    assert.ok(Math.abs(Date.parse(put.body.data.since) - Date.now()) < 60_000)
    const listed = await call(app, 'GET', '/api/me/notifications', { token })
    assert.deepEqual(listed.body.data.channels, [put.body.data])
    const moved = await call(app, 'PUT', '/api/me/notifications/bastyon', { token, body: { proxy: other.url } })
    assert.deepEqual([moved.body.data.proxy, moved.body.data.since], [other.url, put.body.data.since], 'moved, the opt-in time kept')
    const unnamed = await call(app, 'PUT', '/api/me/notifications/bastyon', { token, body: {} })
    assert.deepEqual([unnamed.status, unnamed.body.data.proxy], [200, other.url], 'no proxy named: the first allowed one is tried first')

    for (const proxyUrl of ['https://evil.example', 'https://1.pocketnet.app:8898', 'http://1.pocketnet.app:8899', `${proxy.url}/miniapp`, 'https://user@1.pocketnet.app:8899', 'not a url']) {
      const refused = await call(app, 'PUT', '/api/me/notifications/bastyon', { token, body: { proxy: proxyUrl } })
      assert.deepEqual([refused.status, refused.body.code], [400, 'NOTIFY_ERR_PROXY_NOT_ALLOWED'], proxyUrl)
    }
    assert.equal((await call(app, 'PUT', '/api/me/notifications/bastyon', { token, body: { proxy: 42 } })).status, 400)
    for (const [method, body] of [['GET'], ['PUT', { proxy: proxy.url }], ['DELETE']] as const) {
      const path = method === 'GET' ? '/api/me/notifications' : '/api/me/notifications/bastyon'
      const anonymous = await call(app, method, path, body === undefined ? {} : { body })
      assert.deepEqual([anonymous.status, anonymous.body.code], [401, 'AUTH_MISSING'], `${method} ${path}`)
    }

    assert.deepEqual((await call(app, 'DELETE', '/api/me/notifications/bastyon', { token })).body, { message: 'Notifications off', data: { removed: true } })
    assert.deepEqual((await call(app, 'DELETE', '/api/me/notifications/bastyon', { token })).body.data, { removed: false })
    assert.deepEqual((await call(app, 'GET', '/api/me/notifications', { token })).body.data.channels, [])
  })

  it('answers the operators\' route only with ADMIN_TOKEN, and refuses a notification that breaks a rule with its code', async (t) => {
    const { app } = setupOf()
    const body = { to: addressOf(newKey()), header: 'Hello', path: '/', id: 'hello-1' }
    const missing = await send(app, body, {})
    assert.deepEqual([missing.status, missing.body.code], [401, 'ADMIN_TOKEN_MISSING'])
    assert.match(missing.headers.get('www-authenticate') ?? '', /^Bearer/)
    const wrong = await send(app, body, { authorization: `Bearer ${ADMIN_TOKEN}x` })
    assert.deepEqual([wrong.status, wrong.body.code], [401, 'ADMIN_TOKEN_INVALID'])
    assert.equal((await send(app, body, { authorization: 'Basic abc' })).body.code, 'ADMIN_TOKEN_MISSING')

    const refusals: Array<[Record<string, unknown>, string]> = [
      [{ ...body, to: [] }, 'NOTIFY_ERR_RECIPIENTS'],
      [{ ...body, to: 'PnotAnAddress' }, 'NOTIFY_ERR_RECIPIENTS'],
      [{ ...body, header: '' }, 'NOTIFY_ERR_HEADER'],
      [{ ...body, header: 'x'.repeat(101) }, 'NOTIFY_ERR_HEADER'],
      [{ ...body, header: 'two\nlines' }, 'NOTIFY_ERR_HEADER'],
      [{ ...body, path: 'orders' }, 'NOTIFY_ERR_PATH'],
      [{ ...body, path: '//evil.example/x' }, 'NOTIFY_ERR_PATH'],
      [{ ...body, path: '/\\evil.example' }, 'NOTIFY_ERR_PATH'],
      [{ ...body, path: '/with space' }, 'NOTIFY_ERR_PATH'],
      [{ ...body, path: `/${'a'.repeat(200)}` }, 'NOTIFY_ERR_PATH'],
      [{ ...body, id: '' }, 'NOTIFY_ERR_ID'],
      [{ ...body, id: 'has space' }, 'NOTIFY_ERR_ID'],
      [{ ...body, id: 'x'.repeat(129) }, 'NOTIFY_ERR_ID'],
    ]
    for (const [bad, code] of refusals) {
      const answer = await send(app, bad)
      assert.deepEqual([answer.status, answer.body.code], [400, code], JSON.stringify(bad))
    }
    assert.equal((await send(app, { ...body, header: 'x'.repeat(100) })).status, 200, '100 characters')
    assert.equal((await send(app, { ...body, header: '🔔'.repeat(100), id: 'bells' })).status, 200, '100 characters, not UTF-16 units')

    const { app: closed } = await service(t, { ADMIN_TOKEN: '' })
    const absent = await send(closed, body)
    assert.equal(absent.status, 404)
  })

  it('gives an opted-in user exactly one push per id across a retried 500 and repeated sends; none to users who did not opt in or opted out', async () => {
    const setup = setupOf()
    const { app, proxy, notifications } = setup
    const key = newKey()
    const token = await optIn(setup, key)
    const alice = addressOf(key)
    const calls = proxy.sendCalls
    const bob = addressOf(BOB)
    proxy.fault('http-500')
    const first = await send(app, { to: [alice, bob], header: 'Your order shipped', path: '/orders/42', id: 'order-42' })
    assert.deepEqual([first.status, first.body], [200, { message: 'Notification sent', data: { results: [{ address: alice, status: 'sent' }, { address: bob, status: 'not_registered' }] } }])
    assert.equal(first.headers.get('cache-control'), 'no-store')
    assert.deepEqual((await send(app, { to: alice, header: 'Your order shipped', path: '/orders/42', id: 'order-42' })).body.data.results, [{ address: alice, status: 'duplicate' }])
    assert.deepEqual((await notifications.send({ to: alice, header: 'Your order shipped', path: '/orders/42', id: 'order-42' })).results, [{ address: alice, status: 'duplicate' }], 'the same through app.notifications')
    await notifications.whenIdle()
    assert.deepEqual(proxy.pushes(alice).map(push => [push.body, push.url]), [['Demo: Your order shipped', `application?id=${APP_ID}&p=${Buffer.from('/orders/42').toString('hex')}`]])
    assert.equal(proxy.sendCalls - calls, 2, 'the refused attempt, then the push')
    assert.deepEqual(proxy.pushes(bob), [])

    // Opted out: nothing more, and the proxy is not asked.
    await call(app, 'DELETE', '/api/me/notifications/bastyon', { token })
    assert.deepEqual((await send(app, { to: alice, header: 'Another', path: '/', id: 'order-43' })).body.data.results, [{ address: alice, status: 'not_registered' }])
    assert.equal(proxy.sendCalls - calls, 2)
  })

  it('finds the proxy that holds the token of a user who opted in without naming one, pushes there once, and goes there first from then on', async () => {
    const setup = setupOf()
    const { app, proxy, other } = setup
    const key = newKey()
    const address = addressOf(key)
    // The host registered at `proxy`, the second allowed one, and did not say so.
    proxy.addToken(APP_ID, address)
    const { token } = await signIn(app, { key, issued: Date.now() })
    const put = await call(app, 'PUT', '/api/me/notifications/bastyon', { token, body: {} })
    assert.deepEqual([put.status, put.body.data.proxy], [200, other.url])
    const [otherCalls, calls] = [other.sendCalls, proxy.sendCalls]
    assert.deepEqual((await send(app, { to: address, header: 'Found you', path: '/found', id: 'found-1' })).body.data.results, [{ address, status: 'sent' }])
    assert.deepEqual([other.sendCalls - otherCalls, proxy.sendCalls - calls], [1, 1], 'the first allowed proxy refused it, the second pushed it')
    assert.deepEqual(other.pushes(address), [])
    assert.deepEqual(proxy.pushes(address).map(push => push.body), ['Demo: Found you'])
    assert.deepEqual((await call(app, 'GET', '/api/me/notifications', { token })).body.data.channels.map((channel: { proxy: string }) => channel.proxy), [proxy.url], 'remembered')
    assert.deepEqual((await send(app, { to: address, header: 'Again', path: '/found', id: 'found-2' })).body.data.results, [{ address, status: 'sent' }])
    assert.deepEqual([other.sendCalls - otherCalls, proxy.sendCalls - calls], [1, 2], 'straight to the proxy that holds the token')
  })

  it('reports failed when the proxy refuses every attempt, and queued when the wait ends first; the queued one is pushed later', async () => {
    const setup = setupOf()
    const { app, proxy, other, notifications } = setup
    const key = newKey()
    await optIn(setup, key)
    const alice = addressOf(key)
    const calls = proxy.sendCalls
    proxy.fault('iplimiter', 3)
    assert.deepEqual((await send(app, { to: alice, header: 'Refused', path: '/', id: 'refused' })).body.data.results, [{ address: alice, status: 'failed' }])
    assert.equal(proxy.sendCalls - calls, 3, 'three attempts, then given up')
    const db = await app.app.database.open()
    const { rows } = await db.query<{ status: string, attempts: number, last_error: string }>("SELECT status, attempts, last_error FROM notification_deliveries WHERE notification_id = 'refused'")
    // Each attempt tried the user's proxy, then the other allowed one, which holds no token.
    assert.deepEqual(rows, [{ status: 'given_up', attempts: 3, last_error: `${proxy.url} answered 500: "{\\"error\\":\\"iplimiter\\",\\"code\\":500}"; ${other.url} answered 500: "{\\"error\\":{},\\"code\\":500}"` }])

    proxy.fault('http-500', 1)
    assert.deepEqual((await notifications.send({ to: alice, header: 'Later', path: '/later', id: 'later' }, { waitMs: 0 })).results, [{ address: alice, status: 'queued' }])
    await waitFor('the queued push', () => proxy.pushes(alice).length === 1)
    assert.equal(proxy.pushes(alice)[0]?.body, 'Demo: Later')
    const metrics = await (await fetch(`${app.url}/metrics`)).text()
    // The only give-up of this service's tests; the other counts grow with each test.
    assert.match(metrics, /notifications_send_results_total\{status="failed"\} 1\n/)
    assert.match(metrics, /notifications_send_results_total\{status="queued"\} [1-9]/)
    assert.match(metrics, /notifications_deliveries_total\{channel="bastyon",outcome="given_up"\} 1\n/)
    assert.match(metrics, /notifications_deliveries_total\{channel="bastyon",outcome="delivered"\} [1-9]/)
    assert.match(metrics, /notifications_backlog\{channel="bastyon",state="given_up"\} 1\n/)
  })

  it('answers a send to 1000 addresses with 1000 results in their order, pushing to those who opted in', async () => {
    const { app, proxy } = setupOf()
    const recipients = Array.from({ length: 1000 }, (_, i) => recipient(i))
    const registered = recipients.filter((_, i) => i % 3 !== 0)
    for (const address of registered) proxy.addToken(APP_ID, address)
    // Opted in at once, as 667 PUTs would have it.
    const db = await app.app.database.open()
    await db.query("INSERT INTO notification_channels (address, channel, target, created_at_ms) SELECT a, 'bastyon', $2, 0 FROM unnest($1::text[]) a", [registered, proxy.url])
    const before = proxy.pushes().length
    const answer = await send(app, { to: recipients, header: 'News', path: '/news/1', id: 'news-1' })
    assert.equal(answer.status, 200, JSON.stringify(answer.body).slice(0, 300))
    const { results } = answer.body.data as { results: Array<{ address: string, status: string }> }
    assert.deepEqual(results.map(result => result.address), recipients)
    results.forEach((result, i) => {
      if (i % 3 === 0) assert.equal(result.status, 'not_registered')
      else assert.ok(result.status === 'sent' || result.status === 'queued', result.status)
    })
    await waitFor('every push', () => proxy.pushes().length - before === registered.length)
    assert.deepEqual(new Set(proxy.pushes().slice(before).map(push => push.address)), new Set(registered))
    const tooMany = await send(app, { to: [...recipients, recipient(1000)], header: 'x', path: '/', id: 'y' })
    assert.deepEqual([tooMany.status, tooMany.body.code], [400, 'NOTIFY_ERR_RECIPIENTS'], '1001 addresses')
  })

  it('takes the user\'s channels when they leave (DELETE /api/me)', async () => {
    const setup = setupOf()
    const key = newKey()
    const token = await optIn(setup, key)
    const left = await call(setup.app, 'DELETE', '/api/me', { token })
    assert.equal(left.status, 200, JSON.stringify(left.body))
    assert.deepEqual(left.body.data, { address: addressOf(key), storage: { keys: 0, bytes: 0 }, notifications: { channels: 1 } })
    assert.deepEqual((await call(setup.app, 'GET', '/api/me/notifications', { token })).body.data.channels, [])
  })
})

describe('notification limits over HTTP', () => {
  it('holds each user\'s interval and day and reports rate_limited', async (t) => {
    const clock = { now: Date.now() }
    const setup = await service(t, { NOTIFY_USER_INTERVAL_S: '30', NOTIFY_USER_DAILY_LIMIT: '2' }, { now: () => clock.now })
    const { app, proxy } = setup
    const key = newKey()
    await optIn(setup, key, clock.now)
    const alice = addressOf(key)
    const status = async (id: string): Promise<string> => (await send(app, { to: alice, header: id, path: '/', id })).body.data.results[0].status
    assert.equal(await status('one'), 'sent')
    clock.now += 29_000
    assert.equal(await status('two'), 'rate_limited')
    clock.now += 1000
    assert.equal(await status('two'), 'sent')
    clock.now += 30_000
    assert.equal(await status('three'), 'rate_limited', 'two a day')
    assert.deepEqual(proxy.pushes(alice).map(push => push.body), ['Demo: one', 'Demo: two'])
  })
})
