/**
 * The built service (`npm run build`: packages/pocketnet-client/dist, dist/src and their bundle
 * dist/server.js) and the packages' builds (packages/*: what their prepack makes), made once for
 * every test that runs them as a process or packs them (the cluster, shutdown, production and
 * package tests), and again only when a source changed since. `npm test` builds first
 * (scripts/test.ts); a test file run on its own builds here when the build is missing or older than
 * the sources. Parallel test files wait for one build under a lock.
 *
 * It emits what `npm run build` emits (pocketnet-client, then the service) without type checking it
 * (`--noCheck`): the type check is a step of its own in `npm test`, and tsx runs the tests
 * unchecked anyway, so checking here again would only cost the suite the time of a second one.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

export const ROOT = new URL('../../', import.meta.url).pathname
const STAMP = join(ROOT, 'dist', '.built')
const LOCK = join(ROOT, '.build-lock')
/** A lock older than this was left by a build that died. */
const STALE_LOCK_MS = 120_000
/** TypeScript 7, the native compiler, as package.json's build runs it (docs/architecture.md). */
const TSC = join(ROOT, 'node_modules', 'typescript-native', 'bin', 'tsc')
/** The build's last step: the service and its dependencies in one file, dist/server.js. */
const BUNDLE_SCRIPT = join(ROOT, 'scripts', 'bundle.ts')
const INPUTS = ['test/helpers/built.ts', 'src', 'packages', 'devnode', 'examples', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'scripts/bundle.ts']
/** Each package's build, as its prepack runs it: `npm pack --ignore-scripts` then packs what is here. */
const PACKAGE_BUILDS: string[][] = [
  [TSC, '-p', 'packages/miniapp-client/tsconfig.json', '--noCheck', '--singleThreaded'],
  [TSC, '-p', 'packages/miniapp-server/tsconfig.json', '--noCheck', '--singleThreaded'],
  ['--import', 'tsx', 'packages/miniapp-testkit/scripts/build.ts'],
  ['packages/create-bastyon-miniapp/scripts/copy-template.js'],
]

function newestMtime (path: string): number {
  const stat = statSync(path, { throwIfNoEntry: false })
  if (stat === undefined) return 0
  if (!stat.isDirectory()) return stat.mtimeMs
  let newest = 0
  for (const entry of readdirSync(path)) {
    // Outputs of the build itself (template: the scaffold's copy of examples/premium-article).
    if (entry === 'dist' || entry === 'node_modules' || entry === 'template') continue
    newest = Math.max(newest, newestMtime(join(path, entry)))
  }
  return newest
}

function isCurrent (): boolean {
  const built = statSync(STAMP, { throwIfNoEntry: false })?.mtimeMs ?? 0
  return built > 0 && INPUTS.every(input => newestMtime(join(ROOT, input)) <= built)
}

function sleep (ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

/** Builds unless the build is current; returns once it is. */
export function ensureBuilt (): void {
  for (;;) {
    if (isCurrent()) return
    try {
      mkdirSync(LOCK)
    } catch {
      const age = Date.now() - (statSync(LOCK, { throwIfNoEntry: false })?.mtimeMs ?? Date.now())
      if (age > STALE_LOCK_MS) rmSync(LOCK, { recursive: true, force: true })
      sleep(100)
      continue
    }
    try {
      if (isCurrent()) return
      const started = Date.now()
      for (const project of ['packages/pocketnet-client/tsconfig.json', 'tsconfig.build.json']) {
        // One thread, as the suite's type check (scripts/test.ts): the test processes keep the cores busy.
        execFileSync(process.execPath, [TSC, '-p', project, '--noCheck', '--singleThreaded'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] })
      }
      execFileSync(process.execPath, ['--import', 'tsx', BUNDLE_SCRIPT], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] })
      for (const args of PACKAGE_BUILDS) execFileSync(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] })
      // Stamped with the time the build started: a source saved during the build makes it stale.
      writeFileSync(STAMP, '')
      utimesSync(STAMP, new Date(started), new Date(started))
      return
    } finally {
      rmSync(LOCK, { recursive: true, force: true })
    }
  }
}
