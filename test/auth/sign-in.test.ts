import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { describe, it } from 'node:test'
import { AUTH_ERROR_CODES } from '../../src/auth/auth-errors.js'
import { signedInUser } from '../../src/auth/plugin.js'
import { generateDataset } from '../../devnode/data/generate.js'
import type { Emulator } from '../../devnode/server.js'
import { startApp, type TestApp } from '../helpers/build-app.js'
import { addressOf, highSTwin, sdkSign, testKey, type SignatureObject } from '../../devnode/bastyon-host.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { APP_ID, bearer, giveAccount, newChallenge, postJson, signIn, type Answer } from '../helpers/sign-in.js'

type WithAfter = { after (fn: () => unknown): void }

const KEY = testKey('a Bastyon user')
const OTHER_KEY = testKey('another Bastyon user')
/** A key whose address has no account on the emulated chain. */
const NEWCOMER_KEY = testKey('a newcomer')
const START = Date.parse('2026-11-24T10:00:00.000Z')

/** A wall clock the test moves by hand. */
function wallClock (): { now: () => number, advance (ms: number): void, at: number } {
  const clock = { at: START, now: () => clock.at, advance (ms: number) { clock.at += ms } }
  return clock
}

/** An emulator whose dataset has an account for `key`'s address. */
async function nodeKnowing (t: WithAfter, key: Uint8Array): Promise<{ node: Emulator, name: string }> {
  const dataset = generateDataset({ users: 40 })
  const { name } = giveAccount(dataset, key)
  return { node: await startEmulator(t, { dataset }), name }
}

/** Sign-in on, its rate limit and check budget out of the way (the clock stands still: nothing refills). */
async function service (t: WithAfter, node: Emulator, clock: { now: () => number }, env: Record<string, string> = {}): Promise<TestApp> {
  return startApp(t, { nodes: [node.url], now: clock.now, env: { BASTYON_APP_ID: APP_ID, AUTH_RATE_LIMIT_MAX: '1000', AUTH_SIGNATURE_CHECKS_PER_S: '1000', ...env } })
}

function assertRefused (answer: Answer, code: string, message = 'Sign-in failed'): void {
  assert.equal(answer.status, 401, `${code}: ${JSON.stringify(answer.body)}`)
  assert.equal(answer.body.message, message)
  assert.equal(answer.body.code, code, JSON.stringify(answer.body))
  assert.equal(typeof answer.body.error, 'string')
  assert.match(answer.headers.get('www-authenticate') ?? '', /^Bearer/)
}

