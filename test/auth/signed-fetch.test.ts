import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { FastifyPluginAsync } from 'fastify'
import { Type } from 'typebox'
import { optionalUser, signedInUser } from '../../src/auth/plugin.js'
import { loadConfig } from '../../src/config.js'
import { addressOf, highSTwin, hostSignature, sdkSign, signedFetchBody, testKey } from '../../devnode/bastyon-host.js'
import { startApp, type TestApp } from '../helpers/build-app.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { startRedis } from '../helpers/start-redis.js'
import { waitFor } from '../helpers/wait-for.js'
import { APP_ID, bearer, postJson, signIn } from '../helpers/sign-in.js'

const KEY = testKey('a Bastyon user')
const NOW = Date.parse('2026-11-24T10:00:00.000Z')

const NoteBody = Type.Object({ text: Type.String({ maxLength: 200 }) })

/** A route of the app's own for signed-in users, and an optional one; each says what its handler saw. */
const noteRoutes: FastifyPluginAsync = async (app) => {
  app.post<{ Body: { text: string } }>('/notes', { schema: { body: NoteBody }, config: { auth: true } }, async (request) => ({
    message: 'Note saved',
    data: { author: signedInUser(request).address, body: request.body },
  }))
  app.post('/comments', { config: { auth: 'optional' } }, async (request) => ({
    message: 'Comment saved',
    data: { author: optionalUser(request)?.address ?? null, body: request.body ?? null },
  }))
  app.get('/notes', { config: { auth: true } }, async (request) => ({ message: 'Notes', data: { author: signedInUser(request).address } }))
}

async function startNotes (t: { after (fn: () => unknown): void }, options: { now?: () => number, env?: Record<string, string>, node?: string } = {}): Promise<TestApp> {
  return startApp(t, {
    nodes: [options.node ?? (await startEmulator(t)).url],
    now: options.now ?? (() => NOW),
    env: { BASTYON_APP_ID: APP_ID, AUTH_ACCEPT_SIGNED_FETCH: 'true', ...options.env },
    extend: app => app.register(noteRoutes, { prefix: '/api' }),
  })
}

