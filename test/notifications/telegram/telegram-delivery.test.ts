/**
 * The Telegram channel of `app.notifications` without HTTP (NotificationsService), on both
 * databases, with the Bot API emulator on loopback and the clock and timers moved by hand: a link
 * token links once, on another instance too; a 429 is tried again not before its retry_after; a
 * user who blocked the bot is given up at once and their link dropped; a revoked token is logged
 * for the operator and retried. What each failure means for a delivery, pure, at the end.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it, type TestContext } from 'node:test'
import { addressOf, testKey } from '../../../devnode/bastyon-host.js'
import { EMULATOR_BOT_TOKEN, startTelegramBotApi, type TelegramBotApi } from '../../../devnode/telegram-bot-api.js'
import type { Database } from '../../../src/db/database.js'
import { openDatabase } from '../../../src/db/open-database.js'
import { appLink } from '../../../src/notifications/app-link.js'
import { NotificationsService, PUSH_RETRY } from '../../../src/notifications/notifications-service.js'
import { RetryPolicy } from '../../../src/outbox/retry-policy.js'
import { BotApiError, type BotApiFailureKind } from '../../../src/notifications/telegram/bot-api-errors.js'
import { TelegramChannel, telegramRetryDecision } from '../../../src/notifications/telegram/telegram-channel.js'
import { SECRET_TOKEN_HEADER, webhookSecretFor } from '../../../src/notifications/telegram/webhook-update.js'
import { manualClock, type ManualClock } from '../../helpers/manual-clock.js'
import { startPostgres } from '../../helpers/start-postgres.js'
import { waitFor } from '../../helpers/wait-for.js'
import { backends, sharedDatabase } from '../../payments/databases.js'

const postgres = await startPostgres({ after })
const APP_ID = 'demo.pocketnet.app'
const START = Date.parse('2026-11-29T06:00:00.000Z')
const SECRET = webhookSecretFor(EMULATOR_BOT_TOKEN)

let users = 0
const newUser = (): string => addressOf(testKey(`telegram delivery user ${++users}`))
let chats = 5000
const newChat = (): number => ++chats

interface Logged { level: string, fields: Record<string, unknown>, message: string }

async function emulator (t: TestContext): Promise<TelegramBotApi> {
  const telegram = await startTelegramBotApi({ username: 'demo_app_bot', now: () => START })
  t.after(() => telegram.close())
  return telegram
}

function serviceOn (db: Database, telegram: TelegramBotApi, clock: ManualClock, logged: Logged[] = [], token = telegram.token): NotificationsService {
  const log = (level: string) => (fields: object, message: string) => { logged.push({ level, fields: fields as Record<string, unknown>, message }) }
  return new NotificationsService(async () => db, {
    appId: APP_ID,
    network: 'main',
    proxies: ['http://127.0.0.1:9'],
    limits: { userIntervalMs: 0 },
    waitMs: 0,
    now: () => START + clock.now(),
    timers: clock.timers,
    random: () => 0.5,
    telegram: new TelegramChannel({ appId: APP_ID, botToken: token, botUsername: 'demo_app_bot', apiUrl: telegram.url, timers: clock.timers }),
    log: { info: log('info'), warn: log('warn'), error: log('error') },
  })
}

/** What Telegram posts when the user of `chatId` presses Start on the deep link. */
function startUpdate (chatId: number, link: string, secret = SECRET): { headers: Record<string, string>, body: unknown } {
  const token = new URL(link).searchParams.get('start') as string
  return {
    headers: { [SECRET_TOKEN_HEADER]: secret, 'content-type': 'application/json' },
    body: { update_id: chatId * 10, message: { message_id: 1, date: START / 1000, chat: { id: chatId, type: 'private', first_name: 'Ann' }, from: { id: chatId, is_bot: false, first_name: 'Ann' }, text: `/start ${token}` } },
  }
}

/** The user opens a chat with the bot (so that it can write to them) and links it. */
async function linked (service: NotificationsService, telegram: TelegramBotApi, user = newUser(), chatId = newChat()): Promise<{ user: string, chatId: number }> {
  await telegram.userWrites({ chatId, text: 'hello' })
  assert.equal(await service.receiveTelegramUpdate(startUpdate(chatId, service.telegramLink(user).link)), 'linked')
  return { user, chatId }
}

const texts = (telegram: TelegramBotApi, chatId: number): string[] => telegram.sentMessages(chatId).map(sent => sent.message.text ?? '')

