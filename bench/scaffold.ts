/**
 * `npm run bench:scaffold`: a new developer's first minutes, as issue #35 measures them. From a
 * clone: `npm pack --workspaces` (each package's prepack builds it); then, in an empty folder,
 * `npm create bastyon-miniapp` from the tarball (npm exec, as `npm create` runs it) with
 * `--packages`, `npm install` (the registry, or npm's cache), and the project's `npm test`: the
 * seconds from the scaffold to the first green test. Then the server package's start against the
 * service's bundle: the scaffolded app (`node server.js`: Fastify and bastyon-miniapp-server from
 * node_modules, module by module) and `dist/server.js`, alternating, in one run.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { writeResultsSection } from './results-file.js'
import { measureStart, type Start } from './startup.js'

const ROOT = new URL('../', import.meta.url).pathname
const RUNS = Number(process.env.BENCH_START_RUNS ?? 9)
// No node answers: a start does not wait for one.
// Sign-in on, which the scaffolded app's routes need; payments off, so that neither start opens a database.
const ENV = { NODE_ENV: 'production', POCKETNET_NODES: 'http://127.0.0.1:9', BASTYON_APP_ID: 'premium.article.app' }

function timed (label: string, command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): number {
  const started = performance.now()
  execFileSync(command, args, { cwd, env, stdio: ['ignore', 'ignore', 'inherit'] })
  const seconds = (performance.now() - started) / 1000
  console.log(`${label}: ${seconds.toFixed(1)} s`)
  return seconds
}

function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] as number
}

const work = mkdtempSync(join(tmpdir(), 'bench-scaffold-'))
try {
  const pack = timed('npm pack --workspaces', 'npm', ['pack', '--workspaces', '--pack-destination', work], ROOT)
  const create = join(work, 'create-bastyon-miniapp-0.1.0.tgz')
  const scaffold = timed('npm create (from the tarball)', 'npm', ['exec', '--yes', `--package=${create}`, '--', 'create-bastyon-miniapp', 'my-app', '--packages', work], work)
  const project = join(work, 'my-app')
  const install = timed('npm install', 'npm', ['install', '--no-audit', '--no-fund'], project)
  const { NODE_TEST_CONTEXT: _child, ...env } = process.env
  const test = timed('npm test', 'npm', ['test'], project, env)
  const total = scaffold + install + test

  execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' })
  const entries = {
    plugin: { args: ['server.js'], cwd: project, label: 'the scaffolded app: `node server.js` (bastyon-miniapp-server from node_modules)' },
    bundle: { args: [join(ROOT, 'dist/server.js')], cwd: ROOT, label: 'the service: `dist/server.js` (the bundle `npm start` runs)' },
  }
  const starts: Record<keyof typeof entries, Start[]> = { plugin: [], bundle: [] }
  for (let run = 0; run < RUNS; run++) {
    for (const name of Object.keys(entries) as Array<keyof typeof entries>) starts[name].push(await measureStart(ENV, entries[name].args, entries[name].cwd))
  }
  const of = (name: keyof typeof entries, key: keyof Start): number => median(starts[name].map(start => start[key]))
  const row = (name: keyof typeof entries): string => `| ${entries[name].label} | ${of(name, 'ms').toFixed(0)} | ${of(name, 'cpuMs').toFixed(0)} | ${of(name, 'rssMb').toFixed(0)} |`
  const text = `${new Date().toISOString().slice(0, 10)}, \`npm run bench:scaffold\` on this machine (${RUNS} starts each, alternating, medians):

| step | seconds |
|---|---|
| \`npm pack --workspaces\` (each prepack builds its package) | ${pack.toFixed(1)} |
| \`npm create bastyon-miniapp my-app -- --packages <tarballs>\` | ${scaffold.toFixed(1)} |
| \`npm install\` in the new project | ${install.toFixed(1)} |
| its \`npm test\` (a reader pays on the emulated chain), green | ${test.toFixed(1)} |
| **scaffold → first green test** | **${total.toFixed(1)}** |

| start to listening | ms | CPU ms | RSS MB |
|---|---|---|---|
${row('plugin')}
${row('bundle')}
| plugin / bundle | ${(of('plugin', 'ms') / of('bundle', 'ms')).toFixed(2)}× | ${(of('plugin', 'cpuMs') / of('bundle', 'cpuMs')).toFixed(2)}× | ${(of('plugin', 'rssMb') / of('bundle', 'rssMb')).toFixed(2)}× |`
  console.log(text)
  writeResultsSection('scaffold', '## The first minutes: scaffold to a green test, and the server package\'s start (issue #35)', text)
} finally {
  rmSync(work, { recursive: true, force: true })
}