describe('sign in with Bastyon', () => {
  it('trades a signed challenge for a token, and /api/me names the signer with their profile', async (t) => {
    const clock = wallClock()
    const { node, name } = await nodeKnowing(t, KEY)
    const app = await service(t, node, clock)
    const challengeAnswer = await postJson(app, '/api/auth/challenge')
    assert.equal(challengeAnswer.status, 200)
    assert.equal(challengeAnswer.body.message, 'Challenge issued')
    const { challenge, expiresAt } = challengeAnswer.body.data
    assert.match(challenge, /^[A-Za-z0-9_-]{32}$/)
    assert.equal(expiresAt, new Date(START + 300_000).toISOString())
    assert.equal(challengeAnswer.headers.get('cache-control'), 'no-store')

    clock.advance(20_000)
    const signed = await postJson(app, '/api/auth/session', { signature: sdkSign(challenge, APP_ID, { key: KEY, issued: clock.now() - 3000 }) })
    assert.equal(signed.status, 200, JSON.stringify(signed.body))
    assert.equal(signed.body.message, 'Signed in successfully')
    assert.equal(signed.body.data.address, addressOf(KEY))
    assert.match(signed.body.data.token, /^[A-Za-z0-9_-]{43}$/)
    assert.equal(signed.body.data.expiresAt, new Date(clock.now() + 86_400_000).toISOString())

    const me = await app.get('/api/me', bearer(signed.body.data.token))
    assert.equal(me.status, 200, JSON.stringify(me.body))
    assert.equal(me.body.message, 'Signed-in user retrieved successfully')
    assert.equal(me.body.data.address, addressOf(KEY))
    assert.equal(me.body.data.profile.name, name)
    assert.equal(me.headers.get('cache-control'), 'no-store')

    const newcomer = await signIn(app, { key: NEWCOMER_KEY, issued: clock.now() })
    const unknown = await app.get('/api/me', bearer(newcomer.token))
    assert.equal(unknown.status, 200)
    assert.deepEqual(unknown.body.data, { address: addressOf(NEWCOMER_KEY), profile: null })
  })

  it('refuses, with 401 and a stable code, every flaw of the ecosystem\'s check', async (t) => {
    const clock = wallClock()
    const node = await startEmulator(t)
    const app = await service(t, node, clock)
    const issued = clock.now()
    const good = (challenge: string): SignatureObject => sdkSign(challenge, APP_ID, { key: KEY, issued })
    // Each flaw against a challenge of its own: a refused signature uses its challenge up.
    const cases: Array<[string, (challenge: string) => unknown, string]> = [
      ['a session without the challenge (auth/<appId>)', () => sdkSign('auth', APP_ID, { key: KEY, issued }), 'SIG_SESSION_MISMATCH'],
      ['the app id alone, as account() signs', () => sdkSign('', APP_ID, { key: KEY, issued, exp: 1280 }), 'SIG_SESSION_MISMATCH'],
      ['another app\'s id', challenge => sdkSign(challenge, 'other.pocketnet.app', { key: KEY, issued }), 'SIG_SESSION_MISMATCH'],
      ['expired', challenge => sdkSign(challenge, APP_ID, { key: KEY, issued: issued - 600_000 }), 'SIG_EXPIRED'],
      ['issued in the future beyond the skew', challenge => sdkSign(challenge, APP_ID, { key: KEY, issued: issued + 120_000 }), 'SIG_NOT_YET_VALID'],
      ['the high-S twin', challenge => highSTwin(good(challenge)), 'SIG_HIGH_S'],
      ['no v', challenge => { const { v: _v, ...withoutV } = good(challenge); return withoutV }, 'SIG_VERSION'],
      ['trailing characters after the hex', challenge => ({ ...good(challenge), signature: `${good(challenge).signature}zz` }), 'SIG_MALFORMED'],
      ['another key\'s address', challenge => ({ ...good(challenge), address: addressOf(OTHER_KEY) }), 'SIG_ADDRESS_MISMATCH'],
      ['the nonce edited after signing', challenge => ({ ...good(challenge), nonce: good(challenge).nonce.replace('exp=360', 'exp=1280') }), 'SIG_BAD_SIGNATURE'],
      ['a testnet address on a mainnet service', challenge => sdkSign(challenge, APP_ID, { key: KEY, issued, version: 0x41 }), 'SIG_WRONG_NETWORK'],
      ['a challenge never issued', () => sdkSign('Qm9ndXNjaGFsbGVuZ2VOZXZlcklzc3Vl', APP_ID, { key: KEY, issued }), 'AUTH_CHALLENGE_UNKNOWN'],
      ['an empty object', () => ({}), 'SIG_MALFORMED'],
    ]
    for (const [what, signatureFor, code] of cases) {
      const challenge = await newChallenge(app)
      const answer = await postJson(app, '/api/auth/session', { signature: signatureFor(challenge) })
      assertRefused(answer, code)
      assert.ok(!answer.body.error.includes(challenge), `${what}: the error does not repeat the challenge`)
    }
    // The good signature signs in once, then is a replay.
    const challenge = await newChallenge(app)
    assert.equal((await postJson(app, '/api/auth/session', { signature: good(challenge) })).status, 200)
    assertRefused(await postJson(app, '/api/auth/session', { signature: good(challenge) }), 'AUTH_CHALLENGE_UNKNOWN')
  })

  it('takes a challenge once when two requests race with it', async (t) => {
    const clock = wallClock()
    const app = await service(t, await startEmulator(t), clock)
    const signature = sdkSign(await newChallenge(app), APP_ID, { key: KEY, issued: clock.now() })
    const answers = await Promise.all(Array.from({ length: 8 }, () => postJson(app, '/api/auth/session', { signature })))
    assert.deepEqual(answers.map(answer => answer.status).sort(), [200, 401, 401, 401, 401, 401, 401, 401])
  })

  it('forgets a challenge at its expiry, and the oldest when too many are pending', async (t) => {
    const clock = wallClock()
    const app = await service(t, await startEmulator(t), clock, { AUTH_CHALLENGE_TTL_S: '60', AUTH_MAX_CHALLENGES: '2' })
    const late = await newChallenge(app)
    clock.advance(60_001)
    assertRefused(await postJson(app, '/api/auth/session', { signature: sdkSign(late, APP_ID, { key: KEY, issued: clock.now() }) }), 'AUTH_CHALLENGE_UNKNOWN')
    const [first, second, third] = [await newChallenge(app), await newChallenge(app), await newChallenge(app)]
    const sign = (challenge: string): SignatureObject => sdkSign(challenge, APP_ID, { key: KEY, issued: clock.now() })
    assertRefused(await postJson(app, '/api/auth/session', { signature: sign(first) }), 'AUTH_CHALLENGE_UNKNOWN')
    assert.equal((await postJson(app, '/api/auth/session', { signature: sign(second) })).status, 200)
    assert.equal((await postJson(app, '/api/auth/session', { signature: sign(third) })).status, 200)
  })

  it('answers 400 for a body that is not {signature: object}, 413 past 4 KB, 415 for a form', async (t) => {
    const clock = wallClock()
    const app = await service(t, await startEmulator(t), clock)
    const bad: Array<[unknown, RegExp]> = [
      ['{"signature":', /Bad request/],
      ['[]', /Invalid body field/],
      [{}, /Missing body field: signature/],
      [{ signature: null }, /Invalid body field: signature/],
      [{ signature: [] }, /Invalid body field: signature/],
      [{ signature: 'a string' }, /Invalid body field: signature/],
      [{ signatures: {} }, /Missing body field: signature/],
    ]
    for (const [body, message] of bad) {
      const answer = await postJson(app, '/api/auth/session', body)
      assert.equal(answer.status, 400, JSON.stringify(body))
      assert.match(answer.body.message, message)
      assert.equal(typeof answer.body.error, 'string')
    }
    const empty = await postJson(app, '/api/auth/session')
    assert.equal(empty.status, 400)
    const huge = await postJson(app, '/api/auth/session', { signature: { nonce: 'x'.repeat(5000) } })
    assert.equal(huge.status, 413)
    assert.equal(huge.body.message, 'Payload too large')
    const text = await app.get('/api/auth/session', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'signature' })
    assert.equal(text.status, 400)
    const form = await app.get('/api/auth/session', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'signature=x' })
    assert.equal(form.status, 415)
    assert.equal((await app.get('/healthz')).status, 200)
  })

  it('answers 401 on /api/me without a valid token, and a revoked or expired token stops working', async (t) => {
    const clock = wallClock()
    const app = await service(t, await startEmulator(t), clock, { AUTH_SESSION_TTL_S: '3600' })
    const missing = await app.get('/api/me')
    assertRefused(missing, 'AUTH_MISSING', 'Authentication required')
    assert.equal(missing.headers.get('www-authenticate'), 'Bearer')
    for (const authorization of ['Bearer', 'Bearer short', 'Basic dXNlcjpwYXNz', `Token ${'a'.repeat(43)}`]) {
      assertRefused(await app.get('/api/me', { headers: { authorization } }), 'AUTH_MALFORMED', 'Authentication required')
    }
    assertRefused(await app.get('/api/me', bearer('a'.repeat(43))), 'AUTH_TOKEN_INVALID', 'Authentication required')

    const { token } = await signIn(app, { key: KEY, issued: clock.now() })
    assert.equal((await app.get('/api/me', bearer(token))).status, 200)
    assert.equal((await app.get('/api/me', { headers: { authorization: `bearer  ${token}` } })).status, 200)
    const signOut = await app.get('/api/auth/session', { method: 'DELETE', ...bearer(token) })
    assert.equal(signOut.status, 200)
    assert.deepEqual(signOut.body, { message: 'Signed out successfully', data: { address: addressOf(KEY) } })
    assertRefused(await app.get('/api/me', bearer(token)), 'AUTH_TOKEN_INVALID', 'Authentication required')
    assertRefused(await app.get('/api/auth/session', { method: 'DELETE', ...bearer(token) }), 'AUTH_TOKEN_INVALID', 'Authentication required')

    const later = await signIn(app, { key: KEY, issued: clock.now() })
    clock.advance(3_599_000)
    assert.equal((await app.get('/api/me', bearer(later.token))).status, 200)
    clock.advance(1000)
    assertRefused(await app.get('/api/me', bearer(later.token)), 'AUTH_TOKEN_INVALID', 'Authentication required')
  })

  it('lets the origins in CORS_ORIGINS sign in from a browser: POST, DELETE and Authorization', async (t) => {
    const clock = wallClock()
    const app = await service(t, await startEmulator(t), clock, { CORS_ORIGINS: 'https://app.example' })
    for (const [path, method, headers] of [['/api/auth/session', 'POST', 'content-type'], ['/api/auth/session', 'DELETE', 'authorization'], ['/api/me', 'GET', 'authorization']]) {
      const preflight = await app.get(path as string, {
        method: 'OPTIONS',
        headers: { origin: 'https://app.example', 'access-control-request-method': method as string, 'access-control-request-headers': headers as string },
      })
      assert.equal(preflight.status, 204, `${method} ${path}`)
      assert.equal(preflight.headers.get('access-control-allow-origin'), 'https://app.example')
      assert.match(preflight.headers.get('access-control-allow-methods') ?? '', new RegExp(method as string))
      assert.match(preflight.headers.get('access-control-allow-headers') ?? '', new RegExp(headers as string, 'i'))
    }
    const refused = await app.get('/api/me', { headers: { origin: 'https://app.example' } })
    assert.equal(refused.status, 401)
    assert.equal(refused.headers.get('access-control-allow-origin'), 'https://app.example', 'a browser can read the 401')
  })

  it('has every refusal code documented in docs/sign-in.md, with its meaning', async () => {
    const doc = await readFile(new URL('../../docs/sign-in.md', import.meta.url), 'utf8')
    for (const [code, meaning] of Object.entries(AUTH_ERROR_CODES)) {
      assert.ok(doc.includes(`| \`${code}\` | ${meaning} |`), `${code} is in docs/sign-in.md with its meaning`)
    }
  })

  it('is off without BASTYON_APP_ID: no sign-in routes, and a route marked auth stops the start', async (t) => {
    const node = await startEmulator(t)
    const app = await startApp(t, { nodes: [node.url] })
    assert.equal((await postJson(app, '/api/auth/challenge')).status, 404)
    assert.equal((await app.get('/api/me')).status, 404)
    await assert.rejects(startApp(t, {
      nodes: [node.url],
      extend: app => app.get('/api/orders', { config: { auth: true } }, async () => ({ message: 'ok', data: [] })),
    }), { message: /GET \/api\/orders needs a signed-in user \(config.auth\), but sign-in is off: set BASTYON_APP_ID/ })
  })
})

