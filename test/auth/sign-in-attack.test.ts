/**
 * Sign-in under attack (issue #24): a refused signature uses its challenge up, the check budget is
 * shared by client and network before the process's, both sign-in steps count in one rate limit,
 * and a session spelled with a look-alike letter is refused. The clients are told apart by
 * X-Forwarded-For from a trusted proxy (TRUST_PROXY=127.0.0.1); the clock is the test's own.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { addressOf, hostSignature, sdkSign, testKey, type SignatureObject } from '../../devnode/bastyon-host.js'
import { startApp, type TestApp } from '../helpers/build-app.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { startRedis } from '../helpers/start-redis.js'
import { waitFor } from '../helpers/wait-for.js'
import { APP_ID, postJson, type Answer } from '../helpers/sign-in.js'

type WithAfter = { after (fn: () => unknown): void }

const USER_KEY = testKey('a Bastyon user')
const ATTACKER_KEY = testKey('an attacker')
const START = Date.parse('2026-11-24T10:00:00.000Z')

interface Clock { now: () => number, advance (ms: number): void }

function testClock (): Clock {
  let at = START
  return { now: () => at, advance (ms) { at += ms } }
}

async function service (t: WithAfter, clock: Clock, env: Record<string, string>): Promise<TestApp> {
  const node = await startEmulator(t)
  return startApp(t, { nodes: [node.url], now: clock.now, env: { BASTYON_APP_ID: APP_ID, TRUST_PROXY: '127.0.0.1', AUTH_RATE_LIMIT_MAX: '1000', ...env } })
}

const from = (client: string): Record<string, string> => ({ 'x-forwarded-for': client })

async function challengeFor (app: TestApp, client: string): Promise<string> {
  const answer = await postJson(app, '/api/auth/challenge', undefined, from(client))
  assert.equal(answer.status, 200, JSON.stringify(answer.body))
  return answer.body.data.challenge
}

const session = (app: TestApp, client: string, signature: unknown): Promise<Answer> => postJson(app, '/api/auth/session', { signature }, from(client))

/** A well-formed signature for `challenge` whose curve check runs and fails: its nonce was edited after signing. */
function forged (challenge: string, clock: Clock): SignatureObject {
  const signature = sdkSign(challenge, APP_ID, { key: ATTACKER_KEY, issued: clock.now() })
  return { ...signature, nonce: signature.nonce.replace('exp=360', 'exp=300') }
}

const genuine = (challenge: string, clock: Clock): SignatureObject => sdkSign(challenge, APP_ID, { key: USER_KEY, issued: clock.now() })

/** A genuine user's whole sign-in from `client`: a challenge of its own, signed. */
async function signInFrom (app: TestApp, client: string, clock: Clock): Promise<Answer> {
  return session(app, client, genuine(await challengeFor(app, client), clock))
}

const codes = (answers: Answer[]): Record<string, number> => {
  const counted: Record<string, number> = {}
  for (const { status, body } of answers) {
    const key = `${status} ${body.code ?? body.message}`
    counted[key] = (counted[key] ?? 0) + 1
  }
  return counted
}

