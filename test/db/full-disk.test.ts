/**
 * A disk that fills up while the embedded database's write-ahead log grows: on a real small file
 * system (a tmpfs mounted for the test, which needs root), the log's next segment cannot be
 * created (`could not write to file "pg_wal/xlogtemp…": No space left on device`), PostgreSQL
 * PANICs and its WebAssembly module aborts. The database must stop with an error that names the
 * directory and the cause, and never be entered again: the next call into the aborted module
 * would spin on the main thread for ever. Everything that could hang runs in a child process,
 * killed (and the test failed) if it has neither finished nor exited after a minute.
 */
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, statfsSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { describe, it } from 'node:test'
import { PGlite } from '@electric-sql/pglite'
import { openDatabase } from '../../src/db/open-database.js'
import { copyTemplateTo } from '../../scripts/pglite-template.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { listeningUrl, startService, type LogLine } from '../helpers/start-service.js'
import { SHORT_LIVED_NODE_FLAGS } from '../helpers/short-lived-node.js'

const WRITER = new URL('./full-disk-writer.ts', import.meta.url).pathname
/** Only turns a hang into a failure: no bound on how fast anything must be. */
const HANG_AFTER_MS = 60_000
const MB = 1024 * 1024
/** A WAL segment is 16 MB: less free space than that, and more than any table here grows by. */
const LEFT_FREE = 4 * MB

type WithAfter = { after (fn: () => unknown): void }

