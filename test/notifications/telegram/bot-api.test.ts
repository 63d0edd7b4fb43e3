/**
 * The Bot API client (src/notifications/telegram/bot-api.ts) against the Telegram emulator over
 * real HTTP: what it sends, and how each refusal is classified for the outbox (unreachable,
 * retryAfter, invalid, rejected); a timeout on a clock the test moves; the caller's abort; and the
 * token in no error, message, stack or inspection of the client.
 */
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer } from 'node:http'
import { inspect } from 'node:util'
import { describe, it, type TestContext } from 'node:test'
import { startTelegramBotApi, type TelegramBotApi } from '../../../devnode/telegram-bot-api.js'
import { BotApi } from '../../../src/notifications/telegram/bot-api.js'
import { BotApiError, classifyRefusal } from '../../../src/notifications/telegram/bot-api-errors.js'
import { freePort } from '../../helpers/free-port.js'
import { manualClock } from '../../helpers/manual-clock.js'

async function start (t: TestContext): Promise<TelegramBotApi> {
  const telegram = await startTelegramBotApi({ webhookRetryDelayMs: 0 })
  t.after(() => telegram.close())
  return telegram
}

const clientOf = (telegram: TelegramBotApi, token = telegram.token): BotApi => new BotApi({ token, baseUrl: telegram.url })

/** The error a call rejects with, which must be a BotApiError; the token must be nowhere in it. */
async function refusalOf (call: Promise<unknown>, token: string): Promise<BotApiError> {
  const err = await call.then(() => assert.fail('the call succeeded'), (err: unknown) => err)
  assert.ok(err instanceof BotApiError, String(err))
  for (const text of [err.message, String(err), err.stack ?? '', inspect(err, { depth: 5 }), JSON.stringify(err)]) {
    assert.ok(!text.includes(token), `the token leaks in ${text}`)
    assert.ok(!text.includes(token.split(':')[1] as string), `the token's secret leaks in ${text}`)
  }
  return err
}

