/**
 * The Telegram Bot API emulator (devnode/telegram-bot-api.ts) over real HTTP: methods read from a
 * query, JSON, a form or multipart as Telegram reads them; its refusals in Telegram's envelope;
 * a user's message POSTed to the webhook with the secret header, retried on non-2xx, kept while no
 * webhook is set; faults and blocked users; the controls over HTTP, for this machine only.
 */
import assert from 'node:assert/strict'
import { request } from 'node:http'
import { describe, it, type TestContext } from 'node:test'
import { EMULATOR_BOT_TOKEN, startTelegramBotApi, TELEGRAM_CONTROLS_PATH, type TelegramBotApi, type TelegramBotApiOptions } from '../../../devnode/telegram-bot-api.js'
import { freePort } from '../../helpers/free-port.js'
import { waitFor } from '../../helpers/wait-for.js'
import { startWebhookReceiver } from './webhook-receiver.js'

const NOW = Date.UTC(2026, 10, 29, 6, 0, 0)

async function start (t: TestContext, options: TelegramBotApiOptions = {}): Promise<TelegramBotApi> {
  const telegram = await startTelegramBotApi({ webhookRetryDelayMs: 0, now: () => NOW, ...options })
  t.after(() => telegram.close())
  return telegram
}

async function call (telegram: TelegramBotApi, method: string, params?: Record<string, unknown>, token = telegram.token): Promise<{ status: number, body: any }> {
  const response = await fetch(`${telegram.url}/bot${token}/${method}`, {
    method: 'POST',
    ...(params === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(params) }),
  })
  return { status: response.status, body: await response.json() }
}

