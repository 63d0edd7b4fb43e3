/**
 * Reading a webhook request (src/notifications/telegram/webhook-update.ts): the secret header
 * checked before anything else, in any form headers come in; `/start <token>` from a person in a
 * private chat told from any other text and from everything to ignore; and the webhook secret made
 * from the bot's token, which the emulator's setWebhook takes.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { startTelegramBotApi } from '../../../devnode/telegram-bot-api.js'
import { BotApi } from '../../../src/notifications/telegram/bot-api.js'
import { readWebhookUpdate, SECRET_TOKEN_HEADER, webhookSecretFor, type WebhookUpdate } from '../../../src/notifications/telegram/webhook-update.js'

const SECRET = 'the_webhook-secret'
const TOKEN = 'AWsLwbgAAQIDBAXmjY0nyVNpwH6_YmyoP4s0cxyn5ZtJuRxfa5isINk7_adVOvjV'
const ALICE = { id: 555, is_bot: false, first_name: 'Alice', username: 'alice' }

function privateMessage (text: string | undefined, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    update_id: 900,
    message: { message_id: 3, from: ALICE, chat: { id: 555, type: 'private', first_name: 'Alice' }, date: 1795932000, ...(text === undefined ? {} : { text }), ...extra },
  }
}

const read = (body: unknown, headers: Record<string, string | string[] | undefined> = { [SECRET_TOKEN_HEADER]: SECRET }): WebhookUpdate => readWebhookUpdate({ headers, body }, SECRET)

describe('readWebhookUpdate', () => {
  it('refuses a request without the secret header, or with another secret, before reading its body', () => {
    const body = privateMessage(`/start ${TOKEN}`)
    assert.deepEqual(read(body, {}), { kind: 'unauthorized', reason: 'missing_secret' })
    assert.deepEqual(read(body, { [SECRET_TOKEN_HEADER]: `${SECRET}x` }), { kind: 'unauthorized', reason: 'wrong_secret' })
    assert.deepEqual(read(body, { [SECRET_TOKEN_HEADER]: SECRET.slice(0, -1) }), { kind: 'unauthorized', reason: 'wrong_secret' })
    assert.deepEqual(read(body, { [SECRET_TOKEN_HEADER]: '' }), { kind: 'unauthorized', reason: 'wrong_secret' })
    assert.deepEqual(read(body, { [SECRET_TOKEN_HEADER]: [SECRET, SECRET] }), { kind: 'unauthorized', reason: 'wrong_secret' })
    assert.deepEqual(read('not even JSON', { authorization: `Bearer ${SECRET}` }), { kind: 'unauthorized', reason: 'missing_secret' })
  })

  it('takes the header from node:http\'s, a plain object\'s or fetch\'s headers, and the body as text, bytes or parsed', () => {
    const body = privateMessage(`/start ${TOKEN}`)
    const expected = { kind: 'start', updateId: 900, chatId: 555, token: TOKEN, from: { id: 555, firstName: 'Alice', username: 'alice' } }
    assert.deepEqual(read(body), expected)
    assert.deepEqual(read(JSON.stringify(body), { 'X-Telegram-Bot-Api-Secret-Token': SECRET }), expected)
    assert.deepEqual(readWebhookUpdate({ headers: new Headers({ 'X-Telegram-Bot-Api-Secret-Token': SECRET }), body: Buffer.from(JSON.stringify(body)) }, SECRET), expected)
    assert.throws(() => readWebhookUpdate({ headers: {}, body }, ''), TypeError)
  })

  it('tells /start <token> in a private chat from other text', () => {
    assert.equal(read(privateMessage(`/start@my_app_bot ${TOKEN}`)).kind, 'start')
    assert.equal((read(privateMessage(`  /start   ${TOKEN}  `)) as { token: string }).token, TOKEN)
    for (const text of ['/start', '/start ', `/start ${TOKEN}x`, '/start has space', '/start with+plus', 'hello', `/startx ${TOKEN}`, `please /start ${TOKEN}`]) {
      assert.deepEqual(read(privateMessage(text)), { kind: 'other', updateId: 900, chatId: 555, text, from: { id: 555, firstName: 'Alice', username: 'alice' } }, text)
    }
  })

  it('ignores what is not a person\'s text in a private chat, and a body that is no Update, with the reason', () => {
    const group = { update_id: 901, message: { message_id: 1, from: ALICE, chat: { id: -100, type: 'group', title: 'G' }, date: 1, text: `/start ${TOKEN}` } }
    const fromBot = privateMessage(`/start ${TOKEN}`, { from: { id: 9, is_bot: true, first_name: 'Bot' } })
    const cases: Array<[unknown, string]> = [
      [group, 'a message in a group chat'],
      [{ update_id: 902, edited_message: privateMessage('x').message }, 'an update of type edited_message'],
      [{ update_id: 903, my_chat_member: {} }, 'an update of type my_chat_member'],
      [privateMessage(undefined, { sticker: { file_id: 'x' } }), 'a message without text'],
      [fromBot, 'a message not from a person'],
      [{ message: privateMessage('x').message }, 'no update_id'],
      ['{"update_id": 1, "message":', 'not an Update'],
      [[1, 2], 'not an Update'],
      [null, 'not an Update'],
    ]
    for (const [body, reason] of cases) {
      const update = read(body)
      assert.equal(update.kind, 'ignored', reason)
      assert.equal((update as { reason: string }).reason, reason)
    }
    assert.equal((read(group) as { updateId?: number }).updateId, 901, 'the update id, when there is one')
  })
})

describe('webhookSecretFor', () => {
  it('makes a secret Telegram takes from the bot\'s token: the same each time, another for another token', async (t) => {
    const token = '7000000001:AAE-emulatorTokenForTestsOnly_000000'
    const secret = webhookSecretFor(token)
    assert.match(secret, /^[A-Za-z0-9_-]{43}$/)
    assert.equal(webhookSecretFor(token), secret)
    assert.notEqual(webhookSecretFor('7000000002:AAE-emulatorTokenForTestsOnly_000000'), secret)
    assert.equal(secret.includes(token.split(':')[1] as string), false)
    assert.throws(() => webhookSecretFor(''), TypeError)

    const telegram = await startTelegramBotApi({ token })
    t.after(() => telegram.close())
    await new BotApi({ token, baseUrl: telegram.url }).setWebhook('http://127.0.0.1:9/hook', secret)
    assert.equal(telegram.webhook.secretToken, secret)
  })
})
