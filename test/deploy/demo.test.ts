/**
 * `npm run demo`, the README's first command, as a newcomer runs it: offline, the emulator and the
 * service in one process, listening on this machine only (its demo wallet pays from the
 * emulator's wallet for whoever reaches it), answering the API from the emulator, and gone
 * without a trace on a signal.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { describe, it } from 'node:test'

const ROOT = new URL('../../', import.meta.url).pathname
/**
 * The demo's start script as package.json's `demo` runs it, less the tsx command line: its
 * process relays SIGTERM but not SIGKILL, and a demo left behind would hold this file's pipes.
 */
const DEMO = ['--import', 'tsx', 'scripts/demo.ts']

interface Demo { output: string[], exit: Promise<[number | null, NodeJS.Signals | null]>, stop (): void }

/** Starts the demo on free ports and resolves once it has printed what it listens on. */
async function startDemo (t: { after (fn: () => unknown): void }): Promise<Demo> {
  const child = spawn(process.execPath, DEMO, {
    cwd: ROOT,
    // No HOST or DATA_DIR from the test's environment: the demo's own choices are under test.
    env: { ...Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'HOST' && name !== 'DATA_DIR')), PORT: '0', DEVNODE_PORT: '0', DEVNODE_BLOCK_INTERVAL_MS: '3600000', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const exit = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>
  t.after(async () => {
    // SIGTERM lets a demo that a failed assertion left running remove its data directory.
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await exit
  })
  const output: string[] = []
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => output.push(chunk))
  for await (const line of createInterface({ input: child.stdout })) {
    output.push(line)
    if (line.startsWith('Invoices:')) break
  }
  child.stdout.resume()
  return { output, exit, stop: () => child.kill('SIGTERM') }
}

/** The value printed after `label:` on the demo's banner. */
function printed (demo: Demo, label: string): string {
  const line = demo.output.find(each => each.startsWith(`${label}:`))
  assert.ok(line !== undefined, `the demo prints "${label}:"; it printed:\n${demo.output.join('\n')}`)
  return line.slice(label.length + 1).trim()
}

describe('npm run demo', () => {
  it('listens on this machine only, answers the API from its emulator, and removes its data directory on SIGTERM', async (t) => {
    const demo = await startDemo(t)
    const service = printed(demo, 'Service')
    const [base = '', listening = ''] = /^(\S+)\s+\(listening on (\S+)\)$/.exec(service)?.slice(1) ?? []
    assert.match(listening, /^127\.0\.0\.1:\d+$/, 'the socket is bound to the loopback address')
    assert.equal(base, `http://${listening}`)

    const response = await fetch(`${base}/api/nodeinfo`)
    assert.equal(response.status, 200)
    const body = await response.json() as { message: string, data: { version?: unknown } }
    assert.equal(body.message, 'Node information retrieved successfully')
    assert.equal(typeof body.data.version, 'string')

    const dataDir = printed(demo, 'Invoices')
    assert.ok(existsSync(dataDir), `the run's data directory ${dataDir} exists while it runs`)
    demo.stop()
    assert.deepEqual(await demo.exit, [0, null])
    assert.equal(existsSync(dataDir), false, 'the run\'s data directory is gone')
  })
})
