/**
 * A package of this repository as a mini-app developer installs it: `npm pack` of its build, then
 * an empty project that depends on the tarball, with no clone around it, installed by
 * `npm ci --offline`. Its lockfile pins every dependency as this repository's lockfile has it, so
 * npm installs from its cache alone (`npm install` would ask the registry for each dependency's
 * versions first). A workspace package a packed one depends on (the server on pocketnet-client)
 * is packed and installed from its tarball too.
 */
import { execFile } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)
const ROOT = new URL('../../', import.meta.url).pathname

interface LockEntry { version?: string, bin?: Record<string, string>, resolved?: string, integrity?: string, link?: boolean, dependencies?: Record<string, string>, optionalDependencies?: Record<string, string>, peerDependencies?: Record<string, string> }
interface Manifest { name: string, version: string, bin?: Record<string, string>, dependencies?: Record<string, string> }
export interface Packed { name: string, version: string, filename: string, files: string[], manifest: Manifest }

/** The workspace packages, by name: their folder. */
function workspaces (): Map<string, string> {
  const { packages } = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry & { resolved?: string }> }
  const byName = new Map<string, string>()
  for (const [path, entry] of Object.entries(packages)) {
    if (entry.link === true && entry.resolved !== undefined) byName.set(path.slice('node_modules/'.length), join(ROOT, entry.resolved))
  }
  return byName
}

/** `npm pack` of the workspace package in `dir` into `destination` (with `ignoreScripts`, its prepack build is skipped: built already). */
export async function pack (dir: string, destination: string, { ignoreScripts = false } = {}): Promise<Packed> {
  const { stdout } = await run('npm', ['pack', '--json', ...(ignoreScripts ? ['--ignore-scripts'] : []), '--pack-destination', destination], { cwd: dir, maxBuffer: 64 * 1024 * 1024 })
  const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ name: string, version: string, filename: string, files: Array<{ path: string }> }>
  if (packed === undefined) throw new Error(`npm pack in ${dir} packed nothing`)
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest
  return { ...packed, files: packed.files.map(file => file.path), manifest }
}

/**
 * The lockfile's packages for a project that depends on `tarballs` (given by path: `file:<path>`)
 * and on `fromRegistry` (names) as this repository's lockfile has them. Each dependency of a
 * tarball that is itself a workspace package must be among `tarballs`.
 */
