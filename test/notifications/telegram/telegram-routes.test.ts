/**
 * Telegram notifications end to end over real HTTP: the service (sign-in and notifications on, a
 * bot configured, its database in a fresh directory), the node emulator, the Bastyon proxy
 * emulator and the Telegram Bot API emulator on loopback, which posts the users' messages to the
 * service's webhook. A signed-in user gets a deep link, presses Start in Telegram, and is linked;
 * `send` reaches the chat once; the webhook refuses requests without Telegram's secret; a user
 * with both channels gets one push and one message; the webhook is set at start; the settings
 * are checked.
 */
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { after, before, describe, it, type TestContext } from 'node:test'
import { addressOf, testKey } from '../../../devnode/bastyon-host.js'
import { startBastyonProxy, type BastyonProxy } from '../../../devnode/bastyon-proxy.js'
import { EMULATOR_BOT_TOKEN, startTelegramBotApi, type TelegramBotApi } from '../../../devnode/telegram-bot-api.js'
import { ConfigError, loadConfig } from '../../../src/config.js'
import { appLink } from '../../../src/notifications/app-link.js'
import type { NotificationsService } from '../../../src/notifications/notifications-service.js'
import { SECRET_TOKEN_HEADER, webhookSecretFor } from '../../../src/notifications/telegram/webhook-update.js'
import { startApp, type TestApp } from '../../helpers/build-app.js'
import { startEmulator } from '../../helpers/start-emulator.js'
import { APP_ID, bearer, signIn, type Answer } from '../../helpers/sign-in.js'
import { waitFor } from '../../helpers/wait-for.js'
import { freshDataDir } from '../../payments/databases.js'

type WithAfter = { after (fn: () => unknown): void }

const ADMIN_TOKEN = 'an-admin-token-of-at-least-32-characters!'
const BOT = 'demo_app_bot'
let users = 0
const newKey = (): Uint8Array => testKey(`user ${++users} of the Telegram route tests`)
let chats = 7000
const newChat = (): number => ++chats

interface Setup { app: TestApp, proxy: BastyonProxy, telegram: TelegramBotApi, notifications: NotificationsService }

async function service (t: WithAfter, env: Record<string, string> = {}): Promise<Setup> {
  const node = await startEmulator(t)
  const proxy = await startBastyonProxy({ apps: { [APP_ID]: { name: 'Demo', scope: 'demo.pocketnet.app' } } })
  t.after(() => proxy.close())
  const telegram = await startTelegramBotApi({ username: BOT, webhookRetryDelayMs: 0, webhookAttempts: 1 })
  t.after(() => telegram.close())
  const dataDir = await freshDataDir()
  t.after(() => rmSync(dataDir, { recursive: true, force: true }))
  const app = await startApp(t, {
    nodes: [node.url],
    notificationWaitMs: 5000,
    notificationRetry: { firstDelayMs: 20, maxDelayMs: 40, jitter: 0, maxAttempts: 3 },
    env: {
      BASTYON_APP_ID: APP_ID,
      AUTH_RATE_LIMIT_MAX: '1000',
      AUTH_SIGNATURE_CHECKS_PER_S: '1000',
      RATE_LIMIT_MAX: '100000',
      DATA_DIR: dataDir,
      NOTIFY_BASTYON_PROXIES: proxy.url,
      NOTIFY_USER_INTERVAL_S: '0',
      ADMIN_TOKEN,
      TELEGRAM_BOT_TOKEN: EMULATOR_BOT_TOKEN,
      TELEGRAM_BOT_USERNAME: BOT,
      TELEGRAM_API_URL: telegram.url,
      ...env,
    },
  })
  const notifications = app.app.notifications as NotificationsService
  // The port is known only now: the operator's setWebhook, as TELEGRAM_WEBHOOK_URL would do it at start.
  await notifications.telegram?.setWebhook(`${app.url}/api/telegram/webhook`)
  return { app, proxy, telegram, notifications }
}

function call (app: TestApp, method: string, path: string, options: { token?: string, body?: unknown, headers?: Record<string, string> } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...(options.token === undefined ? {} : bearer(options.token).headers), ...options.headers }
  if (options.body !== undefined) headers['content-type'] = 'application/json'
  return app.get(path, { method, headers, ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }) })
}

