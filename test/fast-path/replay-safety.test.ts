import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { FastifyInstance, FastifyPluginAsync, onSendHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { Type } from 'typebox'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { mirroredByReplay } from '../../src/fast-path/hook-ledger.js'
import { Address } from '../../src/schemas/common.js'
import { startApp, type TestApp } from '../helpers/build-app.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { generateDataset } from '../../devnode/data/generate.js'
import { signedInUser } from '../../src/auth/plugin.js'
import { testKey } from '../../devnode/bastyon-host.js'
import { APP_ID, bearer, giveAccount, signIn } from '../helpers/sign-in.js'

async function fastAnswers (service: TestApp): Promise<number> {
  // In process: GET /metrics serves one scrape for a second, and counts in the rate limit.
  const body = await service.app.metrics.registry.metrics()
  return body.split('\n')
    .filter(row => row.startsWith('http_fast_path_answers_total'))
    .reduce((sum, row) => sum + Number(row.split(' ').at(-1)), 0)
}

/** An app with `extend` applied, started the way server.ts starts it: resolves, or rejects with why. */
async function startWith (t: { after (fn: () => unknown): void }, extend: (app: FastifyInstance) => unknown): Promise<FastifyInstance> {
  const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', POCKETNET_NODES: 'http://127.0.0.1:9', BASTYON_APP_ID: APP_ID }))
  t.after(() => app.close())
  await extend(app)
  await app.listen({ port: 0, host: '127.0.0.1' })
  return app
}

const SubscriptionsSchema = { response: { 200: Type.Object({ message: Type.String(), data: Type.Object({ address: Address, subscriptions: Type.Array(Type.Unknown()) }) }) } }

/** A route as docs/adding-a-route.md shows it, whose answer depends on the caller. */
const subscriptionsRoute: FastifyPluginAsync = async (app) => {
  // docs:per-user-route:start
  app.get('/me/subscriptions', {
    schema: SubscriptionsSchema,
    // Signed-in callers only. No replay: the URL is the same for every caller, the answer is not.
    config: { auth: true, failureMessage: 'Failed to retrieve your subscriptions' },
  }, async (request) => {
    const { address } = signedInUser(request)
    const api = await app.pocketnet.get()
    const profiles = await api.rpc.getuserprofile({ address, shortForm: 'full' })
    const subscriptions = profiles.find(candidate => candidate.address === address)?.subscribes
    return { message: 'Subscriptions retrieved successfully', data: { address, subscriptions: Array.isArray(subscriptions) ? subscriptions : [] } }
  })
  // docs:per-user-route:end
}

const NOW = Date.parse('2026-11-24T10:00:00.000Z')

describe('replay is safe by construction', () => {
  it('never replays a route that did not ask for it: each caller of a per-user route gets their own answer', async (t) => {
    const dataset = generateDataset({ users: 60 })
    const keys = [testKey('first caller'), testKey('second caller')]
    const users = keys.map(key => giveAccount(dataset, key))
    const node = await startEmulator(t, { dataset })
    const service = await startApp(t, {
      nodes: [node.url],
      now: () => NOW,
      env: { BASTYON_APP_ID: APP_ID },
      extend: app => app.register(subscriptionsRoute, { prefix: '/api' }),
    })
    const tokens = await Promise.all(keys.map(async key => (await signIn(service, { key, issued: NOW })).token))
    assert.notEqual(users[0]?.subscribes.length, users[1]?.subscribes.length, 'the two answers differ')
    for (let i = 0; i < 4; i++) {
      for (const [index, user] of users.entries()) {
        const { status, body } = await service.get('/api/me/subscriptions', bearer(tokens[index] ?? ''))
        assert.equal(status, 200)
        assert.equal(body.data.address, user.address)
        assert.equal(body.data.subscriptions.length, user.subscribes.length)
      }
      assert.equal((await service.get('/api/me/subscriptions')).status, 401)
    }
    assert.equal(await fastAnswers(service), 0)
    // The same service replays a route that asks for it.
    for (let i = 0; i < 3; i++) assert.equal((await service.get('/api/nodeinfo')).status, 200)
    assert.equal(await fastAnswers(service), 1)
  })

  it('refuses at start-up a replay route with a hook of its own', async (t) => {
    await assert.rejects(startWith(t, app => {
      app.get('/api/mine', {
        config: { replay: true },
        onRequest: async function authenticate () {},
      }, async () => ({ message: 'ok', data: {} }))
    }), { message: /GET \/api\/mine asks for replay, but a replayed answer would skip its onRequest hook "authenticate"/ })
  })

  it('refuses at start-up a replay route under a hook of its plugin, or of the root', async (t) => {
    const scoped: FastifyPluginAsync = async (api) => {
      api.addHook('preHandler', async function checkTenant () {})
      api.get('/scoped', { config: { replay: true } }, async () => ({ message: 'ok', data: {} }))
    }
    await assert.rejects(startWith(t, app => app.register(scoped, { prefix: '/api' })), { message: /GET \/api\/scoped .* preHandler hook "checkTenant"/ })
    const global = fp(async (app) => {
      app.addHook('onSend', async function stampUser () {})
    })
    await assert.rejects(startWith(t, app => app.register(global)), { message: /GET \/api\/nodeinfo asks for replay, but a replayed answer would skip its onSend hook "stampUser"/ })
    // Limits of its own come with @fastify/rate-limit's own hook, which the fast path does not count in.
    await assert.rejects(startWith(t, app => {
      app.get('/api/scarce', { config: { replay: true, rateLimit: { max: 1, timeWindow: 60_000 } } }, async () => ({ message: 'ok', data: {} }))
    }), { message: /GET \/api\/scarce asks for replay, but a replayed answer would skip its onRequest hook/ })
    // A hook in a sibling context does not run on the route: no refusal.
    const sibling: FastifyPluginAsync = async (other) => { other.addHook('onRequest', async function elsewhere () {}) }
    await startWith(t, app => app.register(sibling))
  })

  it('refuses replay on a route marked auth (true or optional), or on anything but GET', async (t) => {
    await assert.rejects(startWith(t, app => {
      app.get('/api/me', { config: { replay: true, auth: true } }, async () => ({ message: 'ok', data: {} }))
    }), { message: /GET \/api\/me: a route marked auth answers per user and must never be replayed/ })
    // An optional route answers a signed-in caller their own answer at the same URL.
    await assert.rejects(startWith(t, app => {
      app.get('/api/article', { config: { replay: true, auth: 'optional' } }, async () => ({ message: 'ok', data: {} }))
    }), { message: /GET \/api\/article: a route marked auth answers per user and must never be replayed/ })
    await assert.rejects(startWith(t, app => {
      app.post('/api/note', { config: { replay: true } }, async () => ({ message: 'ok', data: {} }))
    }), { message: /POST \/api\/note: replay is for GET routes only/ })
  })

  it('never replays a header set per request, even by a hook marked as mirrored', async (t) => {
    const node = await startEmulator(t)
    let served = 0
    // A hook that claims the fast path reproduces it, and does not: the allow-list still holds.
    const stamp = mirroredByReplay<onSendHookHandler>(function stamp (_request, reply, payload, done) {
      reply.header('x-served', String(++served))
      done(null, payload)
    })
    const service = await startApp(t, { nodes: [node.url], extend: app => app.addHook('onSend', stamp) })
    const stamps = []
    for (let i = 0; i < 5; i++) stamps.push((await service.get('/api/search?keyword=bitcoin')).headers.get('x-served'))
    assert.deepEqual(stamps, ['1', '2', '3', '4', '5'])
    assert.equal(await fastAnswers(service), 0)
  })

  it('never replays an answer with a cookie', async (t) => {
    const node = await startEmulator(t)
    const cookie = mirroredByReplay<onSendHookHandler>(function cookie (_request, reply, payload, done) {
      reply.header('set-cookie', 'session=abc')
      done(null, payload)
    })
    const service = await startApp(t, { nodes: [node.url], extend: app => app.addHook('onSend', cookie) })
    for (let i = 0; i < 4; i++) assert.equal((await service.get('/api/nodeinfo')).headers.get('set-cookie'), 'session=abc')
    assert.equal(await fastAnswers(service), 0)
  })
})