for (const backend of backends(postgres)) {
  describe(`Telegram notifications on the ${backend.name} database`, () => {
    const database = sharedDatabase(backend, { before, after })

    it('links a chat with a token once: the same token on the next instance links nothing, and the bot says so', async (t) => {
      const telegram = await emulator(t)
      const clock = manualClock()
      const first = serviceOn(database(), telegram, clock)
      const user = newUser()
      const chatId = newChat()
      await telegram.userWrites({ chatId, text: 'hello' })
      const { link, expiresAt } = first.telegramLink(user)
      assert.match(link, /^https:\/\/t\.me\/demo_app_bot\?start=[A-Za-z0-9_-]{64}$/)
      assert.equal(expiresAt, new Date(START + 1000 + 600_000).toISOString())
      assert.equal(await first.receiveTelegramUpdate(startUpdate(chatId, link)), 'linked')
      assert.deepEqual(await first.channels(user), [{ channel: 'telegram', since: new Date(START + 1000).toISOString() }])
      await first.close()

      // Another instance on the same database (the embedded one: after the first closed).
      const second = serviceOn(database(), telegram, clock)
      t.after(() => second.close())
      const otherChat = newChat()
      await telegram.userWrites({ chatId: otherChat, text: 'hello' })
      assert.equal(await second.receiveTelegramUpdate(startUpdate(otherChat, link)), 'refused')
      const rows = await database().query<{ target: string }>("SELECT target FROM notification_channels WHERE address = $1 AND channel = 'telegram'", [user])
      assert.deepEqual(rows.rows, [{ target: String(chatId) }], 'still the first chat')
      assert.deepEqual(texts(telegram, chatId), [`Linked: you will get ${APP_ID}'s notifications here.`])
      assert.deepEqual(texts(telegram, otherChat), [`This link was used already. Ask ${APP_ID} for a new one to get its notifications here.`])
    })

    it('tries a message Telegram refused with 429 again not before its retry_after, then delivers it once', async (t) => {
      const telegram = await emulator(t)
      const clock = manualClock()
      const service = serviceOn(database(), telegram, clock)
      t.after(() => service.close())
      const { user, chatId } = await linked(service, telegram)
      telegram.fault('too-many-requests', 1, { retryAfterS: 30 })

      assert.deepEqual((await service.send({ to: user, header: 'Your order shipped', path: '/orders/42', id: 'shipped-42' })).results, [{ address: user, status: 'queued' }])
      await waitFor('the refused attempt', () => service.counts.deliveries.telegram.failed === 1)
      await service.whenIdle()
      assert.ok(PUSH_RETRY.firstDelayMs < 30_000, 'retry_after is the longer wait here')
      clock.advance(29_999)
      await service.whenIdle()
      assert.equal(telegram.sendMessageCalls, 2, 'the link\'s answer and the refused attempt: nothing before retry_after')
      clock.advance(1)
      await waitFor('the retry', () => service.counts.deliveries.telegram.delivered === 1)
      const sent = telegram.sentMessages(chatId).at(-1)
      assert.equal(sent?.message.text, 'Your order shipped')
      assert.deepEqual(sent?.message.reply_markup, { inline_keyboard: [[{ text: 'Open', url: appLink(APP_ID, '/orders/42') }]] })
      assert.equal(appLink(APP_ID, '/orders/42'), 'https://bastyon.com/application?id=demo.pocketnet.app&p=2f6f72646572732f3432')
      assert.equal(texts(telegram, chatId).filter(text => text === 'Your order shipped').length, 1)
    })

    it('gives a message to a user who blocked the bot up at once, drops the link and what waits for it, and keeps the record', async (t) => {
      const telegram = await emulator(t)
      const clock = manualClock()
      const logged: Logged[] = []
      const service = serviceOn(database(), telegram, clock, logged)
      t.after(() => service.close())
      const { user, chatId } = await linked(service, telegram)
      telegram.block(chatId)

      await service.send({ to: user, header: 'First', path: '/', id: 'blocked-1' })
      await waitFor('the refused attempt', () => service.counts.deliveries.telegram.givenUp === 1)
      await service.whenIdle()
      assert.deepEqual(service.counts.deliveries.telegram, { delivered: 0, failed: 1, givenUp: 1 }, 'no retry')
      assert.deepEqual(await service.channels(user), [])
      const rows = await database().query<{ status: string, last_error: string }>('SELECT status, last_error FROM notification_deliveries WHERE address = $1', [user])
      assert.deepEqual(rows.rows.map(row => row.status), ['given_up'])
      assert.match(rows.rows[0]?.last_error ?? '', /403: Forbidden: bot was blocked by the user/)
      assert.ok(logged.some(line => line.message.includes('its link was dropped') && line.fields.chatId === String(chatId)))
      assert.ok(logged.every(line => !JSON.stringify(line).includes('First')), 'never the header in a log')
      assert.deepEqual((await service.send({ to: user, header: 'Second', path: '/', id: 'blocked-2' })).results, [{ address: user, status: 'not_registered' }])
      assert.equal(telegram.sendMessageCalls, 2, 'the link\'s answer and the one refused attempt')
    })

    it('logs a token Telegram refuses (revoked) for the operator, tries the message again and keeps the link', async (t) => {
      const telegram = await emulator(t)
      const clock = manualClock()
      const first = serviceOn(database(), telegram, clock)
      const { user } = await linked(first, telegram)
      await first.close()

      const logged: Logged[] = []
      const revoked = serviceOn(database(), telegram, clock, logged, '7000000001:AAE-aRevokedTokenNotTheEmulators_00')
      t.after(() => revoked.close())
      await revoked.send({ to: user, header: 'Hello', path: '/', id: 'revoked-1' })
      await waitFor('the refused attempt', () => revoked.counts.deliveries.telegram.failed === 1)
      await revoked.whenIdle()
      assert.equal(revoked.counts.deliveries.telegram.givenUp, 0)
      assert.ok(logged.some(line => line.level === 'error' && line.message.includes('TELEGRAM_BOT_TOKEN wrong or revoked')))
      assert.ok(logged.every(line => !JSON.stringify(line).includes('aRevokedToken')), 'never the token in a log')
      assert.deepEqual((await revoked.channels(user)).map(channel => channel.channel), ['telegram'], 'the link kept')
      clock.advance(PUSH_RETRY.firstDelayMs)
      await waitFor('the retry', () => revoked.counts.deliveries.telegram.failed === 2)
    })
  })
}

