/**
 * The watchdog started once the embedded database aborted: a main thread that spins for ever
 * (as a call into an aborted PGlite can) runs no timer, signal handler or request again, so only
 * another thread can end the process. Run in a child process that really spins.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { describe, it } from 'node:test'

const WATCHDOG_URL = new URL('../../src/db/stall-watchdog.ts', import.meta.url).href

/** Runs `script` (an ES module, with tsx) to its end: exit code, signal and stderr. */
async function run (t: { after (fn: () => unknown): void }, script: string): Promise<{ code: number | null, signal: NodeJS.Signals | null, stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'pipe'] })
  t.after(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  const [code, signal] = await once(child, 'close') as [number | null, NodeJS.Signals | null]
  return { code, signal, stderr }
}

describe('the stall watchdog', () => {
  it('kills a process whose main thread spins, after saying why on stderr', async (t) => {
    const { code, signal, stderr } = await run(t, `
      const { startStallWatchdog } = await import(${JSON.stringify(WATCHDOG_URL)})
      startStallWatchdog({ stallMs: 500, message: 'the main thread stopped turning: killed' })
      setTimeout(() => { for (;;) {} }, 0)
    `)
    assert.deepEqual({ code, signal }, { code: null, signal: 'SIGKILL' })
    assert.equal(stderr, 'the main thread stopped turning: killed\n')
  })

  it('neither kills a process that keeps turning nor keeps it alive', async (t) => {
    const { code, signal, stderr } = await run(t, `
      const { startStallWatchdog } = await import(${JSON.stringify(WATCHDOG_URL)})
      startStallWatchdog({ stallMs: 60000, message: 'killed' })
      setTimeout(() => { process.exitCode = 3 }, 100)
    `)
    assert.deepEqual({ code, signal, stderr }, { code: 3, signal: null, stderr: '' })
  })
})
