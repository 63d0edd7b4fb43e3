import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import { buildApp } from '../../src/app.js'
import { optionalUser, signedInUser } from '../../src/auth/plugin.js'
import { loadConfig } from '../../src/config.js'
import { addressOf, hostSignature, testKey } from '../../devnode/bastyon-host.js'
import { startApp, type TestApp } from '../helpers/build-app.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { APP_ID, bearer, signIn } from '../helpers/sign-in.js'

const NOW = Date.parse('2026-11-24T10:00:00.000Z')
const READER = testKey('a reader')
const OTHER_READER = testKey('another reader')

/** One URL for everyone: a teaser for anonymous readers, the whole article for a signed-in one. */
const articleRoutes: FastifyPluginAsync = async (app) => {
  // docs:optional-route:start
  app.get<{ Params: { id: string } }>('/articles/:id', {
    // Anyone may read; a signed-in reader gets the whole text. No replay: the answer depends on the caller.
    config: { auth: 'optional', maxAgeMs: 60_000 },
  }, async (request) => {
    const reader = optionalUser(request) // null for a reader who sent no credentials
    const text = reader === null ? 'The first paragraph…' : `The whole article, for ${reader.address}`
    return { message: 'Article retrieved successfully', data: { id: request.params.id, reader: reader?.address ?? null, text } }
  })
  // docs:optional-route:end
  // Anyone may read the likes; liking needs a signed-in reader.
  app.post('/articles/:id/likes', { config: { auth: 'optional' } }, async (request) => {
    const { address } = signedInUser(request)
    return { message: 'Liked', data: { address } }
  })
  app.get('/articles/:id/private', { config: { auth: true } }, async (request) => ({ message: 'Yours', data: { address: signedInUser(request).address } }))
  // A mistake: reading the caller on a route without the mark.
  app.get('/unmarked', async (request) => ({ message: 'Never', data: { reader: optionalUser(request) } }))
}

async function startArticles (t: { after (fn: () => unknown): void }, env: Record<string, string> = {}): Promise<TestApp> {
  return startApp(t, {
    nodes: [(await startEmulator(t)).url],
    now: () => NOW,
    env: { BASTYON_APP_ID: APP_ID, ...env },
    extend: app => app.register(articleRoutes, { prefix: '/api' }),
  })
}

async function fastAnswers (service: TestApp): Promise<number> {
  const body = await service.app.metrics.registry.metrics()
  return body.split('\n')
    .filter(row => row.startsWith('http_fast_path_answers_total'))
    .reduce((sum, row) => sum + Number(row.split(' ').at(-1)), 0)
}

const varyOf = (headers: Headers): string[] => (headers.get('vary') ?? '').split(',').map(name => name.trim().toLowerCase())