describe('sign-in under attack (issue #24)', () => {
  it('uses a challenge up with the first signature presented for it, refused or not', async (t) => {
    const clock = testClock()
    const app = await service(t, clock, { AUTH_SIGNATURE_CHECKS_PER_S: '1000' })
    const client = '198.51.100.7'
    const challenge = await challengeFor(app, client)
    assert.equal((await session(app, client, forged(challenge, clock))).body.code, 'SIG_BAD_SIGNATURE')
    // The same forgery again is not checked again, and the challenge is gone for a genuine signature too.
    assert.equal((await session(app, client, forged(challenge, clock))).body.code, 'AUTH_CHALLENGE_UNKNOWN')
    assert.equal((await session(app, client, genuine(challenge, clock))).body.code, 'AUTH_CHALLENGE_UNKNOWN')
    // So does a refusal that needs no curve arithmetic.
    const another = await challengeFor(app, client)
    const expired = sdkSign(another, APP_ID, { key: USER_KEY, issued: clock.now() - 600_000 })
    assert.equal((await session(app, client, expired)).body.code, 'SIG_EXPIRED')
    assert.equal((await session(app, client, genuine(another, clock))).body.code, 'AUTH_CHALLENGE_UNKNOWN')
    // Forgeries racing for one challenge get one check between them.
    const raced = await challengeFor(app, client)
    const answers = await Promise.all(Array.from({ length: 10 }, () => session(app, client, forged(raced, clock))))
    assert.deepEqual(codes(answers), { '401 SIG_BAD_SIGNATURE': 1, '401 AUTH_CHALLENGE_UNKNOWN': 9 })
    // A fresh challenge signs in.
    const signedIn = await signInFrom(app, client, clock)
    assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body))
  })

  it('keeps a genuine user\'s sign-in answered through a forged-signature flood from many /64s', async (t) => {
    const clock = testClock()
    // 20 checks a second: a client gets 1, a network (/24, /48) 2.
    const app = await service(t, clock, { AUTH_SIGNATURE_CHECKS_PER_S: '20' })
    const attackers = Array.from({ length: 200 }, (_, i) => `2001:db8:7:${(i + 1).toString(16)}::1`)
    const challenges = await Promise.all(attackers.map(client => challengeFor(app, client)))
    const flood = await Promise.all(attackers.map((client, i) => session(app, client, forged(challenges[i] as string, clock))))
    assert.deepEqual(codes(flood), { '401 SIG_BAD_SIGNATURE': 2, '503 Service unavailable': 198 })
    const busy = flood.find(answer => answer.status === 503) as Answer
    assert.equal(busy.headers.get('retry-after'), '1')
    assert.match(busy.body.error, /busy for this client's network/)

    // Users of other networks sign in at once, over IPv4 and IPv6, with the clock standing still.
    for (const user of ['198.51.100.7', '2001:db8:9:1::5']) {
      const answer = await signInFrom(app, user, clock)
      assert.equal(answer.status, 200, `${user}: ${JSON.stringify(answer.body)}`)
      assert.equal(answer.body.data.address, addressOf(USER_KEY))
    }
  })

  it('holds a flood from many networks to the process\'s budget, and a client to its own share first', async (t) => {
    const clock = testClock()
    const app = await service(t, clock, { AUTH_SIGNATURE_CHECKS_PER_S: '20' })
    // One client: its share is one check a second, whatever its network has left.
    const client = '203.0.113.9'
    assert.equal((await session(app, client, forged(await challengeFor(app, client), clock))).body.code, 'SIG_BAD_SIGNATURE')
    const challenge = await challengeFor(app, client)
    const signature = genuine(challenge, clock)
    const refused = await session(app, client, signature)
    assert.deepEqual([refused.status, refused.headers.get('retry-after')], [503, '1'])
    assert.match(refused.body.error, /busy for this client:/)
    // Nothing was checked, so the challenge stays: the same signature signs in once the second has passed.
    clock.advance(1000)
    assert.equal((await session(app, client, signature)).status, 200)

    // Thirty networks, one forgery each: the process checks 20 a second, no more.
    const spread = Array.from({ length: 30 }, (_, i) => `10.${i + 1}.0.1`)
    const challenges = await Promise.all(spread.map(attacker => challengeFor(app, attacker)))
    const flood = await Promise.all(spread.map((attacker, i) => session(app, attacker, forged(challenges[i] as string, clock))))
    // The second began with the genuine sign-in above: 19 checks left.
    assert.deepEqual(codes(flood), { '401 SIG_BAD_SIGNATURE': 19, '503 Service unavailable': 11 })
    assert.match((flood.find(answer => answer.status === 503) as Answer).body.error, /^Sign-in is busy: more signatures arrived than this server checks per second/)
    // That many networks at once are more than the budget tells apart from users: the next second serves them.
    assert.equal((await signInFrom(app, '198.51.100.7', clock)).status, 503)
    clock.advance(1000)
    assert.equal((await signInFrom(app, '198.51.100.7', clock)).status, 200)
  })

  it('refuses a session whose app id has a look-alike letter, before any check and without using the challenge', async (t) => {
    const clock = testClock()
    const app = await service(t, clock, { AUTH_SIGNATURE_CHECKS_PER_S: '1', AUTH_ACCEPT_SIGNATURE_HEADER: 'true' })
    const client = '198.51.100.7'
    const challenge = await challengeFor(app, client)
    // Cyrillic о (U+043E) for the Latin o.
    const lookAlike = await session(app, client, sdkSign(challenge, 'dem\u043e.pocketnet.app', { key: USER_KEY, issued: clock.now() }))
    assert.deepEqual([lookAlike.status, lookAlike.body.message, lookAlike.body.code], [401, 'Sign-in failed', 'SIG_SESSION_NOT_ASCII'])
    // The one check a second is still there, and so is the challenge.
    assert.equal((await session(app, client, genuine(challenge, clock))).status, 200)
    // A Signature header spelled so is refused with the same code.
    clock.advance(1000)
    const header = await app.get('/api/me', { headers: { ...from(client), signature: JSON.stringify(hostSignature('dem\u043e.pocketnet.app', { key: USER_KEY, issued: clock.now(), exp: 1280 })) } })
    assert.deepEqual([header.status, header.body.code], [401, 'SIG_SESSION_NOT_ASCII'])
  })
})

