/**
 * `npm create bastyon-miniapp` as a new developer meets it, with no clone around: every package
 * packed (`npm pack --workspaces`, from the shared build), the scaffold installed from its tarball
 * and run with `--packages` pointing at the tarballs, the project it writes installed offline, its
 * own `npm test` run, and its `npm run dev` serving the page, the browser client and the API.
 */
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { promisify } from 'node:util'
import { ensureBuilt } from '../helpers/built.js'
import { installOffline, installProjectOffline, packWorkspaces } from '../helpers/offline-install.js'

const run = promisify(execFile)
const ROOT = new URL('../../', import.meta.url).pathname
const EXAMPLE = join(ROOT, 'examples/premium-article')

/** Starts `npm run dev` in `project`; resolves with the URL it prints, and stops it when the test ends. */
async function startDev (t: { after (fn: () => unknown): void }, project: string): Promise<string> {
  const dev = spawn('npm', ['run', 'dev'], { cwd: project, env: { ...process.env, PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  t.after(() => { if (dev.exitCode === null) process.kill(-dev.pid!, 'SIGKILL') })
  let printed = ''
  dev.stdout.setEncoding('utf8')
  dev.stderr.setEncoding('utf8')
  return await new Promise((resolve, reject) => {
    const read = (chunk: string): void => {
      printed += chunk
      const url = /Open (http:\/\/127\.0\.0\.1:\d+)\//.exec(printed)?.[1]
      if (url !== undefined) resolve(url)
    }
    dev.stdout.on('data', read)
    dev.stderr.on('data', (chunk: string) => { printed += chunk })
    dev.once('exit', code => reject(new Error(`npm run dev exited (${code}) before serving:\n${printed}`)))
  })
}

describe('npm create bastyon-miniapp', () => {
  it('writes, from the packed packages alone, a project whose install and npm test pass and whose npm run dev serves the page and the API', async (t) => {
    const work = mkdtempSync(join(tmpdir(), 'create-miniapp-'))
    t.after(() => rmSync(work, { recursive: true, force: true }))
    ensureBuilt()
    const tarballs = await packWorkspaces(work)
    assert.deepEqual(tarballs.map(packed => packed.name).sort(), ['bastyon-miniapp-client', 'bastyon-miniapp-server', 'bastyon-miniapp-testkit', 'create-bastyon-miniapp', 'pocketnet-client'])
    const create = tarballs.find(packed => packed.name === 'create-bastyon-miniapp')!
    assert.ok(create.files.includes('template/server.js') && create.files.includes('template/test/article.test.js'), create.files.join(', '))

    // The scaffold, installed as npm create installs it, then run.
    const tools = join(work, 'tools')
    await installOffline(work, tools, [create])
    const scaffolded = await run(join(tools, 'node_modules/.bin/create-bastyon-miniapp'), ['my-app', '--packages', work], { cwd: work })
    assert.match(scaffolded.stdout, /npm test/)
    const project = join(work, 'my-app')
    const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as { name: string, dependencies: Record<string, string>, devDependencies: Record<string, string> }
    assert.equal(manifest.name, 'my-app')
    assert.match(manifest.dependencies['bastyon-miniapp-server'] ?? '', /^file:.*bastyon-miniapp-server-0\.1\.0\.tgz$/)
    assert.match(manifest.devDependencies['bastyon-miniapp-testkit'] ?? '', /^file:/)
    // What it wrote is the example the repository tests, file for file.
    for (const file of ['server.js', 'dev.js', 'public/app.js', 'public/index.html', join('test', 'article.test.js')]) {
      assert.equal(readFileSync(join(project, file), 'utf8'), readFileSync(join(EXAMPLE, file), 'utf8'), file)
    }
    const again = await run(join(tools, 'node_modules/.bin/create-bastyon-miniapp'), ['my-app'], { cwd: work }).then(() => '', (err: { stderr?: string }) => err.stderr ?? '')
    assert.match(again, /exists and is not empty/)

    await installProjectOffline(project, tarballs)
    // Not as a child of this test run: node --test reports to its parent when NODE_TEST_CONTEXT says it has one.
    const { NODE_TEST_CONTEXT: _child, ...env } = process.env
    const tested = await run('npm', ['test'], { cwd: project, env })
    assert.match(tested.stdout, /# pass 2\n# fail 0/)

    const url = await startDev(t, project)
    const page = await fetch(`${url}/`)
    assert.equal(page.status, 200)
    assert.match(await page.text(), /app\.js/)
    const client = await fetch(`${url}/client/index.js`)
    assert.equal(client.status, 200)
    assert.match(await client.text(), /createClient/)
    const info = await (await fetch(`${url}/api/nodeinfo`)).json() as { data: { version: string } }
    assert.equal(info.data.version, '0.22.7')
    const article = await (await fetch(`${url}/api/articles/why-pkoin`)).json() as { data: { priceSat: number } }
    assert.equal(article.data.priceSat, 50_000_000)
  })
})
