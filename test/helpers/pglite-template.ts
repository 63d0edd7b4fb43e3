/**
 * An initialised, never-migrated embedded (PGlite) data directory, made once per PGlite version
 * on this machine and copied for every test that needs an embedded database: initdb in
 * WebAssembly takes seconds of CPU and PGlite's memory to its peak, and the suite's processes
 * would otherwise each pay it. `npm test` makes it beside the build, before the tests that use it
 * start; a test file run alone makes it on first use. Processes that need it at once wait for one
 * maker under a lock; the directory appears whole or not at all (made elsewhere, then renamed).
 */
import { execFile } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const ROOT = new URL('../../', import.meta.url).pathname
/** A lock older than this was left by a maker that died. */
const STALE_LOCK_MS = 120_000

function pgliteVersion (): string {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'node_modules', '@electric-sql', 'pglite', 'package.json'), 'utf8')) as { version: string }
  return manifest.version
}

const exists = (path: string): boolean => statSync(path, { throwIfNoEntry: false }) !== undefined

/** initdb in a child process: the peak of PGlite's memory stays with it, not with the tests. */
async function make (target: string): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'pglite-template-work-'))
  try {
    const openDatabaseUrl = new URL('../../src/db/open-database.ts', import.meta.url).href
    const script = `const { openDatabase } = await import(${JSON.stringify(openDatabaseUrl)}); await (await openDatabase({ dataDir: ${JSON.stringify(work)}, migrations: [] })).close()`
    await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script])
    renameSync(work, target)
  } catch (error) {
    rmSync(work, { recursive: true, force: true })
    throw error
  }
}

let made: Promise<string> | undefined

/** The template's path, made if this machine has none for the installed PGlite. */
export function pgliteTemplate (): Promise<string> {
  made ??= (async () => {
    const target = join(tmpdir(), `bastyon-test-pglite-${pgliteVersion()}`)
    const lock = `${target}.lock`
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

/** A fresh embedded data directory, initialised, not migrated, for a test that removes it. */
export async function freshDataDir (): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'payments-db-'))
  cpSync(await pgliteTemplate(), dir, { recursive: true })
  return dir
}