describe('the host\'s signed fetch: a signature of <appId> in the JSON body', () => {
  it('is off by default: a signed body alone is no credential, and an optional route answers it anonymously', async (t) => {
    const service = await startNotes(t, { env: { AUTH_ACCEPT_SIGNED_FETCH: 'false' } })
    const refused = await postJson(service, '/api/notes', signedFetchBody(APP_ID, { text: 'hello' }, { key: KEY, issued: NOW }))
    assert.deepEqual([refused.status, refused.body.code], [401, 'AUTH_MISSING'])
    assert.equal(refused.body.error, 'Send Authorization: Bearer <token> from sign-in')
    const anonymous = await postJson(service, '/api/comments', signedFetchBody(APP_ID, { text: 'hello' }, { key: KEY, issued: NOW }))
    assert.equal(anonymous.body.data.author, null)
  })

  it('accepts a signed fetch once on a route marked auth, and gives the handler the body without its signature', async (t) => {
    const service = await startNotes(t)
    const body = signedFetchBody(APP_ID, { text: 'hello' }, { key: KEY, issued: NOW })
    const first = await postJson(service, '/api/notes', body)
    assert.equal(first.status, 200, JSON.stringify(first.body))
    assert.deepEqual(first.body.data, { author: addressOf(KEY), body: { text: 'hello' } })
    assert.equal(first.headers.get('cache-control'), 'no-store')

    const replayed = await postJson(service, '/api/notes', body)
    assert.deepEqual([replayed.status, replayed.body.message, replayed.body.code], [401, 'Authentication required', 'AUTH_SIGNATURE_REPLAYED'])
    // The same signature with other fields is the same credential, used up.
    assert.equal((await postJson(service, '/api/notes', { ...body, text: 'other' })).body.code, 'AUTH_SIGNATURE_REPLAYED')
    // The next request signs anew.
    assert.equal((await postJson(service, '/api/notes', signedFetchBody(APP_ID, { text: 'again' }, { key: KEY, issued: NOW + 1 }))).status, 200)
  })

  it('refuses an expired signature, another app\'s, another session\'s, and every tampered field of it, each with its code', async (t) => {
    // Each refusal costs a check, as each signature does: enough for all of them at one instant.
    const service = await startNotes(t, { env: { AUTH_SIGNATURE_CHECKS_PER_S: '10000' } })
    const fresh = (issued = NOW) => hostSignature(APP_ID, { key: KEY, issued, exp: 360 })
    const valid = fresh(NOW - 10)
    const otherKey = testKey('someone else')
    const refusals: Array<[string, unknown, string]> = [
      ['past its 360 s and the skew', fresh(NOW - 360_000 - 60_001), 'SIG_EXPIRED'],
      // An account() of the same session says 1280 s: a signed fetch is held to 360.
      ['an account() object past 360 s', hostSignature(APP_ID, { key: KEY, issued: NOW - 421_000, exp: 1280 }), 'SIG_EXPIRED'],
      ['dated in the future', fresh(NOW + 61_000), 'SIG_NOT_YET_VALID'],
      ['for another mini-app', hostSignature('other.pocketnet.app', { key: KEY, issued: NOW }), 'SIG_SESSION_MISMATCH'],
      ['of sdk.sign("auth")', sdkSign('auth', APP_ID, { key: KEY, issued: NOW }), 'SIG_SESSION_MISMATCH'],
      ['a nonce with another date', { ...valid, nonce: valid.nonce.replace('09:59:59.990Z', '09:59:59.991Z') }, 'SIG_BAD_SIGNATURE'],
      ['a nonce with a longer lifetime', { ...valid, nonce: valid.nonce.replace('exp=360', 'exp=361') }, 'SIG_BAD_SIGNATURE'],
      ['a flipped signature byte', { ...valid, signature: `${valid.signature.slice(0, 10)}${valid.signature[10] === '0' ? '1' : '0'}${valid.signature.slice(11)}` }, 'SIG_BAD_SIGNATURE'],
      ['another key\'s address', { ...valid, address: addressOf(otherKey) }, 'SIG_ADDRESS_MISMATCH'],
      ['the high-S twin', highSTwin(valid), 'SIG_HIGH_S'],
      ['without v', { ...valid, v: undefined }, 'SIG_VERSION'],
      ['a field added', { ...valid, user: 'admin' }, 'SIG_MALFORMED'],
      ['a text', 'signed', 'SIG_MALFORMED'],
      ['null', null, 'SIG_MALFORMED'],
    ]
    for (const [what, signature, code] of refusals) {
      const answer = await postJson(service, '/api/notes', { text: 'hello', signature })
      assert.deepEqual([answer.status, answer.body.code], [401, code], what)
      assert.equal(answer.headers.get('www-authenticate'), 'Bearer error="invalid_token"', what)
    }
    // None of the refusals used the valid one up.
    assert.equal((await postJson(service, '/api/notes', { text: 'hello', signature: valid })).status, 200)
  })

  it('answers 401 before reading a body that cannot be a signed fetch, and after parsing one without a signature', async (t) => {
    const service = await startNotes(t)
    const missing = 'Send Authorization: Bearer <token> from sign-in, or a JSON body signed by the host\'s fetch (its "signature")'
    for (const init of [{ method: 'GET' }, { method: 'POST' }, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: 'hello' }]) {
      const path = '/api/notes'
      const answer = await service.get(path, init)
      // No parser takes application/octet-stream here: a 415 would mean the body was looked at first.
      assert.deepEqual([answer.status, answer.body.code, answer.body.error], [401, 'AUTH_MISSING', missing], JSON.stringify(init))
    }
    const unsigned = await postJson(service, '/api/notes', { text: 'hello' })
    assert.deepEqual([unsigned.status, unsigned.body.code, unsigned.body.error], [401, 'AUTH_MISSING', missing])
    const notAnObject = await postJson(service, '/api/notes', [{ signature: hostSignature(APP_ID, { key: KEY, issued: NOW }) }])
    assert.deepEqual([notAnObject.status, notAnObject.body.code], [401, 'AUTH_MISSING'])
    // The credential comes before the route's own validation: a bad body of a signed-in caller is a 400.
    const invalid = await postJson(service, '/api/notes', signedFetchBody(APP_ID, { text: 'x'.repeat(201) }, { key: KEY, issued: NOW }))
    assert.equal(invalid.status, 400, JSON.stringify(invalid.body))
  })

  it('lets a bearer token come first: the body\'s signature is then neither checked nor handed on', async (t) => {
    const service = await startNotes(t)
    const { token } = await signIn(service, { key: KEY, issued: NOW })
    const forged = { ...hostSignature(APP_ID, { key: KEY, issued: NOW }), address: addressOf(testKey('someone else')) }
    const answer = await postJson(service, '/api/notes', { text: 'hello', signature: forged }, bearer(token).headers)
    assert.equal(answer.status, 200, JSON.stringify(answer.body))
    assert.deepEqual(answer.body.data, { author: addressOf(KEY), body: { text: 'hello' } })
    // A bad token is a 401 however good the body's signature.
    const badToken = await postJson(service, '/api/notes', signedFetchBody(APP_ID, { text: 'hello' }, { key: KEY, issued: NOW }), { authorization: 'Bearer nope' })
    assert.equal(badToken.body.code, 'AUTH_MALFORMED')
  })

  it('sets the user on an optional route, answers a caller without one anonymously, and refuses a bad or replayed one', async (t) => {
    const service = await startNotes(t)
    const body = signedFetchBody(APP_ID, { text: 'hello' }, { key: KEY, issued: NOW })
    const signed = await postJson(service, '/api/comments', body)
    assert.deepEqual(signed.body.data, { author: addressOf(KEY), body: { text: 'hello' } })
    assert.equal(signed.headers.get('cache-control'), 'no-store')
    for (const anonymous of [await postJson(service, '/api/comments', { text: 'hello' }), await postJson(service, '/api/comments')]) {
      assert.equal(anonymous.status, 200)
      assert.equal(anonymous.body.data.author, null)
      assert.equal(anonymous.headers.get('cache-control'), 'no-store')
    }
    assert.equal((await postJson(service, '/api/comments', body)).body.code, 'AUTH_SIGNATURE_REPLAYED')
    const forged = { ...hostSignature(APP_ID, { key: KEY, issued: NOW + 1 }), pubkey: `02${'1'.repeat(64)}` }
    assert.equal((await postJson(service, '/api/comments', { text: 'hello', signature: forged })).status, 401)
  })

  it('spends a check of the signature budget on each, and answers 503 past it', async (t) => {
    const service = await startNotes(t, { env: { AUTH_SIGNATURE_CHECKS_PER_S: '1' } })
    assert.equal((await postJson(service, '/api/notes', signedFetchBody(APP_ID, { text: 'a' }, { key: KEY, issued: NOW }))).status, 200)
    const busy = await postJson(service, '/api/notes', signedFetchBody(APP_ID, { text: 'b' }, { key: KEY, issued: NOW + 1 }))
    assert.deepEqual([busy.status, busy.body.message], [503, 'Service unavailable'])
    assert.equal(busy.headers.get('retry-after'), '1')
    // A caller without credentials costs nothing, and is answered.
    assert.equal((await postJson(service, '/api/comments', { text: 'c' })).status, 200)
  })

  it('is single use across instances sharing Redis, and a signature used as a fetch is spent as a Signature header too', async (t) => {
    const [node, redis] = await Promise.all([startEmulator(t), startRedis(t)])
    const env = { REDIS_URL: redis.url, AUTH_ACCEPT_SIGNATURE_HEADER: 'true' }
    const [a, b] = await Promise.all([0, 1].map(() => startNotes(t, { node: node.url, env })))
    assert.ok(a && b)
    await waitFor('both instances to reach Redis', () => a.app.redis?.available === true && b.app.redis?.available === true)
    const first = signedFetchBody(APP_ID, { text: 'hello' }, { key: KEY, issued: NOW })
    assert.equal((await postJson(a, '/api/notes', first)).status, 200)
    assert.equal((await postJson(b, '/api/notes', first)).body.code, 'AUTH_SIGNATURE_REPLAYED')
    assert.equal((await postJson(b, '/api/comments', first)).body.code, 'AUTH_SIGNATURE_REPLAYED')
    assert.equal((await b.get('/api/notes', { headers: { signature: JSON.stringify(first.signature) } })).body.code, 'AUTH_SIGNATURE_REPLAYED')
    // The other way round, racing: of two instances given one signature at once, one accepts it.
    const second = signedFetchBody(APP_ID, { text: 'race' }, { key: KEY, issued: NOW + 1 })
    const raced = await Promise.all([postJson(a, '/api/notes', second), postJson(b, '/api/notes', second)])
    assert.deepEqual(raced.map(answer => answer.status).sort(), [200, 401])
    // Redis frozen: refused with 503, never accepted on a guess.
    redis.pause()
    t.after(() => redis.resume())
    const frozen = await postJson(b, '/api/notes', signedFetchBody(APP_ID, { text: 'frozen' }, { key: KEY, issued: NOW + 2 }))
    assert.deepEqual([frozen.status, frozen.headers.get('retry-after')], [503, '1'])
  })

  it('needs BASTYON_APP_ID', () => {
    assert.throws(() => loadConfig({ AUTH_ACCEPT_SIGNED_FETCH: 'true' }), /AUTH_ACCEPT_SIGNED_FETCH needs BASTYON_APP_ID/)
  })
})
