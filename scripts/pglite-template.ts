/**
 * Embedded (PGlite) data directories made once in this install (node_modules/.cache) and copied
 * for each new data directory that `npm run demo` and the tests open, of two kinds:
 *
 * - `initialised`: what initdb writes, never migrated; one per PGlite version. initdb in
 *   WebAssembly takes seconds of CPU and PGlite's memory to its peak, which every demo start and
 *   the suite's processes would otherwise each pay.
 * - `migrated`: that, migrated to the service's schema (src/db/migrations/schema-history.ts); one
 *   per PGlite version and schema (its migrations' SQL). Migrating a new database took a second
 *   of CPU, which the suite paid about a hundred times (bench/results.md, "Test suite"). What the
 *   migrations do to an empty database stays tested: test/db/migrate.test.ts starts from
 *   `initialised`.
 *
 * `npm test` makes both beside the build, before the tests that use them start; the demo, or a
 * test file run alone, makes them on first use. Processes that need one at once wait for one
 * maker under a lock; a directory appears whole or not at all (made elsewhere, then renamed).
 * What is copied is what PGlite wrote, so a database opened on a copy is one PGlite would have
 * made there.
 */
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { MIGRATIONS } from '../src/db/migrations/schema-history.js'

export type TemplateKind = 'initialised' | 'migrated'

const ROOT = new URL('../', import.meta.url).pathname
/** Kept from one run to the next, and gone with the install it was made by. */
const CACHE_DIR = join(ROOT, 'node_modules', '.cache', 'pglite-template')
/** A lock older than this was left by a maker that died. */
const STALE_LOCK_MS = 120_000

function pgliteVersion (): string {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'node_modules', '@electric-sql', 'pglite', 'package.json'), 'utf8')) as { version: string }
  return manifest.version
}

const exists = (path: string): boolean => statSync(path, { throwIfNoEntry: false }) !== undefined

/** The service's schema, by its migrations' SQL: a migration added or changed makes a new template. */
function schemaHash (): string {
  return createHash('sha256').update(JSON.stringify(MIGRATIONS.map(({ version, name, sql }) => [version, name, sql]))).digest('hex').slice(0, 16)
}

function templateName (kind: TemplateKind): string {
  return kind === 'initialised' ? pgliteVersion() : `${pgliteVersion()}-schema-${schemaHash()}`
}

/**
 * Opened (initdb) or migrated in a child process: the peak of PGlite's memory stays with it, not
 * with the process that asked. The migrated one starts from a copy of the initialised one.
 */
async function make (target: string, kind: TemplateKind): Promise<void> {
  const work = mkdtempSync(join(CACHE_DIR, 'work-'))
  try {
    if (kind === 'migrated') await copyTemplateTo(work, 'initialised')
    const openDatabaseUrl = new URL('../src/db/open-database.ts', import.meta.url).href
    const migrations = kind === 'migrated' ? '' : ', migrations: []'
    const script = `const { openDatabase } = await import(${JSON.stringify(openDatabaseUrl)}); await (await openDatabase({ dataDir: ${JSON.stringify(work)}${migrations} })).close()`
    await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script])
    renameSync(work, target)
  } catch (error) {
    rmSync(work, { recursive: true, force: true })
    throw error
  }
}

const made = new Map<TemplateKind, Promise<string>>()

/** The template's path, made if this install has none of this kind for its PGlite (and schema). */
export function pgliteTemplate (kind: TemplateKind = 'migrated'): Promise<string> {
  let path = made.get(kind)
  if (path !== undefined) return path
  path = (async () => {
    const target = join(CACHE_DIR, templateName(kind))
    const lock = `${target}.lock`
    mkdirSync(CACHE_DIR, { recursive: true })
    for (;;) {
      if (exists(target)) return target
      try {
        mkdirSync(lock)
      } catch {
        // Another process makes it; a lock left by one that died is taken over.
        const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now())
        if (age > STALE_LOCK_MS) rmSync(lock, { recursive: true, force: true })
        await new Promise(resolve => setTimeout(resolve, 100))
        continue
      }
      try {
        if (!exists(target)) await make(target, kind)
        return target
      } finally {
        rmSync(lock, { recursive: true, force: true })
      }
    }
  })()
  made.set(kind, path)
  return path
}

interface TemplateFiles { folders: string[], files: Array<[string, Buffer]> }

const loaded = new Map<TemplateKind, Promise<TemplateFiles>>()

/**
 * The template's files, read once per process: writing its thousand files out of memory costs a
 * fraction of the CPU of copying the directory (cpSync, or cp -r; bench/results.md, "Test
 * suite"), and a test process opens dozens.
 */
function templateFiles (kind: TemplateKind): Promise<TemplateFiles> {
  let read = loaded.get(kind)
  if (read !== undefined) return read
  read = pgliteTemplate(kind).then(template => {
    const folders: string[] = []
    const files: Array<[string, Buffer]> = []
    for (const entry of readdirSync(template, { recursive: true, withFileTypes: true })) {
      const path = join(entry.parentPath, entry.name).slice(template.length + 1)
      if (entry.isDirectory()) folders.push(path)
      else files.push([path, readFileSync(join(template, path))])
    }
    return { folders, files }
  })
  loaded.set(kind, read)
  return read
}

/** Writes the template's files into `dir`, a new directory: migrated to the service's schema, or (`initialised`) not migrated. */
export async function copyTemplateTo (dir: string, kind: TemplateKind = 'migrated'): Promise<void> {
  const { folders, files } = await templateFiles(kind)
  for (const folder of folders) mkdirSync(join(dir, folder), { recursive: true })
  for (const [path, data] of files) writeFileSync(join(dir, path), data)
}

/** A fresh embedded data directory in the temporary folder, of the template's `kind`, for a test that removes it. */
export async function freshDataDir (kind: TemplateKind = 'migrated'): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'payments-db-'))
  await copyTemplateTo(dir, kind)
  return dir
}
