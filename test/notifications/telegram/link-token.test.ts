/**
 * Link tokens (src/notifications/telegram/link-token.ts): a start parameter Telegram takes, naming
 * the address without showing it, refused once expired on the injected `now`, refused when made
 * with another secret or changed in any character; and the whole way through the emulator: the
 * user's Start reaches the webhook as `/start <token>`, which names the address again.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { addressOf, testKey } from '../../../devnode/bastyon-host.js'
import { startTelegramBotApi } from '../../../devnode/telegram-bot-api.js'
import { addressBytes, addressFromBytes } from '../../../packages/pocketnet-client/address.js'
import { BotApi } from '../../../src/notifications/telegram/bot-api.js'
import { deepLink, LINK_TOKEN_TTL_MS, LinkTokens, START_PARAMETER } from '../../../src/notifications/telegram/link-token.js'
import { readWebhookUpdate, webhookSecretFor } from '../../../src/notifications/telegram/webhook-update.js'
import { startWebhookReceiver } from './webhook-receiver.js'

const SECRET = '7000000001:AAE-emulatorTokenForTestsOnly_000000'
const ALICE = addressOf(testKey('alice'))
const TESTNET = addressOf(testKey('bob'), 0x41)
const NOW = Date.UTC(2026, 10, 29, 6, 0, 0, 250)

/** Random bytes that count up, so that tests are the same every run. */
function countingRandom (): (size: number) => Uint8Array {
  let next = 0
  return size => Uint8Array.from({ length: size }, () => next++ % 256)
}

describe('link tokens', () => {
  it('are 64 characters Telegram takes as a start parameter, and name the address, the nonce and the expiry', () => {
    const tokens = new LinkTokens({ secret: SECRET })
    const issued = tokens.issue(ALICE, NOW)
    assert.equal(issued.token.length, 64)
    assert.match(issued.token, START_PARAMETER)
    assert.match(issued.nonce, /^[A-Za-z0-9_-]{8}$/)
    assert.equal(issued.expiresAt, Math.floor((NOW + LINK_TOKEN_TTL_MS) / 1000) * 1000)
    assert.deepEqual(tokens.verify(issued.token, NOW), { ok: true, address: ALICE, nonce: issued.nonce, expiresAt: issued.expiresAt })
    const testnet = tokens.issue(TESTNET, NOW)
    assert.equal(tokens.verify(testnet.token, NOW).ok && (tokens.verify(testnet.token, NOW) as { address: string }).address, TESTNET)
  })

  it('are the same for the same secret, time and nonce, so another instance verifies them (a fixed vector)', () => {
    const one = new LinkTokens({ secret: SECRET, random: countingRandom() }).issue(ALICE, NOW)
    const two = new LinkTokens({ secret: SECRET, random: countingRandom() }).issue(ALICE, NOW)
    assert.deepEqual(one, two)
    assert.equal(one.nonce, 'AAECAwQF')
    assert.equal(one.token, FIXED_TOKEN)
    assert.deepEqual(new LinkTokens({ secret: SECRET }).verify(FIXED_TOKEN, NOW), { ok: true, address: ALICE, nonce: 'AAECAwQF', expiresAt: one.expiresAt })
  })

  it('do not show the address: neither its bytes nor its text, and two tokens for it differ', () => {
    const tokens = new LinkTokens({ secret: SECRET })
    const first = tokens.issue(ALICE, NOW)
    const second = tokens.issue(ALICE, NOW)
    assert.notEqual(first.token, second.token)
    assert.notEqual(first.nonce, second.nonce)
    const raw = Buffer.from(first.token, 'base64url')
    assert.equal(raw.includes(Buffer.from(addressBytes(ALICE) as Uint8Array)), false)
    assert.equal(raw.includes(Buffer.from(addressBytes(ALICE) as Uint8Array).subarray(1, 9)), false)
    assert.equal(first.token.includes(ALICE.slice(0, 8)), false)
  })

  it('expire at their expiry on the injected clock, not a millisecond before', () => {
    const tokens = new LinkTokens({ secret: SECRET, ttlMs: 60_000 })
    const { token, expiresAt } = tokens.issue(ALICE, NOW)
    assert.equal(tokens.verify(token, expiresAt - 1).ok, true)
    assert.deepEqual(tokens.verify(token, expiresAt), { ok: false, reason: 'expired' })
    assert.deepEqual(tokens.verify(token, NOW + 3_600_000), { ok: false, reason: 'expired' })
    assert.throws(() => tokens.verify(token, Number.NaN), RangeError, 'a clock that is no number expires nothing by accident')
  })

  it('are refused when made with another secret, or changed in any character', () => {
    const tokens = new LinkTokens({ secret: SECRET })
    const { token } = tokens.issue(ALICE, NOW)
    assert.deepEqual(new LinkTokens({ secret: `${SECRET}x` }).verify(token, NOW), { ok: false, reason: 'forged' })
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
    for (let i = 0; i < token.length; i++) {
      const changed = token.slice(0, i) + alphabet[(alphabet.indexOf(token[i] as string) + 1) % 64] + token.slice(i + 1)
      const verified = tokens.verify(changed, NOW)
      assert.equal(verified.ok, false, `position ${i}`)
      // The first byte is the format's version: changed, the token is of no known format.
      const versionChanged = Buffer.from(changed, 'base64url')[0] !== 1
      assert.equal((verified as { reason: string }).reason, versionChanged ? 'malformed' : 'forged', `position ${i}`)
    }
    // A forged token that has also expired is forged first: nothing of it is read before the tag is checked.
    assert.equal((tokens.verify(`${token.slice(0, 63)}${token[63] === 'A' ? 'B' : 'A'}`, NOW + 86_400_000) as { reason: string }).reason, 'forged')
  })

  it('refuse what is no token, and refuse to name what is no address', () => {
    const tokens = new LinkTokens({ secret: SECRET })
    for (const bad of ['', 'abc', 'x'.repeat(63), 'x'.repeat(65), `${'x'.repeat(63)}=`, `${'x'.repeat(63)}/`, 42 as unknown as string]) {
      assert.deepEqual(tokens.verify(bad, NOW), { ok: false, reason: 'malformed' }, String(bad))
    }
    assert.throws(() => tokens.issue('PXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX', NOW), TypeError)
    assert.throws(() => tokens.issue(`${ALICE.slice(0, -1)}${ALICE.endsWith('a') ? 'b' : 'a'}`, NOW), TypeError, 'a bad checksum')
    assert.throws(() => new LinkTokens({ secret: 'short' }), TypeError)
    assert.throws(() => new LinkTokens({ secret: SECRET, ttlMs: 10 }), RangeError)
  })

  it('carry addresses as their 21 bytes and back, on every network', () => {
    for (const address of [ALICE, TESTNET, addressOf(testKey('carol'), 111)]) {
      const bytes = addressBytes(address)
      assert.equal(bytes?.length, 21)
      assert.equal(addressFromBytes(bytes as Uint8Array), address)
    }
    assert.equal(addressFromBytes(new Uint8Array(21)), undefined, 'version 0 is no Pocketnet network')
    assert.equal(addressFromBytes(new Uint8Array(20).fill(0x37)), undefined)
  })
})

