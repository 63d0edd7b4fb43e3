/**
 * packages/pocketnet-client/ as the package a mini-app developer installs: `npm pack` of its build,
 * installed from the tarball into an empty project with npm's cache only, then used from plain
 * JavaScript against the emulator and from TypeScript under `tsc --strict`.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { promisify } from 'node:util'
import { ensureBuilt } from '../helpers/built.js'
import { installOffline, pack, typecheckAsConsumer } from '../helpers/offline-install.js'
import { startEmulator } from '../helpers/start-emulator.js'

const run = promisify(execFile)
const ROOT = new URL('../../', import.meta.url).pathname
const manifest = JSON.parse(readFileSync(join(ROOT, 'packages/pocketnet-client/package.json'), 'utf8')) as { name: string, dependencies: Record<string, string> }

const USE_FROM_JAVASCRIPT = `
import { PocketNetProxyApi, RPC_TABLE, verifySignature } from '${manifest.name}'
const api = await PocketNetProxyApi.create({ nodes: [process.argv[2]] })
const info = await api.rpc.getnodeinfo()
const tags = await api.rpc.gettags({ pageSize: 3, lang: 'en' })
let refused = ''
try { await api.rpc.gettags({ pageStart: '0' }) } catch (err) { refused = err.code }
await api.close()
console.log(JSON.stringify({ version: info.version, tags: tags.length, refused, methods: Object.keys(RPC_TABLE).length, verify: typeof verifySignature }))
`

const USE_FROM_TYPESCRIPT = `
import { PocketNetProxyApi, type GetcommentsResult, type NodeInfo } from '${manifest.name}'

export async function newestComment (api: PocketNetProxyApi, postid: string): Promise<string | undefined> {
  const info: NodeInfo = await api.rpc.getnodeinfo()
  const comments: GetcommentsResult = await api.rpc.getcomments({ postid, parentid: '' })
  const state = await api.rpc.getuserstate({ address: 'P8bbRWJknHBXJRBTDSS88uQJSFvX67iN88' })
  const tags = await api.rpc.gettags({ pageStart: 0, pageSize: 10 })
  const first: string = tags[0]?.tag === undefined ? '' : String(tags[0].tag)
  // @ts-expect-error gettags paging is a number: the client sends it as the node's decimal string
  await api.rpc.gettags({ pageStart: '0' })
  // @ts-expect-error getcomments needs postid
  await api.rpc.getcomments({})
  // @ts-expect-error getcontent's last is never sent: any value but 1 makes a 0.22 node answer []
  await api.rpc.getcontent({ hashes: [postid], last: 0 })
  // @ts-expect-error a broken method is not callable
  await api.rpc.getbalancehistory({ addresses: 'P' })
  return String(comments[0]?.id ?? first) + String(info.lastblock.height) + String(state.address)
}
`

describe('the pocketnet-client package', () => {
  it('packs only its build, installs offline into an empty project without Fastify, and works from JavaScript and typed TypeScript', async (t) => {
    const work = mkdtempSync(join(tmpdir(), 'sdk-'))
    t.after(() => rmSync(work, { recursive: true, force: true }))
    // Packed from the shared build (its prepack script would build it again).
    ensureBuilt()
    const packed = await pack(join(ROOT, 'packages', 'pocketnet-client'), work, { ignoreScripts: true })
    const files = packed.files
    assert.ok(files.includes('dist/index.js') && files.includes('dist/index.d.ts') && files.includes('dist/methods/table-rpc.d.ts'), files.join(', '))
    assert.deepEqual(files.filter(path => !path.startsWith('dist/') && path !== 'package.json' && path !== 'README.md'), [], 'nothing but the build, the manifest and the README')
    assert.equal(files.filter(path => path.endsWith('.ts') && !path.endsWith('.d.ts')).length, 0, 'no TypeScript sources')
    assert.deepEqual(Object.keys(manifest.dependencies).filter(name => /fastify/.test(name)), [])

    const project = join(work, 'project')
    await installOffline(work, project, [packed])
    assert.equal(existsSync(join(project, 'node_modules', 'fastify')), false)
    for (const dependency of Object.keys(manifest.dependencies)) assert.ok(existsSync(join(project, 'node_modules', dependency)), dependency)

    const node = await startEmulator(t)
    writeFileSync(join(project, 'app.js'), USE_FROM_JAVASCRIPT)
    const used = JSON.parse((await run(process.execPath, ['app.js', node.url], { cwd: project })).stdout) as Record<string, unknown>
    assert.deepEqual(used, { version: '0.22.7', tags: 3, refused: 'RPC_ERR_INVALID_PARAMS', methods: 92, verify: 'function' })
    assert.deepEqual(node.callsTo('gettags').map(call => call.params), [['0', '3', null, 'en']])

    const typecheck = await typecheckAsConsumer(project, USE_FROM_TYPESCRIPT)
    assert.equal(typecheck, '', 'the typed use compiles, and each @ts-expect-error line is an error')
  })
})
