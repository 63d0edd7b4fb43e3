/**
 * An initialised, never-migrated embedded (PGlite) data directory, made once per PGlite version
 * in this install (node_modules/.cache) and copied for each new data directory that `npm run
 * demo` and the tests open: initdb in WebAssembly takes seconds of CPU and PGlite's memory to its
 * peak, which every demo start and the suite's processes would otherwise each pay. `npm test`
 * makes it beside the build, before the tests that use it start; the demo, or a test file run
 * alone, makes it on first use. Processes that need it at once wait for one maker under a lock;
 * the directory appears whole or not at all (made elsewhere, then renamed). What is copied is
 * what initdb writes, so a database opened on a copy is one PGlite would have made there.
 */
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

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

/** initdb in a child process: the peak of PGlite's memory stays with it, not with the process that asked. */
async function make (target: string): Promise<void> {
  const work = mkdtempSync(join(CACHE_DIR, 'work-'))
  try {
    const openDatabaseUrl = new URL('../src/db/open-database.ts', import.meta.url).href
    const script = `const { openDatabase } = await import(${JSON.stringify(openDatabaseUrl)}); await (await openDatabase({ dataDir: ${JSON.stringify(work)}, migrations: [] })).close()`
    await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script])
    renameSync(work, target)
  } catch (error) {
    rmSync(work, { recursive: true, force: true })
    throw error
  }
}

let made: Promise<string> | undefined

/** The template's path, made if this install has none for its PGlite. */
export function pgliteTemplate (): Promise<string> {
  made ??= (async () => {
    const target = join(CACHE_DIR, pgliteVersion())
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
        if (!exists(target)) await make(target)
        return target
      } finally {
        rmSync(lock, { recursive: true, force: true })
      }
    }
  })()
  return made
}

interface TemplateFiles { folders: string[], files: Array<[string, Buffer]> }

let loaded: Promise<TemplateFiles> | undefined

/**
 * The template's files, read once per process: writing its thousand files out of memory costs a
 * fraction of the CPU of copying the directory (cpSync, or cp -r; bench/results.md, "Test
 * suite"), and a test process opens dozens.
 */
function templateFiles (): Promise<TemplateFiles> {
  loaded ??= pgliteTemplate().then(template => {
    const folders: string[] = []
    const files: Array<[string, Buffer]> = []
    for (const entry of readdirSync(template, { recursive: true, withFileTypes: true })) {
      const path = join(entry.parentPath, entry.name).slice(template.length + 1)
      if (entry.isDirectory()) folders.push(path)
      else files.push([path, readFileSync(join(template, path))])
    }
    return { folders, files }
  })
  return loaded
}

/** Writes the template's files into `dir`, a new directory, which is then initialised, not migrated. */
export async function copyTemplateTo (dir: string): Promise<void> {
  const { folders, files } = await templateFiles()
  for (const folder of folders) mkdirSync(join(dir, folder), { recursive: true })
  for (const [path, data] of files) writeFileSync(join(dir, path), data)
}

/** A fresh embedded data directory in the temporary folder, initialised, not migrated, for a test that removes it. */
export async function freshDataDir (): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'payments-db-'))
  await copyTemplateTo(dir)
  return dir
}
