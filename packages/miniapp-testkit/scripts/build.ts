/**
 * `npm run build` (and prepack): the package's dist/, with the emulator's sources compiled into it.
 *
 * The emulator stays in the repository's devnode/, where the service's tests import it, so the
 * compiler sees src/ and devnode/ from the repository's root and emits the two side by side in
 * dist/.staging. They are then laid out as the package ships them: src/ becomes dist/, devnode/
 * dist/emulator/, and the relative imports between them are rewritten to match. The build fails
 * on a file of any other folder, and on an import that would leave the package or miss its file.
 */
import { execFileSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'

const PACKAGE = resolve(import.meta.dirname, '..')
const ROOT = resolve(PACKAGE, '../..')
const DIST = join(PACKAGE, 'dist')
const STAGING = join(DIST, '.staging')
const TSC = join(ROOT, 'node_modules', 'typescript-native', 'bin', 'tsc')
const BIN = join(DIST, 'bin', 'devnode.js')

/** Each folder of the repository the package ships, and where in dist/ it goes. */
const LAYOUT = new Map([
  [join(ROOT, 'packages', 'miniapp-testkit', 'src'), DIST],
  [join(ROOT, 'devnode'), join(DIST, 'emulator')],
])

/** Relative module specifiers as tsc emits them: `from '…'`, `import '…'`, `import('…')`. */
const SPECIFIER = /(\bfrom\s*|\bimport\s*\(?\s*)(['"])(\.{1,2}\/[^'"]+)\2/g

function filesUnder (dir: string): string[] {
  return (readdirSync(dir, { recursive: true, withFileTypes: true }))
    .filter(entry => entry.isFile())
    .map(entry => join(entry.parentPath, entry.name))
}

/** Where a path of the repository's tree is in dist/, or undefined outside the folders shipped. */
function shippedPath (repositoryPath: string): string | undefined {
  for (const [from, to] of LAYOUT) {
    if (repositoryPath === from || repositoryPath.startsWith(from + sep)) return join(to, relative(from, repositoryPath))
  }
  return undefined
}

function relativeSpecifier (fromFile: string, target: string): string {
  const path = relative(dirname(fromFile), target).split(sep).join('/')
  return path.startsWith('.') ? path : `./${path}`
}

/** The file a specifier names: the .js itself, or for a declaration its .d.ts. */
function namedFile (file: string, specifier: string): string {
  const target = resolve(dirname(file), specifier)
  return file.endsWith('.d.ts') ? target.replace(/\.js$/, '.d.ts') : target
}

rmSync(DIST, { recursive: true, force: true })
execFileSync(process.execPath, [TSC, '-p', join(PACKAGE, 'tsconfig.json')], { cwd: PACKAGE, stdio: 'inherit' })

const moved: string[] = []
for (const staged of filesUnder(STAGING)) {
  const repositoryPath = join(ROOT, relative(STAGING, staged))
  const shipped = shippedPath(repositoryPath)
  if (shipped === undefined) throw new Error(`the testkit imports ${relative(ROOT, repositoryPath)}: it may import only its own src/ and devnode/`)
  const text = readFileSync(staged, 'utf8').replace(SPECIFIER, (whole, keyword: string, quote: string, specifier: string) => {
    const target = shippedPath(resolve(dirname(repositoryPath), specifier))
    if (target === undefined) throw new Error(`${relative(ROOT, repositoryPath)} imports ${specifier}, outside what the package ships`)
    return `${keyword}${quote}${relativeSpecifier(shipped, target)}${quote}`
  })
  mkdirSync(dirname(shipped), { recursive: true })
  writeFileSync(shipped, text)
  moved.push(shipped)
}
rmSync(STAGING, { recursive: true, force: true })

// Every relative import now names a file of dist/.
for (const file of moved) {
  for (const [, , , specifier] of readFileSync(file, 'utf8').matchAll(SPECIFIER)) {
    const target = namedFile(file, specifier as string)
    if (!target.startsWith(DIST + sep) || !existsSync(target)) throw new Error(`${relative(PACKAGE, file)} imports ${specifier}, which is no file of dist/`)
  }
}
if (!readFileSync(BIN, 'utf8').startsWith('#!/usr/bin/env node\n')) throw new Error(`${relative(PACKAGE, BIN)} lost its #! line`)
chmodSync(BIN, 0o755)
