import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { startApp, type TestApp } from '../helpers/build-app.js'
import { addressOf, hostSignature, sdkSign, testKey } from '../../devnode/bastyon-host.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { startRedis } from '../helpers/start-redis.js'
import { waitFor } from '../helpers/wait-for.js'
import { APP_ID, bearer, newChallenge, postJson, signIn } from '../helpers/sign-in.js'

const KEY = testKey('a Bastyon user')
const NOW = Date.parse('2026-11-24T10:00:00.000Z')

describe('sign-in across instances sharing Redis', () => {
  it('accepts on B a challenge or a token A issued, and a revocation or a used challenge holds on both', async (t) => {
    const [node, redis] = await Promise.all([startEmulator(t), startRedis(t)])
    const env = { BASTYON_APP_ID: APP_ID, AUTH_ACCEPT_SIGNATURE_HEADER: 'true', REDIS_URL: redis.url, AUTH_RATE_LIMIT_MAX: '1000' }
    const [a, b]: TestApp[] = await Promise.all([0, 1].map(() => startApp(t, { nodes: [node.url], now: () => NOW, env })))
    await waitFor('both instances to reach Redis', () => a?.app.redis?.available === true && b?.app.redis?.available === true)
    assert.ok(a && b)

    // Challenge from A, session opened on B; the token works on A.
    const challenge = await newChallenge(a)
    const signature = sdkSign(challenge, APP_ID, { key: KEY, issued: NOW })
    const opened = await postJson(b, '/api/auth/session', { signature })
    assert.equal(opened.status, 200, JSON.stringify(opened.body))
    const { token } = opened.body.data
    assert.equal((await a.get('/api/me', bearer(token))).body.data.address, addressOf(KEY))
    // The challenge is used up for A too.
    assert.equal((await postJson(a, '/api/auth/session', { signature })).body.code, 'AUTH_CHALLENGE_UNKNOWN')

    // Signed out on A: refused on B.
    assert.equal((await a.get('/api/auth/session', { method: 'DELETE', ...bearer(token) })).status, 200)
    assert.equal((await b.get('/api/me', bearer(token))).body.code, 'AUTH_TOKEN_INVALID')

    // A Signature header accepted by A is a replay on B.
    const header = { headers: { signature: JSON.stringify(hostSignature(APP_ID, { key: KEY, issued: NOW, exp: 1280 })) } }
    assert.equal((await a.get('/api/me', header)).status, 200)
    assert.equal((await b.get('/api/me', header)).body.code, 'AUTH_SIGNATURE_REPLAYED')

    // Redis frozen: sign-in and protected routes answer 503 with Retry-After, never a guess; the rest serves.
    const kept = await signIn(a, { key: KEY, issued: NOW })
    redis.pause()
    t.after(() => redis.resume())
    for (const answer of [await postJson(a, '/api/auth/challenge'), await b.get('/api/me', bearer(kept.token))]) {
      assert.equal(answer.status, 503, JSON.stringify(answer.body))
      assert.equal(answer.body.message, 'Service unavailable')
      assert.equal(answer.headers.get('retry-after'), '1')
    }
    assert.equal((await a.get('/api/nodeinfo')).status, 200)
    redis.resume()
    await waitFor('Redis to answer again', () => b.app.redis?.available === true)
    assert.equal((await b.get('/api/me', bearer(kept.token))).status, 200)
  })
})