describe('deep links', () => {
  it('open the bot with the token as its start parameter', () => {
    const { token } = new LinkTokens({ secret: SECRET }).issue(ALICE, NOW)
    assert.equal(deepLink('my_app_bot', token), `https://t.me/my_app_bot?start=${token}`)
    assert.equal(deepLink('@MyAppBot', token), `https://t.me/MyAppBot?start=${token}`)
    assert.equal(deepLink(`${'a'.repeat(29)}bot`, token).length, 'https://t.me/'.length + 32 + '?start='.length + 64)
    for (const username of ['my_app', 'bot', 'abot', '1_app_bot', 'my-app_bot', `${'a'.repeat(30)}bot`]) assert.throws(() => deepLink(username, token), TypeError, username)
    assert.throws(() => deepLink('my_app_bot', 'has space'), TypeError)
  })

  it('link a chat the whole way through the emulator: Start sends /start <token> to the webhook, which names the address', async (t) => {
    const telegram = await startTelegramBotApi({ webhookRetryDelayMs: 0, username: 'my_app_bot' })
    t.after(() => telegram.close())
    const receiver = await startWebhookReceiver(t)
    const secret = webhookSecretFor(telegram.token)
    await new BotApi({ token: telegram.token, baseUrl: telegram.url }).setWebhook(receiver.url, secret)

    const tokens = new LinkTokens({ secret: telegram.token })
    const issued = tokens.issue(ALICE, NOW)
    const link = new URL(deepLink(telegram.bot.username, issued.token))
    // What a Telegram client does with the link: Start sends the parameter after /start.
    await telegram.userWrites({ chatId: 555, text: `/start ${link.searchParams.get('start') as string}` })
    const [request] = receiver.received
    assert.ok(request)
    const update = readWebhookUpdate({ headers: request.headers, body: request.rawBody }, secret)
    assert.equal(update.kind, 'start')
    assert.ok(update.kind === 'start')
    assert.equal(update.chatId, 555)
    assert.deepEqual(tokens.verify(update.token, NOW + 1000), { ok: true, address: ALICE, nonce: issued.nonce, expiresAt: issued.expiresAt })
    assert.deepEqual(readWebhookUpdate({ headers: request.headers, body: request.rawBody }, webhookSecretFor('7000000001:another')), { kind: 'unauthorized', reason: 'wrong_secret' })
  })
})

/** Made once by this code: it must stay verifiable, or links handed out before an upgrade break. */
const FIXED_TOKEN = 'AWsLwbgAAQIDBAXmjY0nyVNpwH6_YmyoP4s0cxyn5ZtJuRxfa5isINk7_adVOvjV'