describe('the Bot API client', () => {
  it('sends a message with its button, parse mode and silence, and answers the message\'s id', async (t) => {
    const telegram = await start(t)
    await telegram.userWrites({ chatId: 4242, text: '/start x' })
    const bot = clientOf(telegram)
    const sent = await bot.sendMessage(4242, 'Your invoice is <b>paid</b>', { parseMode: 'HTML', disableNotification: true, button: { text: 'Open', url: 'https://bastyon.com/application?id=my.app&p=2f' } })
    assert.deepEqual({ messageId: sent.messageId, chatId: sent.chatId }, { messageId: 2, chatId: 4242 })
    const [recorded] = telegram.sentMessages(4242)
    assert.equal(recorded?.message.text, 'Your invoice is paid')
    assert.equal(recorded?.parseMode, 'HTML')
    assert.equal(recorded?.disableNotification, true)
    assert.deepEqual(recorded?.message.reply_markup, { inline_keyboard: [[{ text: 'Open', url: 'https://bastyon.com/application?id=my.app&p=2f' }]] })
    // A chat id as the database keeps it, in text.
    assert.equal((await bot.sendMessage('4242', 'plain')).messageId, 3)
  })

  it('sets the webhook with its secret token and message updates only, reads it back, and deletes it', async (t) => {
    const telegram = await start(t)
    const bot = clientOf(telegram)
    assert.deepEqual(await bot.getMe(), { id: 7000000001, username: 'emulator_test_bot', firstName: 'Emulator Bot' })
    await bot.setWebhook('http://127.0.0.1:9/api/telegram/webhook', 'a_Secret-42')
    assert.deepEqual(telegram.webhook, { url: 'http://127.0.0.1:9/api/telegram/webhook', secretToken: 'a_Secret-42' })
    assert.deepEqual(await bot.getWebhookInfo(), { url: 'http://127.0.0.1:9/api/telegram/webhook', pendingUpdateCount: 0 })
    await bot.deleteWebhook()
    assert.equal(telegram.webhook.url, '')
    await assert.rejects(bot.setWebhook('http://127.0.0.1:9/hook', 'not allowed!'), TypeError)
  })

  it('classifies a chat that is gone as unreachable: not found, blocked, deactivated', async (t) => {
    const telegram = await start(t)
    const bot = clientOf(telegram)
    const notFound = await refusalOf(bot.sendMessage(77, 'hi'), telegram.token)
    assert.deepEqual([notFound.kind, notFound.code, notFound.statusCode, notFound.description], ['unreachable', 'TELEGRAM_UNREACHABLE', 400, 'Bad Request: chat not found'])
    await telegram.userWrites({ chatId: 77, text: 'hi' })
    telegram.block(77)
    const blocked = await refusalOf(bot.sendMessage(77, 'hi'), telegram.token)
    assert.deepEqual([blocked.kind, blocked.statusCode, blocked.description], ['unreachable', 403, 'Forbidden: bot was blocked by the user'])
    assert.equal(blocked.message, 'Telegram sendMessage: HTTP 403: Forbidden: bot was blocked by the user')
    telegram.block(77, 'deactivated')
    assert.equal((await refusalOf(bot.sendMessage(77, 'hi'), telegram.token)).kind, 'unreachable')
  })

  it('classifies flood control, a server error and no answer as retryAfter, with Telegram\'s retry_after in ms', async (t) => {
    const telegram = await start(t)
    await telegram.userWrites({ chatId: 77, text: 'hi' })
    const bot = clientOf(telegram)
    telegram.fault('too-many-requests', 1, { retryAfterS: 7 })
    telegram.fault('internal-error')
    const flood = await refusalOf(bot.sendMessage(77, 'hi'), telegram.token)
    assert.deepEqual([flood.kind, flood.code, flood.statusCode, flood.retryAfterMs], ['retryAfter', 'TELEGRAM_RETRY_AFTER', 429, 7000])
    const server = await refusalOf(bot.sendMessage(77, 'hi'), telegram.token)
    assert.deepEqual([server.kind, server.statusCode, server.retryAfterMs], ['retryAfter', 500, undefined])

    const nowhere = new BotApi({ token: telegram.token, baseUrl: `http://127.0.0.1:${await freePort()}` })
    const network = await refusalOf(nowhere.sendMessage(77, 'hi'), telegram.token)
    assert.deepEqual([network.kind, network.statusCode, network.description], ['retryAfter', null, 'network error: ECONNREFUSED'])
  })

  it('classifies a wrong token as invalid, without the token in the error', async (t) => {
    const telegram = await start(t)
    const wrong = '7000000001:AAE-aWrongTokenThatMustNotLeak_00000'
    const err = await refusalOf(clientOf(telegram, wrong).sendMessage(77, 'hi'), wrong)
    assert.deepEqual([err.kind, err.code, err.statusCode, err.description], ['invalid', 'TELEGRAM_INVALID_TOKEN', 401, 'Unauthorized'])
    assert.equal((await refusalOf(clientOf(telegram, wrong).getMe(), wrong)).kind, 'invalid')
  })

  it('classifies a refused message as rejected, and refuses an empty or long text before the wire', async (t) => {
    const telegram = await start(t)
    await telegram.userWrites({ chatId: 77, text: 'hi' })
    const bot = clientOf(telegram)
    const html = await refusalOf(bot.sendMessage(77, 'a <blink>b</blink>', { parseMode: 'HTML' }), telegram.token)
    assert.deepEqual([html.kind, html.code, html.statusCode], ['rejected', 'TELEGRAM_REJECTED', 400])
    const calls = telegram.sendMessageCalls
    for (const text of ['', '   ', 'x'.repeat(4097)]) {
      const err = await refusalOf(bot.sendMessage(77, text), telegram.token)
      assert.deepEqual([err.kind, err.statusCode], ['rejected', null])
    }
    await assert.rejects(bot.sendMessage(77, 'hi', { button: { text: 'Open', url: 'javascript:alert(1)' } }), { code: 'TELEGRAM_REJECTED' })
    assert.equal(telegram.sendMessageCalls, calls, 'nothing reached Telegram')
  })

  it('gives up a call at its timeout on the injected clock, as retryAfter', async (t) => {
    const telegram = await start(t)
    await telegram.userWrites({ chatId: 77, text: 'hi' })
    telegram.fault('hang')
    const clock = manualClock()
    const bot = new BotApi({ token: telegram.token, baseUrl: telegram.url, timeoutMs: 5000, timers: clock.timers })
    const call = refusalOf(bot.sendMessage(77, 'hi'), telegram.token)
    assert.equal(clock.pendingTimers, 1)
    clock.advance(4999)
    clock.advance(1)
    const err = await call
    assert.deepEqual([err.kind, err.statusCode, err.description], ['retryAfter', null, 'no answer within 5000 ms'])
    assert.equal(clock.pendingTimers, 0)
  })

  it('rejects with the caller\'s abort reason, not a BotApiError, so that the outbox puts the delivery back', async (t) => {
    const telegram = await start(t)
    await telegram.userWrites({ chatId: 77, text: 'hi' })
    telegram.fault('hang')
    const bot = clientOf(telegram)
    const shutdown = new AbortController()
    const call = bot.sendMessage(77, 'hi', { signal: shutdown.signal })
    const reason = new Error('shutting down')
    shutdown.abort(reason)
    await assert.rejects(call, error => error === reason)
    await assert.rejects(bot.sendMessage(77, 'hi', { signal: shutdown.signal }), error => error === reason)
  })

  it('tries again when something other than the Bot API answers (a proxy\'s HTML page)', async (t) => {
    const proxy = createServer((request, response) => {
      request.resume()
      response.writeHead(403, { 'content-type': 'text/html' })
      response.end('<html>Forbidden by the proxy</html>')
    })
    proxy.listen(0, '127.0.0.1')
    await once(proxy, 'listening')
    t.after(() => { proxy.closeAllConnections(); proxy.close() })
    const token = '7000000001:AAE-emulatorTokenForTestsOnly_000000'
    const bot = new BotApi({ token, baseUrl: `http://127.0.0.1:${(proxy.address() as { port: number }).port}/` })
    const err = await refusalOf(bot.sendMessage(77, 'hi'), token)
    assert.deepEqual([err.kind, err.statusCode, err.description], ['retryAfter', 403, 'HTTP 403 without the Bot API\'s envelope'])
  })

  it('keeps the token out of its own inspection, and out of the refusals of its options', async () => {
    const token = '123456789:AAE-secretPartThatMustNotLeak_12345'
    const bot = new BotApi({ token })
    assert.equal(bot.baseUrl, 'https://api.telegram.org')
    for (const text of [inspect(bot, { depth: 5, showHidden: true }), JSON.stringify(bot)]) assert.ok(!text.includes('secretPart'), text)
    for (const bad of ['123456789 AAE-secretPartThatMustNotLeak_12345', 'secretPartThatMustNotLeak:1', '']) {
      assert.throws(() => new BotApi({ token: bad }), (err: Error) => err instanceof TypeError && !err.message.includes('secretPart'))
    }
    assert.throws(() => new BotApi({ token, baseUrl: 'ftp://example.com' }), TypeError)
    assert.throws(() => new BotApi({ token, timeoutMs: 0 }), RangeError)
    await assert.rejects(bot.sendMessage(1.5, 'x'), TypeError)
  })
})