async function control (telegram: TelegramBotApi, method: string, path: string, body?: unknown): Promise<{ status: number, body: any }> {
  const response = await fetch(`${telegram.url}${TELEGRAM_CONTROLS_PATH}${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  })
  return { status: response.status, body: await response.json() }
}

describe('the Telegram Bot API emulator: methods', () => {
  it('answers getMe from a GET, a JSON POST, a form and multipart, the method\'s name in any case', async (t) => {
    const telegram = await start(t, { username: 'my_app_bot' })
    const get = await (await fetch(`${telegram.url}/bot${telegram.token}/getMe`)).json() as any
    assert.deepEqual({ ok: get.ok, id: get.result.id, is_bot: get.result.is_bot, username: get.result.username }, { ok: true, id: 7000000001, is_bot: true, username: 'my_app_bot' })
    assert.equal((await call(telegram, 'GETME', {})).body.result.username, 'my_app_bot')

    await telegram.userWrites({ chatId: 42, text: 'hello' })
    const form = await fetch(`${telegram.url}/bot${telegram.token}/sendMessage`, { method: 'POST', body: new URLSearchParams({ chat_id: '42', text: 'from a form', disable_notification: 'true' }) })
    assert.equal(form.status, 200)
    const multipart = new FormData()
    multipart.set('chat_id', '42')
    multipart.set('text', 'from multipart')
    multipart.set('reply_markup', JSON.stringify({ inline_keyboard: [[{ text: 'Open', url: 'https://example.com/a' }]] }))
    const parts = await fetch(`${telegram.url}/bot${telegram.token}/sendMessage`, { method: 'POST', body: multipart })
    assert.equal(parts.status, 200)
    const query = await fetch(`${telegram.url}/bot${telegram.token}/sendMessage?chat_id=42&text=from%20a%20query`)
    assert.equal(query.status, 200)
    const sent = telegram.sentMessages(42)
    assert.deepEqual(sent.map(({ message }) => message.text), ['from a form', 'from multipart', 'from a query'])
    assert.deepEqual(sent.map(({ disableNotification }) => disableNotification), [true, false, false])
    assert.deepEqual(sent[1]?.message.reply_markup, { inline_keyboard: [[{ text: 'Open', url: 'https://example.com/a' }]] })
  })

  it('answers 401 Unauthorized for another token and 404 Not Found for another method, in Telegram\'s envelope', async (t) => {
    const telegram = await start(t)
    assert.deepEqual(await call(telegram, 'getMe', {}, '123:wrong'), { status: 401, body: { ok: false, error_code: 401, description: 'Unauthorized' } })
    assert.deepEqual(await call(telegram, 'sendSticker', {}), { status: 404, body: { ok: false, error_code: 404, description: 'Not Found' } })
    assert.equal(telegram.token, EMULATOR_BOT_TOKEN)
  })

  it('sends a message to a chat the user opened, with its inline button, and numbers the chat\'s messages', async (t) => {
    const telegram = await start(t)
    assert.deepEqual(await call(telegram, 'sendMessage', { chat_id: 42, text: 'too early' }), { status: 400, body: { ok: false, error_code: 400, description: 'Bad Request: chat not found' } })
    await telegram.userWrites({ chatId: 42, text: 'hi', firstName: 'Alice', username: 'alice' })
    const { status, body } = await call(telegram, 'sendMessage', {
      chat_id: 42,
      text: 'Your invoice is <b>paid</b> &amp; done',
      parse_mode: 'HTML',
      reply_markup: { inline_keyboard: [[{ text: 'Open the app', url: 'https://bastyon.com/application?id=my.app' }]] },
    })
    assert.equal(status, 200)
    assert.equal(body.ok, true)
    assert.deepEqual({ ...body.result, from: body.result.from.username }, {
      message_id: 2, // the user's own message was 1
      from: 'emulator_test_bot',
      chat: { id: 42, type: 'private', first_name: 'Alice', username: 'alice' },
      date: NOW / 1000,
      text: 'Your invoice is paid & done',
      reply_markup: { inline_keyboard: [[{ text: 'Open the app', url: 'https://bastyon.com/application?id=my.app' }]] },
    })
    assert.equal(telegram.sentMessages(42)[0]?.parseMode, 'HTML')
    assert.equal(telegram.sendMessageCalls, 2)
  })

  it('refuses what Telegram refuses in a message: no chat_id, empty or long text, bad HTML, a button without a URL', async (t) => {
    const telegram = await start(t)
    await telegram.userWrites({ chatId: 42, text: 'hi' })
    const refusals = [
      [{ text: 'x' }, 'Bad Request: chat_id is empty'],
      [{ chat_id: 42, text: '  ' }, 'Bad Request: message text is empty'],
      [{ chat_id: 42, text: 'x'.repeat(4097) }, 'Bad Request: message is too long'],
      [{ chat_id: 42, text: 'a <blink>b</blink>', parse_mode: 'HTML' }, /^Bad Request: can't parse entities: Unsupported start tag "blink"/],
      [{ chat_id: 42, text: '<b>open', parse_mode: 'HTML' }, /^Bad Request: can't parse entities: Can't find end tag/],
      [{ chat_id: 42, text: 'a & b', parse_mode: 'HTML' }, /^Bad Request: can't parse entities: Character '&' is reserved/],
      [{ chat_id: 42, text: 'x', parse_mode: 'Plain' }, 'Bad Request: unsupported parse_mode "Plain"'],
      [{ chat_id: 42, text: 'x', reply_markup: { inline_keyboard: [[{ text: 'Open', url: 'javascript:alert(1)' }]] } }, 'Bad Request: BUTTON_URL_INVALID'],
      [{ chat_id: 42, text: 'x', reply_markup: { inline_keyboard: [[{ text: 'Open' }]] } }, /Text buttons are unallowed/],
    ] as const
    for (const [params, description] of refusals) {
      const { status, body } = await call(telegram, 'sendMessage', params)
      assert.equal(status, 400, JSON.stringify(params).slice(0, 80))
      assert.equal(body.error_code, 400)
      if (typeof description === 'string') assert.equal(body.description, description)
      else assert.match(body.description, description)
    }
    assert.deepEqual(telegram.sentMessages(42), [])
  })

  it('answers 403 for a user who blocked the bot or deleted their account, until they unblock it', async (t) => {
    const telegram = await start(t)
    await telegram.userWrites({ chatId: 42, text: 'hi' })
    telegram.block(42)
    assert.deepEqual(await call(telegram, 'sendMessage', { chat_id: 42, text: 'x' }), { status: 403, body: { ok: false, error_code: 403, description: 'Forbidden: bot was blocked by the user' } })
    telegram.block(42, 'deactivated')
    assert.equal((await call(telegram, 'sendMessage', { chat_id: 42, text: 'x' })).body.description, 'Forbidden: user is deactivated')
    telegram.unblock(42)
    assert.equal((await call(telegram, 'sendMessage', { chat_id: 42, text: 'x' })).status, 200)
  })

  it('fails the next sendMessage calls as told: 429 with retry_after, 500, 403, then answers again', async (t) => {
    const telegram = await start(t)
    await telegram.userWrites({ chatId: 42, text: 'hi' })
    telegram.fault('too-many-requests', 2, { retryAfterS: 7 })
    telegram.fault('internal-error')
    telegram.fault('blocked')
    const answers = []
    for (let i = 0; i < 5; i++) answers.push(await call(telegram, 'sendMessage', { chat_id: 42, text: `n${i}` }))
    assert.deepEqual(answers.map(({ status, body }) => [status, body.description, body.parameters]), [
      [429, 'Too Many Requests: retry after 7', { retry_after: 7 }],
      [429, 'Too Many Requests: retry after 7', { retry_after: 7 }],
      [500, 'Internal Server Error', undefined],
      [403, 'Forbidden: bot was blocked by the user', undefined],
      [200, undefined, undefined],
    ])
    assert.deepEqual(telegram.sentMessages(42).map(({ message }) => message.text), ['n4'])
  })

  it('holds a call under the hang fault until it closes', async () => {
    const telegram = await startTelegramBotApi({ now: () => NOW })
    await telegram.userWrites({ chatId: 42, text: 'hi' })
    telegram.fault('hang')
    let answered = false
    const answer = call(telegram, 'sendMessage', { chat_id: 42, text: 'x' }).then(() => 'answered', () => 'cut').finally(() => { answered = true })
    await waitFor('the call to reach the emulator', () => telegram.sendMessageCalls === 1)
    assert.equal(answered, false, 'held')
    await telegram.close()
    assert.equal(await answer, 'cut')
    assert.deepEqual(telegram.sentMessages(42), [])
  })
})

describe('the Telegram Bot API emulator: the webhook', () => {
  it('refuses a secret token outside 1-256 characters of A-Z a-z 0-9 _ -, and a URL that is none', async (t) => {
    const telegram = await start(t)
    for (const secret of ['has space', 'x'.repeat(257), 'dot.ted']) {
      assert.deepEqual(await call(telegram, 'setWebhook', { url: 'http://127.0.0.1:1/hook', secret_token: secret }), { status: 400, body: { ok: false, error_code: 400, description: 'Bad Request: secret token contains unallowed characters' } })
    }
    assert.equal((await call(telegram, 'setWebhook', { url: 'not a url' })).status, 400)
    assert.equal(telegram.webhook.url, '')
    const strict = await start(t, { requireHttps: true })
    assert.equal((await call(strict, 'setWebhook', { url: 'http://127.0.0.1:1/hook' })).body.description, 'Bad Request: bad webhook: An HTTPS URL must be provided for webhook')
    assert.equal((await call(strict, 'setWebhook', { url: 'https://example.com:8080/hook' })).body.description, 'Bad Request: bad webhook: Webhook can be set up only on ports 80, 88, 443 or 8443')
    assert.deepEqual((await call(strict, 'setWebhook', { url: 'https://example.com/hook' })).body, { ok: true, result: true, description: 'Webhook was set' })
  })

  it('POSTs a user\'s /start as an Update with the secret header, as Telegram does', async (t) => {
    const telegram = await start(t)
    const receiver = await startWebhookReceiver(t)
    assert.deepEqual((await call(telegram, 'setWebhook', { url: receiver.url, secret_token: 'the-secret_1' })).body, { ok: true, result: true, description: 'Webhook was set' })
    assert.equal((await call(telegram, 'setWebhook', { url: receiver.url, secret_token: 'the-secret_1' })).body.description, 'Webhook is already set')
    const delivery = await telegram.userWrites({ chatId: 42, text: '/start abc_DEF-1', firstName: 'Alice' })
    assert.equal(delivery.delivered, true)
    assert.deepEqual([delivery.pending, delivery.attempts], [false, [{ status: 200 }]])
    assert.equal(receiver.received.length, 1)
    const [{ headers, body }] = receiver.received as [any]
    assert.equal(headers['x-telegram-bot-api-secret-token'], 'the-secret_1')
    assert.equal(headers['content-type'], 'application/json')
    assert.deepEqual(body, {
      update_id: delivery.update.update_id,
      message: {
        message_id: 1,
        from: { id: 42, is_bot: false, first_name: 'Alice', language_code: 'en' },
        chat: { id: 42, type: 'private', first_name: 'Alice' },
        date: NOW / 1000,
        text: '/start abc_DEF-1',
        entities: [{ type: 'bot_command', offset: 0, length: 6 }],
      },
    })
    const second = await telegram.userWrites({ chatId: 42, text: 'thanks' })
    assert.equal(second.update.update_id, delivery.update.update_id + 1)
    assert.equal(receiver.received[1]?.body.message.entities, undefined)
  })

  it('tries an update again while the webhook answers other than 2xx, and shows the last error', async (t) => {
    const telegram = await start(t)
    const receiver = await startWebhookReceiver(t)
    await call(telegram, 'setWebhook', { url: receiver.url })
    receiver.answerWith(500, 401)
    const delivery = await telegram.userWrites({ chatId: 42, text: 'hi' })
    assert.equal(delivery.delivered, true)
    assert.deepEqual(delivery.attempts.map(({ status }) => status), [500, 401, 200])
    assert.equal(receiver.received.length, 3)
    assert.equal(receiver.received[0]?.headers['x-telegram-bot-api-secret-token'], undefined, 'no header without a secret token')
    assert.deepEqual(new Set(receiver.received.map(({ rawBody }) => rawBody)).size, 1, 'the same update each time')
    const info = (await call(telegram, 'getWebhookInfo')).body.result
    assert.equal(info.url, receiver.url)
    assert.equal(info.pending_update_count, 0)
    assert.equal(info.last_error_message, 'Wrong response from the webhook: 401 Unauthorized')
    assert.equal(info.last_error_date, NOW / 1000)
  })

  it('drops an update after its last attempt, then delivers the next one', async (t) => {
    const telegram = await start(t, { webhookAttempts: 3 })
    const receiver = await startWebhookReceiver(t)
    await call(telegram, 'setWebhook', { url: receiver.url })
    receiver.answerWith(500, 500, 500)
    const dropped = await telegram.userWrites({ chatId: 42, text: 'first' })
    assert.equal(dropped.delivered, false)
    assert.equal(dropped.attempts.length, 3)
    const next = await telegram.userWrites({ chatId: 42, text: 'second' })
    assert.equal(next.delivered, true)
    assert.deepEqual(receiver.received.map(({ body }) => body.message.text), ['first', 'first', 'first', 'second'])
  })

  it('reports a webhook that does not answer as Telegram words it', async (t) => {
    const telegram = await start(t, { webhookAttempts: 1 })
    await call(telegram, 'setWebhook', { url: `http://127.0.0.1:${await freePort()}/nothing-listens-here` })
    const delivery = await telegram.userWrites({ chatId: 42, text: 'hi' })
    assert.deepEqual(delivery.attempts, [{ status: null, error: 'Connection refused' }])
    assert.equal((await call(telegram, 'getWebhookInfo')).body.result.last_error_message, 'Connection refused')
  })

  it('keeps updates while no webhook is set and delivers them in order once one is; drop_pending_updates drops them', async (t) => {
    const telegram = await start(t)
    const receiver = await startWebhookReceiver(t)
    const first = await telegram.userWrites({ chatId: 42, text: 'one' })
    await telegram.userWrites({ chatId: 7, text: 'two' })
    assert.deepEqual([first.pending, first.delivered], [true, false])
    assert.equal((await call(telegram, 'getWebhookInfo')).body.result.pending_update_count, 2)
    await call(telegram, 'setWebhook', { url: receiver.url })
    await telegram.delivered()
    assert.deepEqual(receiver.received.map(({ body }) => body.message.text), ['one', 'two'])
    assert.equal((await call(telegram, 'getWebhookInfo')).body.result.pending_update_count, 0)

    assert.deepEqual((await call(telegram, 'deleteWebhook')).body, { ok: true, result: true, description: 'Webhook was deleted' })
    assert.equal((await call(telegram, 'deleteWebhook')).body.description, 'Webhook is already deleted')
    assert.equal((await telegram.userWrites({ chatId: 42, text: 'three' })).pending, true)
    await call(telegram, 'deleteWebhook', { drop_pending_updates: true })
    assert.equal((await call(telegram, 'getWebhookInfo')).body.result.pending_update_count, 0)
    assert.equal(receiver.received.length, 2)
  })
})

