/**
 * bastyon-miniapp-server in a mini-app developer's own Fastify app, through what the package
 * exports: a plain `Fastify()` with none of the service's server options, the plugin registered
 * with settings in code over the environment, the capabilities on the developer's instance, and
 * the developer's own routes beside the API's, in its envelope.
 */
import assert from 'node:assert/strict'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import fastifyStatic from '@fastify/static'
import Fastify, { type FastifyInstance } from 'fastify'
import { ConfigError, miniApp, type MiniAppOptions } from 'bastyon-miniapp-server'
import { addressOf, testKey } from '../../devnode/bastyon-host.js'
import type { Emulator } from '../../devnode/server.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { freshDataDir } from '../payments/databases.js'

type WithAfter = { after (fn: () => unknown): void }

const RECEIVER = addressOf(testKey('miniapp-server receiver'))

async function developersApp (t: WithAfter, options: MiniAppOptions, routes?: (app: FastifyInstance) => void, logLines?: string[]): Promise<{ app: FastifyInstance, url: string, node: Emulator }> {
  const node = await startEmulator(t)
  const app = logLines === undefined ? Fastify() : Fastify({ logger: { level: 'warn', stream: { write: (line: string) => { logLines.push(line) } } } })
  t.after(() => app.close())
  await app.register(miniApp, { pocketnetNodes: node.url, env: {}, ...options })
  routes?.(app)
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, url: `http://127.0.0.1:${(app.server.address() as { port: number }).port}`, node }
}

async function get (url: string, init?: RequestInit): Promise<{ status: number, body: any, headers: Headers }> {
  const response = await fetch(url, init)
  return { status: response.status, body: await response.json(), headers: response.headers }
}