function lockedPackages (tarballs: Array<{ packed: Packed, spec: string }>, fromRegistry: string[]): Record<string, LockEntry> {
  const { packages } = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> }
  const local = workspaces()
  const byName = new Map(tarballs.map(tarball => [tarball.packed.name, tarball]))
  const lock: Record<string, LockEntry> = {}
  // Each dependency where Node would find it: nested under the one that needs it, else hoisted.
  const visit = (from: string, name: string, optional = false): void => {
    const tarball = byName.get(name)
    if (tarball !== undefined) {
      if (lock[`node_modules/${name}`] === undefined) addTarball(tarball)
      return
    }
    if (local.has(name)) throw new Error(`${name} is a workspace package: pack it too`)
    for (let dir = from; ; dir = dir.slice(0, Math.max(0, dir.lastIndexOf('/node_modules/')))) {
      const path = `${dir === '' ? '' : `${dir}/`}node_modules/${name}`
      const entry = packages[path]
      if (entry !== undefined) {
        if (lock[path] !== undefined) return
        lock[path] = entry
        for (const dependency of Object.keys(entry.dependencies ?? {})) visit(path, dependency)
        // npm ci checks these too: each one this repository installed (pg-cloudflare, say).
        for (const dependency of Object.keys({ ...entry.optionalDependencies, ...entry.peerDependencies })) visit(path, dependency, true)
        return
      }
      if (dir === '') {
        if (optional) return
        throw new Error(`${name} is not in the lockfile`)
      }
    }
  }
  const addTarball = ({ packed, spec }: { packed: Packed, spec: string }): void => {
    const path = `node_modules/${packed.name}`
    // npm ci links a package's bins from its entry here, as npm writes them (no leading ./).
    const bin = packed.manifest.bin === undefined ? {} : { bin: Object.fromEntries(Object.entries(packed.manifest.bin).map(([name, file]) => [name, file.replace(/^\.\//, '')])) }
    lock[path] = { version: packed.version, resolved: spec, dependencies: packed.manifest.dependencies ?? {}, ...bin }
    for (const dependency of Object.keys(packed.manifest.dependencies ?? {})) visit(path, dependency)
  }
  for (const tarball of tarballs) visit('', tarball.packed.name)
  for (const name of fromRegistry) visit('', name)
  return lock
}

async function writeLockAndInstall (project: string, manifest: Record<string, unknown>, lock: Record<string, LockEntry>): Promise<void> {
  const { dependencies, devDependencies } = manifest as { dependencies?: Record<string, string>, devDependencies?: Record<string, string> }
  const root = { name: manifest.name as string, ...(dependencies ? { dependencies } : {}), ...(devDependencies ? { devDependencies } : {}) }
  writeFileSync(join(project, 'package-lock.json'), JSON.stringify({ name: root.name, lockfileVersion: 3, requires: true, packages: { '': root, ...lock } }, null, 2))
  await run('npm', ['ci', '--offline', '--no-audit', '--no-fund'], { cwd: project, maxBuffer: 64 * 1024 * 1024 })
}

/**
 * Writes `project` (package.json and package-lock.json) depending on the tarballs in `work`, and
 * on `alsoFromRegistry` (such as fastify, a peer the developer installs) as this repository's
 * lockfile has them, and installs it offline.
 */
export async function installOffline (work: string, project: string, tarballs: Packed[], { alsoFromRegistry = [] as string[], manifest = {} as Record<string, unknown> } = {}): Promise<void> {
  const given = tarballs.map(packed => ({ packed, spec: `file:${join(work, packed.filename)}` }))
  const lock = lockedPackages(given, alsoFromRegistry)
  const dependencies: Record<string, string> = Object.fromEntries(given.map(({ packed, spec }) => [packed.name, spec]))
  for (const name of alsoFromRegistry) dependencies[name] = lock[`node_modules/${name}`]!.version!
  const written = { name: 'a-mini-app', version: '1.0.0', private: true, type: 'module', dependencies, ...manifest }
  mkdirSync(project, { recursive: true })
  writeFileSync(join(project, 'package.json'), JSON.stringify(written, null, 2))
  await writeLockAndInstall(project, written, lock)
}

/**
 * Installs offline a project whose package.json is written already (a scaffold's): a dependency
 * given as `file:<path>` is one of `tarballs` (by file name), any other comes from this
 * repository's lockfile.
 */
export async function installProjectOffline (project: string, tarballs: Packed[]): Promise<void> {
  const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as Record<string, unknown> & { dependencies?: Record<string, string>, devDependencies?: Record<string, string> }
  const given: Array<{ packed: Packed, spec: string }> = []
  const fromRegistry: string[] = []
  for (const [name, spec] of Object.entries({ ...manifest.dependencies, ...manifest.devDependencies })) {
    if (!spec.startsWith('file:')) {
      fromRegistry.push(name)
      continue
    }
    const packed = tarballs.find(tarball => tarball.name === name && spec.endsWith(`/${tarball.filename}`))
    if (packed === undefined) throw new Error(`${name}: ${spec} is none of the packed tarballs`)
    given.push({ packed, spec })
  }
  await writeLockAndInstall(project, manifest, lockedPackages(given, fromRegistry))
}

/** `npm pack --workspaces` into `destination`, from the shared build (test/helpers/built.ts): each package's prepack is skipped. */
export async function packWorkspaces (destination: string): Promise<Packed[]> {
  const { stdout } = await run('npm', ['pack', '--workspaces', '--json', '--ignore-scripts', '--pack-destination', destination], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 })
  const packed = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ name: string, version: string, filename: string, files: Array<{ path: string }> }>
  const dirs = workspaces()
  return packed.map(entry => ({
    ...entry,
    files: entry.files.map(file => file.path),
    manifest: JSON.parse(readFileSync(join(dirs.get(entry.name)!, 'package.json'), 'utf8')) as Manifest,
  }))
}

/** Node projects' options, as a consumer's tsconfig has them: NodeNext, strict, Node's types. */
export const NODE_CONSUMER = { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2023', strict: true, types: ['node'], typeRoots: [join(ROOT, 'node_modules/@types')] }

/**
 * Type-checks `source` as app.ts of `project` with TypeScript 5.9, which consumers compile with
 * yet, on the declarations TypeScript 7 emitted; what the compiler printed, '' when it compiled
 * (each `@ts-expect-error` line of `source` must then be an error, or it fails).
 */
export async function typecheckAsConsumer (project: string, source: string, compilerOptions: Record<string, unknown> = { ...NODE_CONSUMER, skipLibCheck: true }): Promise<string> {
  writeFileSync(join(project, 'app.ts'), source)
  // TypeScript's own lib files are its to check: a consumer's build checks ours and the packages'.
  writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions: { ...compilerOptions, skipDefaultLibCheck: true, noEmit: true }, files: ['app.ts'] }))
  return await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', project]).then(() => '', (err: { stdout?: string }) => err.stdout ?? String(err))
}