describe('the sign-in rate limit (issue #24)', () => {
  const steps = async (app: TestApp, client: string, clock: Clock): Promise<Array<[number, string | null]>> => {
    const answers: Answer[] = []
    const first = await postJson(app, '/api/auth/challenge', undefined, from(client))
    answers.push(first)
    answers.push(await postJson(app, '/api/auth/challenge', undefined, from(client)))
    answers.push(await session(app, client, genuine(first.body.data.challenge, clock)))
    answers.push(await postJson(app, '/api/auth/challenge', undefined, from(client)))
    answers.push(await session(app, client, genuine(first.body.data.challenge, clock)))
    return answers.map(answer => [answer.status, answer.headers.get('x-ratelimit-remaining')])
  }

  it('counts both steps together: AUTH_RATE_LIMIT_MAX sign-in requests in all, apart from the API\'s', async (t) => {
    const clock = testClock()
    const app = await service(t, clock, { AUTH_RATE_LIMIT_MAX: '3' })
    assert.deepEqual(await steps(app, '198.51.100.7', clock), [[200, '2'], [200, '1'], [200, '0'], [429, '0'], [429, '0']])
    // Another client has its own count, and the API's limit is apart.
    assert.equal((await postJson(app, '/api/auth/challenge', undefined, from('198.51.100.8'))).status, 200)
    assert.equal((await app.get('/api/nodeinfo', { headers: from('198.51.100.7') })).status, 200)
  })

  it('counts both steps together in Redis too, across instances', async (t) => {
    const clock = testClock()
    const redis = await startRedis(t)
    const env = { AUTH_RATE_LIMIT_MAX: '3', REDIS_URL: redis.url }
    const [a, b] = [await service(t, clock, env), await service(t, clock, env)] as [TestApp, TestApp]
    await waitFor('both instances to reach Redis', () => a.app.redis?.available === true && b.app.redis?.available === true)
    const client = '198.51.100.7'
    const first = await postJson(a, '/api/auth/challenge', undefined, from(client))
    assert.equal((await postJson(b, '/api/auth/challenge', undefined, from(client))).status, 200)
    assert.equal((await session(a, client, genuine(first.body.data.challenge, clock))).status, 200)
    assert.equal((await postJson(b, '/api/auth/challenge', undefined, from(client))).status, 429)
    assert.equal((await session(a, client, genuine(first.body.data.challenge, clock))).status, 429)
  })
})