/** A tmpfs of `megabytes` on a new directory, unmounted when the test ends; undefined where mounting is refused. */
function smallDisk (t: WithAfter, megabytes: number): string | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'full-disk-'))
  if (spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${megabytes}m`, 'tmpfs', dir]).status !== 0) {
    rmSync(dir, { recursive: true, force: true })
    return undefined
  }
  t.after(() => {
    spawnSync('umount', ['--lazy', dir])
    rmSync(dir, { recursive: true, force: true })
  })
  return dir
}

/** Writes a file of zeros on `disk` until `left` bytes stay free there. */
function fillUp (disk: string, left: number): void {
  const chunk = Buffer.alloc(MB)
  const fd = openSync(join(disk, 'filler'), 'w')
  try {
    for (;;) {
      const { bavail, bsize } = statfsSync(disk)
      const room = bavail * bsize - left
      if (room <= 0) return
      writeSync(fd, chunk, 0, Math.min(room, chunk.length))
    }
  } finally {
    closeSync(fd)
  }
}

/** Rejects after HANG_AFTER_MS, unless `settled` settles first. */
async function orHang<T> (what: () => string, settled: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const hung = new Promise<never>((_resolve, reject) => { timer = setTimeout(() => reject(new Error(`${what()}: still running after ${HANG_AFTER_MS} ms (a hang)`)), HANG_AFTER_MS) })
  try {
    return await Promise.race([settled, hung])
  } finally {
    clearTimeout(timer)
  }
}

interface Step { step: string, code?: string, message?: string }

/** Runs full-disk-writer.ts to its end; its steps, exit code and stderr. Killed if it hangs. */
async function runWriter (dataDir: string, mode: string): Promise<{ steps: Step[], code: number | null, stderr: string }> {
  const child = spawn(process.execPath, [...SHORT_LIVED_NODE_FLAGS, '--import', 'tsx', WRITER, dataDir, mode], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  const steps: Step[] = []
  createInterface({ input: child.stdout }).on('line', line => { steps.push(JSON.parse(line) as Step) })
  const exited = once(child, 'close') as Promise<[number | null, NodeJS.Signals | null]>
  try {
    const [code] = await orHang(() => `the writer (${mode}) after ${JSON.stringify(steps)}`, exited)
    return { steps, code, stderr }
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
}

// Each test waits on a process of its own, on a disk of its own: they run side by side.
describe('the embedded database on a disk that fills up as its write-ahead log grows', { concurrency: true }, () => {
  for (const mode of ['statement', 'in-transaction']) {
    it(`stops, refuses every call after (${mode}), closes, and opens again once there is room`, async (t) => {
      const disk = smallDisk(t, 64)
      if (disk === undefined) return t.skip('mounting a tmpfs is refused here (the test needs root)')
      const dataDir = join(disk, 'data')
      await copyTemplateTo(dataDir)
      fillUp(disk, LEFT_FREE)

      const { steps, code, stderr } = await runWriter(dataDir, mode)
      assert.equal(code, 0, stderr)
      assert.deepEqual(steps.map(step => step.step), ['open', 'fatal', 'failed', 'later', 'transaction', 'closed'])
      const fatal = steps[1] as Step
      assert.equal(fatal.code, 'DB_ERR_STOPPED')
      assert.ok(fatal.message?.includes(`the embedded database in ${dataDir} stopped`), fatal.message)
      assert.match(fatal.message ?? '', /PANIC: could not write to file "pg_wal\/xlogtemp\.\d+": No space left on device/)
      for (const later of steps.slice(2, 5)) assert.deepEqual(later, { ...fatal, step: later.step })
      assert.equal(existsSync(join(dataDir, 'postgres.lock')), false, 'close gave the lock back')

      // Room again (as an operator would make it): the next start recovers what was committed.
      assert.equal(spawnSync('mount', ['-o', 'remount,size=128m', disk]).status, 0)
      const db = await openDatabase({ dataDir })
      t.after(() => db.close())
      assert.deepEqual((await db.query('SELECT n FROM kept')).rows, [{ n: 1 }])
    })
  }
})

describe('the service on a disk that fills up as its write-ahead log grows', () => {
  it('exits 1 with a fatal line that names the data directory and the cause, instead of hanging', async (t) => {
    const disk = smallDisk(t, 64)
    if (disk === undefined) return t.skip('mounting a tmpfs is refused here (the test needs root)')
    const dataDir = join(disk, 'data')
    // WAL segments of 1 MB (16 by default), none kept for reuse: a few hundred invoices then
    // need a new segment file, where 16 MB would take thousands. The same PostgreSQL code fails.
    mkdirSync(dataDir)
    const initdb = await PGlite.create({ dataDir: join(dataDir, 'postgres'), initDbStartParams: ['--wal-segsize=1', '-c', 'wal_recycle=off', '-c', 'min_wal_size=2MB'] })
    await initdb.close()
    // Migrated, its log brought to 70 % of a segment: from three quarters on, a start would make
    // the next segment at once (PostgreSQL preallocates one), while there is still room.
    const db = await openDatabase({ dataDir })
    const position = async () => Number((await db.query<{ offset: string }>("SELECT ((pg_current_wal_insert_lsn() - '0/0'::pg_lsn) % 1048576)::text AS offset")).rows[0]?.offset)
    if (await position() > 0.7 * MB) await db.query('SELECT pg_switch_wal()')
    await db.query('SELECT pg_logical_emit_message(false, $1, repeat($2, $3))', ['fill', 'x', Math.floor(0.7 * MB) - await position()])
    const segment = (await db.query<{ name: string }>('SELECT pg_walfile_name(pg_current_wal_insert_lsn()) AS name')).rows[0]?.name
    await db.close()
    const walDir = join(dataDir, 'postgres', 'pg_wal')
    assert.deepEqual(readdirSync(walDir).filter(name => /^[0-9A-F]{24}$/.test(name) && name > (segment as string)), [], 'no later segment is ready')
    // Less room than a segment needs, more than the tables grow by in the meantime.
    fillUp(disk, 900 * 1024)

    const node = await startEmulator(t)
    const receiver = (node.dataset.users[1] as { address: string }).address
    const service = startService(t, {
      POCKETNET_NODES: node.url,
      DATA_DIR: dataDir,
      PAYMENT_ADDRESS: receiver,
      PAYMENT_TIPS: 'true',
      PAYMENT_TIP_RATE_LIMIT_MAX: '1000000',
      RATE_LIMIT_MAX: '1000000',
      // Not a test of load shedding: a machine busy with other test lanes would delay the loop.
      MAX_EVENT_LOOP_DELAY_MS: '0',
    })
    const url = await listeningUrl(service)

    // Tips until the process ends: each writes an invoice and its event, and the log grows.
    const state = { ended: false }
    const answers = new Map<number, number>()
    const writes = (async () => {
      for (let tip = 0; tip < 5000 && !state.ended; tip++) {
        const answer = await fetch(`${url}/api/payments/tips`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ amount: 100_000_000 }) }).catch(() => undefined)
        await answer?.arrayBuffer()
        if (answer === undefined) return
        answers.set(answer.status, (answers.get(answer.status) ?? 0) + 1)
      }
    })()
    const exit = await orHang(() => `the service after its disk filled up, answers ${JSON.stringify([...answers])}`, service.exited)
    state.ended = true
    await writes
    assert.deepEqual(exit, { code: 1, signal: null }, service.stderr())
    const fatal = service.lines.find(line => line.level === 60) as (LogLine & { err?: { message?: string, code?: string } }) | undefined
    assert.ok(fatal, `a fatal line; stderr: ${service.stderr()}`)
    assert.equal(fatal.err?.code, 'DB_ERR_STOPPED')
    assert.ok(fatal.err?.message?.includes(`the embedded database in ${dataDir} stopped`), fatal.err?.message)
    assert.match(fatal.err?.message ?? '', /PANIC: could not write to file "pg_wal\/xlogtemp\.\d+": No space left on device/)
  })
})