describe('classifyRefusal', () => {
  it('reads what Telegram\'s other refusals mean for a delivery', () => {
    const cases = [
      [403, 'Forbidden: bot can\'t initiate conversation with a user', undefined, 'unreachable'],
      [403, 'Forbidden: bot was kicked from the group chat', undefined, 'unreachable'],
      [400, 'Bad Request: PEER_ID_INVALID', undefined, 'unreachable'],
      [400, 'Bad Request: group chat was upgraded to a supergroup chat', { migrate_to_chat_id: -1001 }, 'unreachable'],
      [400, 'Bad Request: message is too long', undefined, 'rejected'],
      [404, 'Not Found', undefined, 'invalid'],
      [409, 'Conflict: can\'t use getUpdates method while webhook is active', undefined, 'rejected'],
      [502, 'Bad Gateway', undefined, 'retryAfter'],
      [429, 'Too Many Requests: retry after 0.5', { retry_after: 0.5 }, 'retryAfter'],
    ] as const
    for (const [status, description, parameters, kind] of cases) {
      const err = classifyRefusal('sendMessage', status, { ok: false, error_code: status, description, ...(parameters === undefined ? {} : { parameters }) } as never)
      assert.equal(err.kind, kind, description)
    }
    assert.equal(classifyRefusal('sendMessage', 429, { error_code: 429, description: 'x', parameters: { retry_after: 0.5 } }).retryAfterMs, 500)
    assert.equal(classifyRefusal('sendMessage', 429, { error_code: 429, description: 'x' }).retryAfterMs, undefined)
  })
})
