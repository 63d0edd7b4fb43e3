/**
 * The crash tests' writer: a script run with tsx that prints a line for each write it committed,
 * killed (SIGKILL) once it has printed `lines` of them, at whatever point of its next write.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { SHORT_LIVED_NODE_FLAGS } from './short-lived-node.js'

/** Runs `writer` with `args` until it has printed `lines` lines, then kills it; the lines it printed. */
export async function writeThenKill (writer: string, args: string[], lines: number): Promise<string[]> {
  const child = spawn(process.execPath, [...SHORT_LIVED_NODE_FLAGS, '--import', 'tsx', writer, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  let errors = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { errors += chunk })
  const printed: string[] = []
  const exited = once(child, 'close')
  for await (const line of createInterface({ input: child.stdout })) {
    printed.push(line)
    if (printed.length === lines) child.kill('SIGKILL')
  }
  const [code, signal] = await exited as [number | null, NodeJS.Signals | null]
  assert.equal(signal, 'SIGKILL', `the writer stopped by itself (code ${code}): ${errors}`)
  return printed
}
