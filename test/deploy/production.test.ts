/**
 * The production path without Docker (no engine on this machine): the tree is built once with
 * the dev dependencies, then a copy with only what the image's runtime stage holds (package
 * files, dist/, public/) gets the production dependencies and starts with `npm start`, as an
 * operator would, against the emulator. The Dockerfile's own instructions are checked against
 * the same facts.
 */
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { describe, it } from 'node:test'
import { promisify } from 'node:util'
import { ensureBuilt } from '../helpers/built.js'
import { startEmulator } from '../helpers/start-emulator.js'

const run = promisify(execFile)
const ROOT = new URL('../../', import.meta.url).pathname
const packageJson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string>, devDependencies: Record<string, string> }
/** The client's run-time dependencies: the root has copies among its development ones (for the emulator and tests), and production gets them through pocketnet-client. */
const libDependencies = (JSON.parse(readFileSync(join(ROOT, 'packages', 'pocketnet-client', 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies

/** The Dockerfile's instructions, continuation lines joined, comments left out, split by stage. */
function dockerfileStages (): Array<Array<{ instruction: string, args: string }>> {
  const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8').replace(/\\\n\s*/g, '')
  const stages: Array<Array<{ instruction: string, args: string }>> = []
  for (const line of text.split('\n').map(row => row.trim()).filter(row => row !== '' && !row.startsWith('#'))) {
    const [, instruction = '', args = ''] = /^(\S+)\s+(.*)$/.exec(line) ?? []
    if (instruction === 'FROM') stages.push([])
    stages.at(-1)?.push({ instruction, args })
  }
  return stages
}

/** The exec-form array of an instruction such as `CMD ["node", "x.js"]`. */
function execForm (args: string): string[] {
  const json = args.slice(args.indexOf('['))
  return JSON.parse(json) as string[]
}

/** What the runtime stage copies into the image, as paths of the repository. */
const RUNTIME_FILES = ['package.json', 'package-lock.json', 'packages/pocketnet-client/package.json', 'packages/miniapp-client/package.json', 'packages/miniapp-server/package.json', 'packages/miniapp-testkit/package.json', 'public']
/** What it copies from the build stage. */
const BUILT = ['dist', 'packages/pocketnet-client/dist', 'packages/miniapp-client/dist']

describe('the production path', () => {
  it('builds once, installs production dependencies only, and serves with npm start until SIGTERM', async (t) => {
    const work = mkdtempSync(join(tmpdir(), 'production-'))
    t.after(() => rmSync(work, { recursive: true, force: true }))

    // The build stage: `npm run build` over the files it copies (the next test checks that list),
    // made once for every test that runs the build (helpers/built.ts).
    ensureBuilt()
    const build = ROOT

    // The runtime stage: no sources, no dev dependencies.
    const runtime = join(work, 'runtime')
    mkdirSync(runtime)
    for (const entry of RUNTIME_FILES) cpSync(join(ROOT, entry), join(runtime, entry), { recursive: true })
    for (const entry of BUILT) cpSync(join(build, entry), join(runtime, entry), { recursive: true })
    await run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: runtime })
    for (const devOnly of Object.keys(packageJson.devDependencies).filter(name => !(name in libDependencies))) {
      assert.equal(existsSync(join(runtime, 'node_modules', devOnly)), false, `${devOnly} is not installed`)
    }
    for (const needed of Object.keys(libDependencies)) assert.equal(existsSync(join(runtime, 'node_modules', needed)), true, `${needed} is installed, for pocketnet-client`)
    assert.equal(existsSync(join(runtime, 'src')), false)

    const node = await startEmulator(t)
    const child = spawn('npm', ['start'], {
      cwd: runtime,
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', POCKETNET_NODES: node.url, LOG_LEVEL: 'info', NODE_ENV: 'production' },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    t.after(() => { if (child.exitCode === null) child.kill('SIGKILL') })
    const lines: string[] = []
    const url = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', line => {
        lines.push(line)
        const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(line)
        if (match) resolve(match[1] as string)
      })
      child.once('exit', code => reject(new Error(`npm start exited with ${code} before listening:\n${lines.join('\n')}`)))
    })

    assert.equal((await fetch(`${url}/healthz`)).status, 200)
    const ready = await fetch(`${url}/readyz`)
    assert.equal(ready.status, 200)
    assert.equal(((await ready.json()) as { data: { usableNodes: number } }).data.usableNodes, 1)
    const search = await fetch(`${url}/api/search?keyword=bitcoin&pageSize=2`)
    assert.equal(search.status, 200)
    assert.equal(((await search.json()) as { data: { results: unknown[] } }).data.results.length, 2)
    assert.equal((await fetch(`${url}/`)).status, 200, 'the demo page is in the image')
    const client = await fetch(`${url}/client/index.js`)
    assert.equal(client.status, 200, 'and the browser client it imports')
    assert.match(client.headers.get('content-type') ?? '', /javascript/)

    // The image's health check, run as Docker would run it.
    const healthcheck = dockerfileStages().at(-1)?.find(step => step.instruction === 'HEALTHCHECK')
    assert.ok(healthcheck)
    const [command, ...args] = execForm(healthcheck.args)
    const { port } = new URL(url)
    await run(command as string, args, { env: { ...process.env, PORT: port } })
    await assert.rejects(run(command as string, args, { env: { ...process.env, PORT: '9' } }), 'it fails when nothing answers')

    // SIGTERM to npm reaches node (the start script execs it): a graceful exit 0.
    const exit = once(child, 'exit')
    child.kill('SIGTERM')
    const [code] = await exit
    assert.equal(code, 0)
    assert.ok(lines.some(line => line.includes('"msg":"shut down"')), lines.join('\n'))
  })

  it('has a Dockerfile whose runtime stage holds the same, runs as a user, and starts node as npm start does', () => {
    const stages = dockerfileStages()
    assert.equal(stages.length, 2, 'a build stage and a runtime stage')
    const [build, runtime] = stages as [Array<{ instruction: string, args: string }>, Array<{ instruction: string, args: string }>]
    const args = (stage: typeof build, instruction: string): string[] => stage.filter(step => step.instruction === instruction).map(step => step.args)
    assert.match(args(build, 'FROM')[0] ?? '', /^node:20-slim AS build$/)
    assert.ok(args(build, 'RUN').includes('npm run build'))
    // What `npm run build` reads: the manifests (the workspaces' too, for npm ci), both tsconfigs, the client (packages/pocketnet-client), the browser client, src and the bundle script.
    const buildInputs = args(build, 'COPY').flatMap(copy => copy.split(/\s+/).slice(0, -1)).sort()
    assert.deepEqual(buildInputs, ['package-lock.json', 'package.json', 'packages/miniapp-client', 'packages/miniapp-client/package.json', 'packages/miniapp-server/package.json', 'packages/miniapp-testkit/package.json', 'packages/pocketnet-client', 'packages/pocketnet-client/package.json', 'scripts/bundle.ts', 'src', 'tsconfig.build.json', 'tsconfig.json'])
    assert.match(args(runtime, 'FROM')[0] ?? '', /^node:20-slim\b/)
    assert.ok(args(runtime, 'RUN').some(run => run.startsWith('npm ci --omit=dev')), 'production dependencies only')
    const copied = args(runtime, 'COPY').map(copy => copy.split(/\s+/))
    assert.deepEqual(copied.filter(parts => !parts[0]?.startsWith('--from')).flatMap(parts => parts.slice(0, -1)).sort(), [...RUNTIME_FILES].sort())
    assert.deepEqual(copied.filter(parts => parts[0] === '--from=build').map(parts => parts[1]), BUILT.map(entry => `/app/${entry}`))
    // Payments' embedded database: a directory the user owns, as a volume.
    assert.deepEqual(args(runtime, 'ENV').filter(env => env.startsWith('DATA_DIR')), ['DATA_DIR=/data'])
    assert.ok(args(runtime, 'RUN').includes('mkdir /data && chown node:node /data'))
    assert.deepEqual(args(runtime, 'VOLUME'), ['/data'])
    const user = args(runtime, 'USER')
    assert.equal(user.length, 1)
    assert.doesNotMatch(user[0] as string, /^(root|0)(:|$)/)
    assert.deepEqual(args(runtime, 'STOPSIGNAL'), ['SIGTERM'])
    assert.equal(args(runtime, 'HEALTHCHECK').length, 1)
    // Exec form, node itself: signals reach it with no shell in between.
    const cmd = execForm(args(runtime, 'CMD')[0] ?? '')
    assert.deepEqual(['exec', ...cmd], packageJson.scripts.start?.split(' '))
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n')
    for (const entry of ['.git', 'node_modules', 'dist', '.env']) assert.ok(ignored.includes(entry), `.dockerignore has ${entry}`)
  })

  it('starts no build on npm start', () => {
    assert.equal(packageJson.scripts.prestart, undefined)
    assert.doesNotMatch(packageJson.scripts.start ?? '', /\b(tsc|tsx|build)\b/)
  })
})