describe('the miniApp plugin in a developer\'s Fastify app', () => {
  it('serves the API, checks addresses of the configured network without the service\'s server options, and answers unknown URLs in the envelope', async (t) => {
    const { url, node } = await developersApp(t, {})
    const info = await get(`${url}/api/nodeinfo`)
    assert.equal(info.status, 200)
    assert.equal(info.body.data.version, '0.22.7')
    assert.equal(typeof info.body.message, 'string')

    const user = node.dataset.users[0]!
    assert.equal((await get(`${url}/api/user/${user.address}`)).status, 200)
    // A well-formed testnet address is no address of the main network: refused by the route's
    // schema, whose format a Fastify made without the service's options would not know.
    const testnetAddress = await get(`${url}/api/user/${addressOf(testKey('miniapp-server user'), 0x41)}`)
    assert.equal(testnetAddress.status, 400)
    assert.equal(typeof testnetAddress.body.error, 'string')
    assert.match(testnetAddress.body.message, /address/i)

    const unknown = await get(`${url}/api/nothing-here`)
    assert.equal(unknown.status, 404)
    assert.equal(typeof unknown.body.message, 'string')
    assert.equal((await get(`${url}/healthz`)).status, 200)
  })

  it('gives the developer\'s routes app.payments and app.events, and their errors the envelope', async (t) => {
    const dataDir = await freshDataDir()
    t.after(() => rmSync(dataDir, { recursive: true, force: true }))
    const { url, app } = await developersApp(t, { paymentAddress: RECEIVER, paymentConfirmNodes: 1, dataDir }, (app) => {
      app.post('/api/articles/:id/invoice', async (request) => {
        const invoice = await app.payments!.createInvoice({ amount: 50_000_000, metadata: { article: (request.params as { id: string }).id } })
        return { message: 'Invoice created', data: invoice }
      })
      app.get('/api/broken', async () => { throw new Error('a secret detail') })
    })
    const created = await get(`${url}/api/articles/a1/invoice`, { method: 'POST' })
    assert.equal(created.status, 200)
    assert.equal(created.body.data.amount, 50_000_000)
    assert.equal(created.body.data.state, 'pending')
    assert.deepEqual(created.body.data.hostRequest.recievers, [{ address: RECEIVER, amount: 0.5 }])
    const read = await get(`${url}/api/payments/invoices/${created.body.data.id as string}`)
    assert.equal(read.body.data.id, created.body.data.id)

    assert.equal(typeof app.events.lastId, 'string')
    const broken = await get(`${url}/api/broken`)
    assert.equal(broken.status, 500)
    assert.doesNotMatch(JSON.stringify(broken.body), /secret/)
    assert.equal(typeof broken.body.message, 'string')
  })

  it('takes a setting from code over the environment, and the environment over the default', async (t) => {
    const { app, url } = await developersApp(t, { rateLimitMax: 77, env: { RATE_LIMIT_MAX: '5', CACHE_TTL_NODEINFO_MS: '1234' }, openapi: { title: 'Premium articles', version: '2.1.0' } })
    const { info } = await (await fetch(`${url}/openapi.json`)).json() as { info: { title: string, version: string } }
    assert.deepEqual(info, { title: 'Premium articles', version: '2.1.0' })
    assert.equal(app.miniAppConfig.RATE_LIMIT_MAX, 77)
    assert.equal(app.miniAppConfig.CACHE_TTL_NODEINFO_MS, 1234)
    assert.equal(app.miniAppConfig.PAYMENT_CONFIRMATIONS, 6)
    assert.equal((await get(`${url}/api/nodeinfo`)).headers.get('x-ratelimit-limit'), '77')
  })

  it('refuses a misspelt option and a bad value with one line each, before serving', async () => {
    const app = Fastify()
    const refused = await app.register(miniApp, { env: {}, paymentAdress: RECEIVER, paymentConfirmations: 0 } as MiniAppOptions).ready().then(() => undefined, (err: unknown) => err)
    assert.ok(refused instanceof ConfigError, String(refused))
    assert.equal(refused.problems.length, 1)
    assert.match(refused.problems[0]!, /^paymentAdress: not an option/)
    await app.close()

    const second = Fastify()
    const bad = await second.register(miniApp, { env: {}, paymentConfirmations: 0 }).ready().then(() => undefined, (err: unknown) => err)
    assert.ok(bad instanceof ConfigError, String(bad))
    assert.match(bad.message, /PAYMENT_CONFIRMATIONS/)
    await second.close()
  })

  it('serves a folder of the developer\'s at / beside its own @fastify/static', async (t) => {
    const dataDir = await freshDataDir()
    t.after(() => rmSync(dataDir, { recursive: true, force: true }))
    mkdirSync(`${dataDir}/page`)
    writeFileSync(`${dataDir}/page/index.html`, '<!doctype html><title>premium</title>')
    writeFileSync(`${dataDir}/logo.txt`, 'a logo')
    const { url } = await developersApp(t, { staticRoot: `${dataDir}/page` }, (app) => {
      app.register(fastifyStatic, { root: dataDir, prefix: '/assets/' })
    })
    const page = await fetch(`${url}/`)
    assert.equal(page.status, 200)
    assert.match(await page.text(), /premium/)
    assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'self'/)
    assert.equal(await (await fetch(`${url}/assets/logo.txt`)).text(), 'a logo')
  })

  it('answers the host\'s b_manifest.json and b_icon.png to any origin, and says at start when the manifest names another app', async (t) => {
    const dataDir = await freshDataDir()
    t.after(() => rmSync(dataDir, { recursive: true, force: true }))
    writeFileSync(`${dataDir}/b_manifest.json`, JSON.stringify({ id: 'another.app', name: 'Another', author: RECEIVER }))
    writeFileSync(`${dataDir}/b_icon.png`, 'not really a png')
    writeFileSync(`${dataDir}/index.html`, '<!doctype html><title>app</title>')
    const logLines: string[] = []
    const { url } = await developersApp(t, { staticRoot: dataDir, bastyonAppId: 'my.app' }, undefined, logLines)
    for (const file of ['b_manifest.json', 'b_icon.png']) {
      const answer = await fetch(`${url}/${file}`, { headers: { origin: 'https://bastyon.com' } })
      assert.equal(answer.status, 200)
      assert.equal(answer.headers.get('access-control-allow-origin'), '*', file)
    }
    assert.equal((await fetch(`${url}/index.html`, { headers: { origin: 'https://bastyon.com' } })).headers.get('access-control-allow-origin'), null)
    assert.equal(logLines.filter(line => line.includes('b_manifest.json names another app')).length, 1, logLines.join('\n'))
  })
})
