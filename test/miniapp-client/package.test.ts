/**
 * bastyon-miniapp-client as a mini-app developer installs it: `npm pack` of the package (its
 * prepack builds it), installed from the tarball into an empty project with no clone around it,
 * then used from plain JavaScript against the running service, and from TypeScript under
 * `tsc --strict` with the DOM's types, as a browser project compiles it.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { promisify } from 'node:util'
import { startApp } from '../helpers/build-app.js'
import { typecheckAsConsumer } from '../helpers/offline-install.js'
import { startEmulator } from '../helpers/start-emulator.js'

const run = promisify(execFile)
const ROOT = new URL('../../', import.meta.url).pathname
const PACKAGE_DIR = join(ROOT, 'packages/miniapp-client')
const manifest = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as { name: string, version: string, dependencies?: Record<string, string> }

const USE_FROM_JAVASCRIPT = `
import { createClient, MiniAppError } from '${manifest.name}'
const client = createClient({ baseUrl: process.argv[2] })
const info = await client.request('/api/nodeinfo')
let refused
try { await client.request('/api/user/nobody') } catch (error) { refused = [error instanceof MiniAppError, error.status] }
console.log(JSON.stringify({ version: info.version, refused, transport: client.follow(['blocks'], () => {}, { transport: 'poll' }).transport }))
process.exit(0)
`

const USE_FROM_TYPESCRIPT = `
import { connectHost, createClient, MiniAppError, type Invoice, type MiniAppEvent, type Session } from '${manifest.name}'

export async function buy (sku: string): Promise<Invoice> {
  const client = createClient({ host: await connectHost(), sessionStore: sessionStorage })
  const session: Session = client.session ?? await client.signIn()
  const invoice = await client.request<Invoice>('/api/shop/' + sku + '/invoice', { method: 'POST', auth: true })
  client.follow(['address:' + session.address], (event: MiniAppEvent) => console.log(event.event, event.data))
  // @ts-expect-error a topic list, not one string
  client.follow('blocks', () => {})
  // @ts-expect-error an invoice's state is one of four
  const wrong: Invoice['state'] = 'paid'
  try {
    return await client.pay(invoice, { onUpdate: next => console.log(next.state, next.confirmations) })
  } catch (error) {
    if (error instanceof MiniAppError && error.status === 0) throw new Error('not paid: ' + (error.detail ?? '') + wrong)
    throw error
  }
}
`

describe('the bastyon-miniapp-client package', () => {
  it('packs its build alone, installs offline into an empty project, and works from JavaScript and typed TypeScript', async (t) => {
    assert.deepEqual(manifest.dependencies ?? {}, {}, 'no dependencies')
    const work = mkdtempSync(join(tmpdir(), 'miniapp-client-'))
    t.after(() => rmSync(work, { recursive: true, force: true }))
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: PACKAGE_DIR })
    const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ filename: string, files: Array<{ path: string }> }>
    assert.ok(packed)
    const files = packed.files.map(file => file.path).sort()
    assert.ok(files.includes('dist/index.js') && files.includes('dist/index.d.ts'), files.join(', '))
    assert.deepEqual(files.filter(path => !path.startsWith('dist/') && path !== 'package.json' && path !== 'README.md'), [], 'nothing but the build, the manifest and the README')
    assert.equal(files.filter(path => path.endsWith('.ts') && !path.endsWith('.d.ts')).length, 0, 'no TypeScript sources')
    assert.doesNotMatch(readFileSync(join(PACKAGE_DIR, 'README.md'), 'utf8'), /\]\(\.\.\//, 'no link into the repository')

    const project = join(work, 'project')
    mkdirSync(project)
    const tarball = `file:../${packed.filename}`
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'a-mini-app', version: '1.0.0', private: true, type: 'module', dependencies: { [manifest.name]: tarball } }))
    writeFileSync(join(project, 'package-lock.json'), JSON.stringify({
      lockfileVersion: 3,
      packages: { '': { dependencies: { [manifest.name]: tarball } }, [`node_modules/${manifest.name}`]: { version: manifest.version, resolved: tarball } },
    }))
    await run('npm', ['ci', '--offline', '--no-audit', '--no-fund'], { cwd: project })

    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    writeFileSync(join(project, 'app.js'), USE_FROM_JAVASCRIPT)
    const used = JSON.parse((await run(process.execPath, ['app.js', service.url], { cwd: project })).stdout) as Record<string, unknown>
    assert.deepEqual(used, { version: '0.22.7', refused: [true, 400], transport: 'poll' })

    // As a browser project compiles it: a bundler's resolution, the DOM's types.
    const typecheck = await typecheckAsConsumer(project, USE_FROM_TYPESCRIPT, { module: 'ESNext', moduleResolution: 'Bundler', target: 'ES2022', lib: ['ES2022', 'DOM'], strict: true, types: [] })
    assert.equal(typecheck, '', 'the typed use compiles, and each @ts-expect-error line is an error')
  })
})