describe('the Telegram Bot API emulator: controls over HTTP', () => {
  it('writes as a user, lists what the bot sent, blocks, and injects faults', async (t) => {
    const telegram = await start(t)
    const receiver = await startWebhookReceiver(t)
    assert.deepEqual(await control(telegram, 'POST', '/updates', { chat_id: 42, text: '/start tok' }), { status: 202, body: { update_id: 100_000_001, pending: true } })
    await call(telegram, 'setWebhook', { url: receiver.url, secret_token: 's' })
    await telegram.delivered()
    const written = await control(telegram, 'POST', '/updates', { chat_id: 42, text: 'hello', first_name: 'Alice' })
    assert.equal(written.status, 200)
    assert.equal(written.body.delivered, true)
    assert.deepEqual(receiver.received.map(({ body }) => body.message.text), ['/start tok', 'hello'])

    await call(telegram, 'sendMessage', { chat_id: 42, text: 'welcome' })
    const listed = await control(telegram, 'GET', '/chats/42/messages')
    assert.deepEqual(listed.body.messages.map(({ message }: any) => message.text), ['welcome'])

    assert.equal((await control(telegram, 'POST', '/faults', { fault: 'too-many-requests', count: 1, retry_after: 2 })).status, 200)
    assert.equal((await call(telegram, 'sendMessage', { chat_id: 42, text: 'x' })).body.parameters.retry_after, 2)
    assert.deepEqual((await control(telegram, 'POST', '/chats/42/block')).body, { chat_id: 42, blocked: 'blocked' })
    assert.equal((await call(telegram, 'sendMessage', { chat_id: 42, text: 'x' })).status, 403)
    await control(telegram, 'POST', '/chats/42/unblock')
    assert.equal((await control(telegram, 'POST', '/faults', { fault: 'internal-error', count: 3 })).body.faults[0].remaining, 3)
    await control(telegram, 'DELETE', '/faults')
    assert.equal((await call(telegram, 'sendMessage', { chat_id: 42, text: 'x' })).status, 200)
    assert.equal((await control(telegram, 'GET', '/webhook')).body.url, receiver.url)

    assert.equal((await control(telegram, 'POST', '/faults', { fault: 'fire' })).status, 400)
    assert.equal((await control(telegram, 'POST', '/updates', { chat_id: -5, text: 'x' })).status, 400)
    assert.equal((await control(telegram, 'GET', '/nothing')).status, 404)
  })

  it('refuses a browser, and has no controls when told so', async (t) => {
    const telegram = await start(t)
    const fromBrowser = await new Promise<number>((resolve, reject) => {
      const outgoing = request(`${telegram.url}${TELEGRAM_CONTROLS_PATH}/faults`, { method: 'POST', headers: { origin: 'https://evil.example', 'content-type': 'application/json' } }, incoming => {
        incoming.resume()
        resolve(incoming.statusCode ?? 0)
      })
      outgoing.on('error', reject)
      outgoing.end(JSON.stringify({ fault: 'blocked' }))
    })
    assert.equal(fromBrowser, 403)
    assert.equal(telegram.sendMessageCalls, 0)
    const without = await start(t, { controls: false })
    assert.equal((await control(without, 'GET', '/webhook')).status, 404)
  })
})
