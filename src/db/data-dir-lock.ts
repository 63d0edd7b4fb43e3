/**
 * One process at a time in a data directory: two embedded databases writing the same files would
 * corrupt them, and PGlite keeps no lock of its own there. The lock is a file holding the
 * owner's pid; a lock whose process is gone (killed, crashed, even if not yet reaped: a zombie)
 * is stale and taken over (process-alive.ts).
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { DatabaseError } from './errors.js'
import { isProcessAlive } from './process-alive.js'

/** Lock files this process holds: a second open of one of them here is refused too. */
const heldHere = new Set<string>()

function holderOf (lockFile: string): number | undefined {
  try {
    const pid = Number(readFileSync(lockFile, 'utf8').trim())
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

/**
 * Takes `lockFile` for this process, or throws `DB_ERR_LOCKED` naming the process that holds it.
 * A file left with this process's own pid and not held here is from an earlier run that got the
 * same pid (a container restarted), so stale as well.
 */
export function takeDataDirLock (lockFile: string): void {
  if (heldHere.has(lockFile)) throw new DatabaseError('DB_ERR_LOCKED', `the data directory is already open in this process (${lockFile})`)
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(lockFile, `${process.pid}\n`, { flag: 'wx' })
      heldHere.add(lockFile)
      return
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    const holder = holderOf(lockFile)
    if (holder !== undefined && holder !== process.pid && isProcessAlive(holder)) {
      throw new DatabaseError('DB_ERR_LOCKED', `the data directory is in use by process ${holder} (${lockFile})`)
    }
    rmSync(lockFile, { force: true })
  }
  throw new DatabaseError('DB_ERR_LOCKED', `another process took the data directory's lock at the same time (${lockFile})`)
}

/** Gives the lock back, if this process holds it. */
export function releaseDataDirLock (lockFile: string): void {
  if (!heldHere.delete(lockFile)) return
  if (holderOf(lockFile) === process.pid) rmSync(lockFile, { force: true })
}
