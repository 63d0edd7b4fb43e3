/**
 * Whether a process id is a process that still runs, for the data directory's lock. kill(pid, 0)
 * alone is not enough: a process killed (`kill -9`) stays in the process table, and answers it,
 * until its parent reaps it (a zombie, for as long as the parent does not wait for it, or while
 * the kernel still tears it down), and a restart right after the kill would be refused all that
 * time. On Linux, /proc tells these apart: state Z (zombie) or X (dead), or the kernel's
 * PF_EXITING flag (it will not run again). Elsewhere kill(pid, 0) is all there is.
 */
import { existsSync, readFileSync } from 'node:fs'

/** The kernel's flag of a process that has begun to exit (include/linux/sched.h). */
const PF_EXITING = 0x4

const hasProc = existsSync('/proc/self/stat')

function answersSignals (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: it exists, as another user's.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** State letter and flags from /proc/<pid>/stat; undefined once the process is gone. */
function procStat (pid: number): { state: string, flags: number } | undefined {
  let text: string
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return undefined
  }
  // The command name, in parentheses, may hold spaces and parentheses: the fields follow its last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
  return { state: fields[0] ?? '', flags: Number(fields[6]) }
}

export function isProcessAlive (pid: number): boolean {
  if (!answersSignals(pid)) return false
  if (!hasProc) return true
  const stat = procStat(pid)
  // Gone from /proc since kill(pid, 0): reaped in between.
  if (stat === undefined) return false
  return stat.state !== 'Z' && stat.state !== 'X' && (stat.flags & PF_EXITING) === 0
}
