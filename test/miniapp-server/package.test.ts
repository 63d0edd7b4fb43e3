/**
 * bastyon-miniapp-server as a mini-app developer installs it: `npm pack` of the package and of
 * pocketnet-client, which it depends on, installed from the tarballs into an empty project with
 * Fastify and no clone around it; then registered into the project's own Fastify app from plain
 * JavaScript against the emulator, and used from TypeScript under `tsc --strict`, where every
 * capability is typed on the instance and every option checked.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { promisify } from 'node:util'
import { ensureBuilt } from '../helpers/built.js'
import { installOffline, pack, typecheckAsConsumer } from '../helpers/offline-install.js'
import { startEmulator } from '../helpers/start-emulator.js'

const run = promisify(execFile)
const ROOT = new URL('../../', import.meta.url).pathname

const USE_FROM_JAVASCRIPT = `
import Fastify from 'fastify'
import { miniApp } from 'bastyon-miniapp-server'
const app = Fastify()
await app.register(miniApp, { pocketnetNodes: process.argv[2], env: {} })
app.get('/api/hello', { schema: { tags: ['articles'] } }, async () => ({ message: 'Hello', data: { payments: app.payments === undefined ? 'off' : 'on', signIn: app.signIn === undefined ? 'off' : 'on' } }))
const info = await app.inject('/api/nodeinfo')
const hello = await app.inject('/api/hello')
const openapi = await app.inject('/openapi.json')
console.log(JSON.stringify({ status: info.statusCode, version: info.json().data.version, hello: hello.json().data, documented: Object.keys(openapi.json().paths).includes('/api/hello') }))
await app.close()
`

const USE_FROM_TYPESCRIPT = `
import Fastify from 'fastify'
import { miniApp, optionalUser, signedInUser, type AuthUser, type MiniAppOptions } from 'bastyon-miniapp-server'

export async function start (): Promise<string | undefined> {
  const app = Fastify()
  await app.register(miniApp, { paymentAddress: 'PR7srzZt4EfcNb3s27grgmiG8aB9vYNV82', paymentConfirmations: 2, bastyonAppId: 'demo.pocketnet.app' })
  const invoice = await app.payments?.createInvoice({ amount: 50_000_000, metadata: { article: 'a1' } })
  app.payments?.on('confirmed', async (event) => { const paid: string = event.invoiceId; return paid })
  // @ts-expect-error an invoice is confirmed, never "paid"
  app.payments?.on('paid', () => {})
  app.get('/api/me/articles', { config: { auth: true } }, async (request) => ({ message: 'Yours', data: { address: signedInUser(request).address } }))
  app.get('/api/articles', { config: { auth: 'optional' } }, async (request) => {
    const reader: AuthUser | null = optionalUser(request)
    return { message: 'Articles', data: { reader: reader?.address ?? request.user?.address ?? null } }
  })
  // @ts-expect-error auth is true, false or 'optional'
  app.get('/api/maybe', { config: { auth: 'maybe' } }, async () => ({}))
  const lastId: string = app.events.lastId
  const confirmations: number = app.miniAppConfig.PAYMENT_CONFIRMATIONS
  // @ts-expect-error a number of blocks, not a string
  const wrong: MiniAppOptions = { paymentConfirmations: '2' }
  // @ts-expect-error not an option
  const misspelt: MiniAppOptions = { paymentAdress: 'P' }
  return invoice?.id ?? lastId + String(confirmations) + String(wrong) + String(misspelt)
}
`

describe('the bastyon-miniapp-server package', () => {
  it('packs its build alone, installs offline beside Fastify into an empty project, and works from JavaScript and typed TypeScript', async (t) => {
    const work = mkdtempSync(join(tmpdir(), 'miniapp-server-'))
    t.after(() => rmSync(work, { recursive: true, force: true }))
    ensureBuilt()
    const client = await pack(join(ROOT, 'packages', 'pocketnet-client'), work, { ignoreScripts: true })
    // Its prepack builds it from src/.
    const server = await pack(join(ROOT, 'packages/miniapp-server'), work)
    assert.ok(server.files.includes('dist/mini-app.js') && server.files.includes('dist/mini-app.d.ts'), server.files.join(', '))
    assert.deepEqual(server.files.filter(path => !path.startsWith('dist/') && path !== 'package.json' && path !== 'README.md'), [], 'nothing but the build, the manifest and the README')
    assert.equal(server.files.filter(path => path.endsWith('.ts') && !path.endsWith('.d.ts')).length, 0, 'no TypeScript sources')
    assert.equal(server.manifest.dependencies?.fastify, undefined, 'Fastify is the developer\'s: a peer')

    const project = join(work, 'project')
    await installOffline(work, project, [client, server], { alsoFromRegistry: ['fastify'] })

    const node = await startEmulator(t)
    writeFileSync(join(project, 'app.js'), USE_FROM_JAVASCRIPT)
    const used = JSON.parse((await run(process.execPath, ['app.js', node.url], { cwd: project })).stdout) as Record<string, unknown>
    assert.deepEqual(used, { status: 200, version: '0.22.7', hello: { payments: 'off', signIn: 'off' }, documented: true })

    const typecheck = await typecheckAsConsumer(project, USE_FROM_TYPESCRIPT)
    assert.equal(typecheck, '', 'the typed use compiles, and each @ts-expect-error line is an error')
  })
})