describe('auth: \'optional\'', () => {
  it('answers an anonymous reader and each signed-in reader their own answer to one URL, and lets no cache share a signed-in one', async (t) => {
    const service = await startArticles(t)
    const readers = await Promise.all([READER, OTHER_READER].map(async key => ({ address: addressOf(key), token: (await signIn(service, { key, issued: NOW })).token })))
    let anonymousEtag = ''
    for (let round = 0; round < 4; round++) {
      const anonymous = await service.get('/api/articles/a1')
      assert.equal(anonymous.status, 200)
      assert.deepEqual(anonymous.body.data, { id: 'a1', reader: null, text: 'The first paragraph…' })
      // The same for every anonymous reader: public, but keyed on the credentials.
      assert.equal(anonymous.headers.get('cache-control'), 'public, max-age=60, stale-while-revalidate=60')
      assert.ok(varyOf(anonymous.headers).includes('authorization'), anonymous.headers.get('vary') ?? 'no Vary')
      anonymousEtag = anonymous.headers.get('etag') ?? ''
      assert.notEqual(anonymousEtag, '')
      for (const { address, token } of readers) {
        const signedIn = await service.get('/api/articles/a1', bearer(token))
        assert.equal(signedIn.status, 200)
        assert.deepEqual(signedIn.body.data, { id: 'a1', reader: address, text: `The whole article, for ${address}` })
        assert.equal(signedIn.headers.get('cache-control'), 'no-store')
        assert.ok(varyOf(signedIn.headers).includes('authorization'))
        assert.equal(signedIn.headers.get('etag'), null, 'nothing to revalidate: nothing may be kept')
      }
    }
    // A cache revalidating the anonymous answer gets its 304; a signed-in reader with the same
    // ETag gets their own answer, never a 304 that would stand for the teaser.
    assert.equal((await service.get('/api/articles/a1', { headers: { 'if-none-match': anonymousEtag } })).status, 304)
    const revalidated = await service.get('/api/articles/a1', { headers: { 'if-none-match': anonymousEtag, ...bearer(readers[0]?.token ?? '').headers } })
    assert.equal(revalidated.status, 200)
    assert.equal(revalidated.body.data.reader, readers[0]?.address)
    assert.equal(await fastAnswers(service), 0, 'the fast path answered none of them')
  })

  it('refuses credentials that came and do not hold, with the codes auth: true gives', async (t) => {
    const service = await startArticles(t)
    const { token } = await signIn(service, { key: READER, issued: NOW })
    assert.equal((await service.get('/api/auth/session', { method: 'DELETE', ...bearer(token) })).status, 200)
    const sent: Array<[Record<string, string>, string]> = [
      [{ authorization: 'Basic cmVhZGVyOnNlY3JldA==' }, 'AUTH_MALFORMED'],
      [{ authorization: 'Bearer short' }, 'AUTH_MALFORMED'],
      [{ authorization: '' }, 'AUTH_MALFORMED'],
      [{ authorization: `Bearer ${'A'.repeat(43)}` }, 'AUTH_TOKEN_INVALID'],
      [{ authorization: `Bearer ${token}` }, 'AUTH_TOKEN_INVALID'],
    ]
    for (const [headers, code] of sent) {
      for (const path of ['/api/articles/a1', '/api/articles/a1/private']) {
        const answer = await service.get(path, { headers })
        assert.deepEqual([answer.status, answer.body.message, answer.body.code], [401, 'Authentication required', code], `${path} ${JSON.stringify(headers)}`)
        assert.equal(answer.headers.get('www-authenticate'), 'Bearer error="invalid_token"')
        assert.equal(answer.headers.get('cache-control'), 'no-store')
      }
    }
    // Without credentials, the two marks part ways.
    assert.equal((await service.get('/api/articles/a1')).status, 200)
    assert.equal((await service.get('/api/articles/a1/private')).body.code, 'AUTH_MISSING')
    // A Signature header is no credential unless compatibility mode is on: the caller is anonymous.
    const header = { headers: { signature: JSON.stringify(hostSignature(APP_ID, { key: READER, issued: NOW, exp: 1280 })) } }
    assert.equal((await service.get('/api/articles/a1', header)).body.data.reader, null)
  })

  it('checks a Signature header on an optional route in compatibility mode, and names Signature in Vary', async (t) => {
    const service = await startArticles(t, { AUTH_ACCEPT_SIGNATURE_HEADER: 'true' })
    const object = hostSignature(APP_ID, { key: READER, issued: NOW, exp: 1280 })
    const first = await service.get('/api/articles/a1', { headers: { signature: JSON.stringify(object) } })
    assert.equal(first.body.data.reader, addressOf(READER))
    const replayed = await service.get('/api/articles/a1', { headers: { signature: JSON.stringify(object) } })
    assert.deepEqual([replayed.status, replayed.body.code], [401, 'AUTH_SIGNATURE_REPLAYED'])
    const anonymous = await service.get('/api/articles/a1')
    assert.deepEqual(varyOf(anonymous.headers).filter(name => name === 'authorization' || name === 'signature'), ['authorization', 'signature'])
  })

  it('answers 401 AUTH_MISSING where an anonymous caller reaches signedInUser, and 500 where optionalUser reads an unmarked route', async (t) => {
    const service = await startArticles(t)
    const like = await service.get('/api/articles/a1/likes', { method: 'POST' })
    assert.deepEqual([like.status, like.body.message, like.body.code], [401, 'Authentication required', 'AUTH_MISSING'])
    assert.equal(like.headers.get('www-authenticate'), 'Bearer')
    const { token } = await signIn(service, { key: READER, issued: NOW })
    assert.deepEqual((await service.get('/api/articles/a1/likes', { method: 'POST', ...bearer(token) })).body.data, { address: addressOf(READER) })
    const unmarked = await service.get('/api/unmarked', bearer(token))
    assert.deepEqual([unmarked.status, unmarked.body.message], [500, 'Internal server error'])
  })

  it('stops the start when sign-in is off, or when auth is neither true, false nor \'optional\'', async (t) => {
    const start = async (env: Record<string, string>, extend: (app: FastifyInstance) => unknown): Promise<void> => {
      const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', POCKETNET_NODES: 'http://127.0.0.1:9', ...env }))
      t.after(() => app.close())
      await extend(app)
      await app.ready()
    }
    await assert.rejects(start({}, app => app.get('/api/teaser', { config: { auth: 'optional' } }, async () => ({}))),
      { message: /GET \/api\/teaser may have a signed-in user \(config.auth\), but sign-in is off: set BASTYON_APP_ID/ })
    await assert.rejects(start({ BASTYON_APP_ID: APP_ID }, app => app.get('/api/teaser', { config: { auth: 'yes' as unknown as 'optional' } }, async () => ({}))),
      { message: /GET \/api\/teaser: config.auth must be true, 'optional' or false \(got "yes"\)/ })
    await start({ BASTYON_APP_ID: APP_ID }, app => app.get('/api/open', { config: { auth: false } }, async () => ({})))
  })
})