describe('two instances on one PostgreSQL database', () => {
  it('receive the same /start at once, and the chat is linked once', async (t) => {
    const url = await postgres.freshDatabase()
    const dbs = [await openDatabase({ databaseUrl: url }), await openDatabase({ databaseUrl: url })]
    t.after(() => Promise.all(dbs.map(db => db.close())))
    const telegram = await emulator(t)
    const clock = manualClock()
    const instances = dbs.map(db => serviceOn(db, telegram, clock))
    t.after(() => Promise.all(instances.map(instance => instance.close())))
    const user = newUser()
    const chatId = newChat()
    await telegram.userWrites({ chatId, text: 'hello' })
    const update = startUpdate(chatId, (instances[0] as NotificationsService).telegramLink(user).link)
    const outcomes = await Promise.all([0, 1, 0, 1].map(i => (instances[i] as NotificationsService).receiveTelegramUpdate(update)))
    assert.deepEqual(outcomes.sort(), ['linked', 'refused', 'refused', 'refused'])
    assert.equal(texts(telegram, chatId).filter(text => text.startsWith('Linked')).length, 1)
  })
})

describe('what a Telegram failure means for a delivery', () => {
  const policy = new RetryPolicy({ firstDelayMs: 5000, maxDelayMs: 600_000, jitter: 0, maxAttempts: 8 })
  const failure = (kind: BotApiFailureKind, retryAfterMs?: number): BotApiError => new BotApiError({ kind, method: 'sendMessage', statusCode: 400, description: 'x', ...(retryAfterMs === undefined ? {} : { retryAfterMs }) })

  it('gives up at once when the chat is gone or the message refused, whatever the attempt', () => {
    assert.deepEqual(telegramRetryDecision(failure('unreachable'), 1, policy), { giveUp: true })
    assert.deepEqual(telegramRetryDecision(failure('rejected'), 1, policy), { giveUp: true })
  })

  it('waits the longer of retry_after and the backoff, and gives up after the last attempt', () => {
    assert.deepEqual(telegramRetryDecision(failure('retryAfter', 30_000), 1, policy), { giveUp: false, retryInMs: 30_000 })
    assert.deepEqual(telegramRetryDecision(failure('retryAfter', 1000), 2, policy), { giveUp: false, retryInMs: 10_000 })
    assert.deepEqual(telegramRetryDecision(failure('retryAfter'), 3, policy), { giveUp: false, retryInMs: 20_000 })
    assert.deepEqual(telegramRetryDecision(failure('retryAfter', 1000), 8, policy), { giveUp: true })
  })

  it('retries a refused token and any other error on the backoff', () => {
    assert.deepEqual(telegramRetryDecision(failure('invalid'), 1, policy), { giveUp: false, retryInMs: 5000 })
    assert.deepEqual(telegramRetryDecision(new Error('the database'), 2, policy), { giveUp: false, retryInMs: 10_000 })
  })
})