const send = (app: TestApp, body: unknown): Promise<Answer> => call(app, 'POST', '/api/admin/notifications', { body, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
const texts = (telegram: TelegramBotApi, chatId: number): string[] => telegram.sentMessages(chatId).map(sent => sent.message.text ?? '')

/** The user signs in, asks for a link, opens it in Telegram and presses Start. */
async function linkChat (setup: Setup, key: Uint8Array, chatId: number): Promise<{ token: string, address: string, startToken: string }> {
  const { token, address } = await signIn(setup.app, { key, issued: Date.now() })
  const created = await call(setup.app, 'POST', '/api/me/notifications/telegram', { token })
  assert.equal(created.status, 200, JSON.stringify(created.body))
  const startToken = new URL(created.body.data.link).searchParams.get('start') as string
  const delivery = await setup.telegram.userWrites({ chatId, text: `/start ${startToken}` })
  assert.equal(delivery.delivered, true, JSON.stringify(delivery.attempts))
  return { token, address, startToken }
}

describe('Telegram notifications over HTTP', () => {
  let shared: Setup | undefined
  const cleanups: Array<() => unknown> = []
  before(async () => { shared = await service({ after: fn => cleanups.push(fn) }) })
  after(async () => { for (const cleanup of cleanups.reverse()) await cleanup() })
  const setupOf = (): Setup => shared as Setup

  it('links a chat through the deep link and the webhook, lists it, and delivers a notification to it once', async () => {
    const setup = setupOf()
    const { app, telegram } = setup
    const key = newKey()
    const { token } = await signIn(app, { key, issued: Date.now() })
    const created = await call(app, 'POST', '/api/me/notifications/telegram', { token })
    assert.equal(created.status, 200, JSON.stringify(created.body))
    assert.equal(created.body.message, 'Telegram link created')
    assert.match(created.body.data.link, /^https:\/\/t\.me\/demo_app_bot\?start=[A-Za-z0-9_-]{64}$/)
    assert.ok(Date.parse(created.body.data.expiresAt) > Date.now())
    assert.equal(created.headers.get('cache-control'), 'no-store')
    assert.ok(!created.body.data.link.includes(addressOf(key)), 'the link does not show the address')

    const chatId = newChat()
    const startToken = new URL(created.body.data.link).searchParams.get('start') as string
    const delivery = await telegram.userWrites({ chatId, text: `/start ${startToken}` })
    assert.deepEqual([delivery.delivered, delivery.attempts.map(attempt => attempt.status)], [true, [200]])
    assert.deepEqual(texts(telegram, chatId), [`Linked: you will get ${APP_ID}'s notifications here.`])
    const listed = await call(app, 'GET', '/api/me/notifications', { token })
    assert.deepEqual(listed.body.data.channels.map((channel: { channel: string }) => channel.channel), ['telegram'])
    assert.deepEqual(Object.keys(listed.body.data.channels[0]).sort(), ['channel', 'since'], 'never the chat id')

    const body = { to: addressOf(key), header: 'Your order shipped', path: '/orders/42', id: 'shipped-42' }
    const sent = await send(app, body)
    assert.deepEqual([sent.status, sent.body.data.results], [200, [{ address: addressOf(key), status: 'sent' }]])
    assert.deepEqual((await send(app, body)).body.data.results, [{ address: addressOf(key), status: 'duplicate' }])
    const messages = telegram.sentMessages(chatId)
    assert.deepEqual(messages.map(message => message.message.text), [`Linked: you will get ${APP_ID}'s notifications here.`, 'Your order shipped'])
    assert.deepEqual(messages[1]?.message.reply_markup, { inline_keyboard: [[{ text: 'Open', url: appLink(APP_ID, '/orders/42') }]] })

    // The same link again, from another chat: refused, politely.
    const again = newChat()
    await telegram.userWrites({ chatId: again, text: `/start ${startToken}` })
    assert.deepEqual(texts(telegram, again), [`This link was used already. Ask ${APP_ID} for a new one to get its notifications here.`])
  })

  it('answers 401 to a webhook request without Telegram\'s secret, 200 to the updates it ignores, and refuses a token that is not ours', async () => {
    const { app, telegram } = setupOf()
    const chatId = newChat()
    const update = { update_id: 1, message: { message_id: 1, date: 1, chat: { id: chatId, type: 'private' }, from: { id: chatId, is_bot: false, first_name: 'Ann' }, text: '/start x' } }
    const missing = await call(app, 'POST', '/api/telegram/webhook', { body: update })
    assert.deepEqual([missing.status, missing.body.code], [401, 'TELEGRAM_SECRET_MISSING'])
    const wrong = await call(app, 'POST', '/api/telegram/webhook', { body: update, headers: { [SECRET_TOKEN_HEADER]: webhookSecretFor('1:not-the-bot-token-at-all-0000') } })
    assert.deepEqual([wrong.status, wrong.body.code, wrong.body.message], [401, 'TELEGRAM_SECRET_INVALID', 'Unauthorized'])
    const tooBig = await call(app, 'POST', '/api/telegram/webhook', { body: { ...update, padding: 'x'.repeat(70_000) }, headers: { [SECRET_TOKEN_HEADER]: 'wrong' } })
    assert.equal(tooBig.status, 401, 'the secret is checked before the body is read')

    const secret = { [SECRET_TOKEN_HEADER]: webhookSecretFor(EMULATOR_BOT_TOKEN) }
    const group = await call(app, 'POST', '/api/telegram/webhook', { body: { ...update, message: { ...update.message, chat: { id: -100, type: 'group' } } }, headers: secret })
    assert.deepEqual([group.status, group.body.data], [200, { outcome: 'ignored' }])
    const notAnUpdate = await call(app, 'POST', '/api/telegram/webhook', { body: { hello: 'world' }, headers: secret })
    assert.deepEqual([notAnUpdate.status, notAnUpdate.body.data], [200, { outcome: 'ignored' }])

    await telegram.userWrites({ chatId, text: 'hi' })
    assert.deepEqual(texts(telegram, chatId), [`To get ${APP_ID}'s notifications here, open the Telegram link the app gives you when you turn them on.`])
    const forged = 'A'.repeat(64)
    await telegram.userWrites({ chatId, text: `/start ${forged}` })
    assert.equal(texts(telegram, chatId).at(-1), `This link is not one of ours. Ask ${APP_ID} for a new one to get its notifications here.`)
    assert.equal(await telegram.userWrites({ chatId, text: '/start' }).then(() => texts(telegram, chatId).length), 3, 'a bare /start: how to link')
  })

  it('gives a user with both channels one push and one Telegram message, reported sent; unlinking leaves the push', async () => {
    const setup = setupOf()
    const { app, proxy, telegram } = setup
    const key = newKey()
    const chatId = newChat()
    const { token, address } = await linkChat(setup, key, chatId)
    proxy.addToken(APP_ID, address)
    const put = await call(app, 'PUT', '/api/me/notifications/bastyon', { token, body: { proxy: proxy.url } })
    assert.equal(put.status, 200, JSON.stringify(put.body))
    const listed = await call(app, 'GET', '/api/me/notifications', { token })
    assert.deepEqual(listed.body.data.channels.map((channel: { channel: string }) => channel.channel), ['bastyon', 'telegram'])

    const sent = await send(app, { to: address, header: 'Both ways', path: '/both', id: 'both-1' })
    assert.deepEqual(sent.body.data.results, [{ address, status: 'sent' }])
    await waitFor('the Telegram message', () => texts(telegram, chatId).includes('Both ways'))
    assert.equal(proxy.pushes(address).length, 1)
    assert.equal(texts(telegram, chatId).filter(text => text === 'Both ways').length, 1)

    const unlinked = await call(app, 'DELETE', '/api/me/notifications/telegram', { token })
    assert.deepEqual([unlinked.status, unlinked.body], [200, { message: 'Telegram unlinked', data: { removed: true } }])
    assert.deepEqual((await call(app, 'DELETE', '/api/me/notifications/telegram', { token })).body.data, { removed: false })
    await send(app, { to: address, header: 'Push only', path: '/', id: 'both-2' })
    assert.equal(proxy.pushes(address).length, 2)
    assert.ok(!texts(telegram, chatId).includes('Push only'))
    for (const method of ['POST', 'DELETE']) {
      const anonymous = await call(app, method, '/api/me/notifications/telegram')
      assert.deepEqual([anonymous.status, anonymous.body.code], [401, 'AUTH_MISSING'], method)
    }
  })

  it('counts Telegram deliveries in the metrics by channel', async () => {
    const { app } = setupOf()
    const metrics = await (await fetch(`${app.url}/metrics`)).text()
    assert.match(metrics, /notifications_deliveries_total\{channel="telegram",outcome="delivered"\} [1-9]/)
    assert.match(metrics, /notifications_backlog\{channel="telegram",state="pending"\} 0\n/)
  })
})

describe('the Telegram settings', () => {
  it('set the webhook at start with TELEGRAM_WEBHOOK_URL and the configured secret', async (t: TestContext) => {
    const telegram = await startTelegramBotApi({ username: BOT })
    t.after(() => telegram.close())
    const node = await startEmulator(t)
    const dataDir = await freshDataDir()
    t.after(() => rmSync(dataDir, { recursive: true, force: true }))
    const secret = 'an_operators_own-secret'
    const { app } = await startApp(t, {
      nodes: [node.url],
      env: { BASTYON_APP_ID: APP_ID, DATA_DIR: dataDir, NOTIFY_BASTYON_PROXIES: 'http://127.0.0.1:9', TELEGRAM_BOT_TOKEN: EMULATOR_BOT_TOKEN, TELEGRAM_BOT_USERNAME: BOT, TELEGRAM_API_URL: telegram.url, TELEGRAM_WEBHOOK_URL: 'https://app.example/api/telegram/webhook', TELEGRAM_WEBHOOK_SECRET: secret },
    })
    await waitFor('the webhook set', () => telegram.webhook.url !== '')
    assert.deepEqual(telegram.webhook, { url: 'https://app.example/api/telegram/webhook', secretToken: secret })
    assert.equal((app.notifications as NotificationsService).telegram?.refusal({ [SECRET_TOKEN_HEADER]: secret }), undefined)
  })

  it('leave the Telegram routes out without a bot', async (t: TestContext) => {
    const node = await startEmulator(t)
    const dataDir = await freshDataDir()
    t.after(() => rmSync(dataDir, { recursive: true, force: true }))
    const app = await startApp(t, { nodes: [node.url], env: { BASTYON_APP_ID: APP_ID, DATA_DIR: dataDir, NOTIFY_BASTYON_PROXIES: 'http://127.0.0.1:9' } })
    assert.equal((await call(app, 'POST', '/api/telegram/webhook', { body: {} })).status, 404)
    const { token } = await signIn(app, { key: newKey(), issued: Date.now() })
    assert.equal((await call(app, 'POST', '/api/me/notifications/telegram', { token })).status, 404)
  })

  it('are refused when they cannot work together', () => {
    const problems = (env: Record<string, string>): string[] => {
      try {
        loadConfig(env)
        return []
      } catch (err) {
        assert.ok(err instanceof ConfigError)
        return err.problems
      }
    }
    assert.deepEqual(problems({ TELEGRAM_BOT_TOKEN: EMULATOR_BOT_TOKEN, TELEGRAM_BOT_USERNAME: BOT }), ['TELEGRAM_BOT_TOKEN needs notifications on (BASTYON_APP_ID, and NOTIFICATIONS not false): Telegram is one of their channels'])
    assert.deepEqual(problems({ BASTYON_APP_ID: APP_ID, TELEGRAM_BOT_TOKEN: EMULATOR_BOT_TOKEN }).map(problem => problem.split(' ')[0]), ['TELEGRAM_BOT_USERNAME'])
    const badToken = problems({ BASTYON_APP_ID: APP_ID, TELEGRAM_BOT_TOKEN: 'not-a-token-secret-value', TELEGRAM_BOT_USERNAME: BOT })
    assert.deepEqual(badToken.map(problem => problem.split(' ')[0]), ['TELEGRAM_BOT_TOKEN'])
    assert.ok(!badToken[0]?.includes('secret-value'), 'the token is never echoed')
    assert.deepEqual(problems({ BASTYON_APP_ID: APP_ID, TELEGRAM_WEBHOOK_URL: 'https://app.example/api/telegram/webhook' }).map(problem => problem.split(' ')[0]), ['TELEGRAM_WEBHOOK_URL'])
    assert.deepEqual(problems({ TELEGRAM_WEBHOOK_SECRET: 'has spaces in it' }).map(problem => problem.split(' ')[0]), ['TELEGRAM_WEBHOOK_SECRET'])
    assert.deepEqual(problems({ TELEGRAM_API_URL: 'https://api.telegram.org/?x=1' }).map(problem => problem.split(' ')[0]), ['TELEGRAM_API_URL'])
    assert.deepEqual(problems({ BASTYON_APP_ID: APP_ID, TELEGRAM_BOT_TOKEN: EMULATOR_BOT_TOKEN, TELEGRAM_BOT_USERNAME: '@demo_app_bot' }), [])
  })
})