describe('a route of the mini-app\'s own, marked auth', () => {
  it('knows the caller from request.user, and the fast path never answers it', async (t) => {
    const clock = wallClock()
    const node = await startEmulator(t)
    const app = await startApp(t, {
      nodes: [node.url],
      now: clock.now,
      env: { BASTYON_APP_ID: APP_ID, AUTH_RATE_LIMIT_MAX: '1000' },
      extend: app => {
        app.get('/api/orders', { config: { auth: true } }, async (request) => ({ message: 'Orders retrieved', data: { owner: request.user?.address, via: request.user?.via } }))
        // A route that forgot the mark: signedInUser refuses to go on, rather than answer for nobody.
        app.get('/api/forgot', async (request) => ({ message: 'ok', data: signedInUser(request).address }))
      },
    })
    const users = [await signIn(app, { key: KEY, issued: clock.now() }), await signIn(app, { key: OTHER_KEY, issued: clock.now() })]
    for (let round = 0; round < 4; round++) {
      for (const user of users) {
        for (const path of ['/api/orders', '/api/me']) {
          const answer = await app.get(path, bearer(user.token))
          assert.equal(answer.status, 200)
          assert.equal(answer.body.data.owner ?? answer.body.data.address, user.address)
        }
      }
      assertRefused(await app.get('/api/orders'), 'AUTH_MISSING', 'Authentication required')
      assertRefused(await app.get('/api/me'), 'AUTH_MISSING', 'Authentication required')
    }
    const metrics = String((await app.get('/metrics')).body)
    assert.doesNotMatch(metrics, /http_fast_path_answers_total\{route="\/api\/(orders|me)"/)
    const forgot = await app.get('/api/forgot', bearer(users[0]?.token ?? ''))
    assert.deepEqual([forgot.status, forgot.body], [500, { message: 'Internal server error', error: 'Unknown error' }])
    const head = await app.get('/api/orders', { method: 'HEAD', ...bearer(users[0]?.token ?? '') })
    assert.equal(head.status, 200)
    assert.equal((await app.get('/api/orders', { method: 'HEAD' })).status, 401)
  })
})
