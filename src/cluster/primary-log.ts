/**
 * The primary's log lines, in pino's shape (numeric level, time, pid, hostname, msg) so they sit
 * in one stream with the workers' and the same tools read both. A few lines rather than pino
 * itself: pino is fastify's dependency, not ours, and the primary loads nothing of the app.
 */
import { hostname } from 'node:os'
import type { AppConfig } from '../config.js'

const LEVELS = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity } as const

type Fields = Record<string, unknown>
type Write = (fields: Fields, msg: string) => void

export interface PrimaryLog {
  info: Write
  warn: Write
  error: Write
  fatal: Write
}

export function createPrimaryLog (level: AppConfig['LOG_LEVEL'], stream: { write (line: string): unknown } = process.stdout): PrimaryLog {
  const base = { pid: process.pid, hostname: hostname(), name: 'primary' }
  const at = (name: keyof PrimaryLog): Write => {
    const number = LEVELS[name]
    if (number < LEVELS[level]) return () => {}
    return (fields, msg) => { stream.write(`${JSON.stringify({ level: number, time: Date.now(), ...base, ...fields, msg })}\n`) }
  }
  return { info: at('info'), warn: at('warn'), error: at('error'), fatal: at('fatal') }
}
