/**
 * A real PostgreSQL server (Debian's `postgresql`, which .ci/run installs) on a free loopback
 * port, in a fresh temporary directory (initdb), stopped and removed when the last test that asked
 * for it ends. One per process: the files of a test group share it (initdb and a start cost a
 * second or two each), and `freshDatabase()` gives each test a database of its own on it. Run as
 * root (CI, containers), the server runs as the `postgres` user, since PostgreSQL refuses root.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { freePort } from './free-port.js'

type WithAfter = { after (fn: () => unknown): void }

export interface TestPostgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string
  port: number
  /** A new empty database on the server; its URL. */
  freshDatabase (): Promise<string>
}

/** initdb, postgres: $POSTGRES_BIN_DIR, else Debian's newest /usr/lib/postgresql/<version>/bin, else the PATH. */
function binDir (): string {
  if (process.env.POSTGRES_BIN_DIR) return process.env.POSTGRES_BIN_DIR
  const root = '/usr/lib/postgresql'
  const versions = existsSync(root) ? readdirSync(root).filter(version => existsSync(join(root, version, 'bin', 'initdb'))) : []
  versions.sort((a, b) => Number(b) - Number(a))
  return versions[0] === undefined ? '' : join(root, versions[0], 'bin')
}

/** The uid and gid to run the server as: the `postgres` user when we are root, else ourselves. */
function serverUser (): { uid: number, gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined
  const id = (flag: string): number => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim())
  const uid = id('-u')
  const gid = id('-g')
  if (!Number.isSafeInteger(uid) || uid <= 0) throw new Error('PostgreSQL refuses to run as root, and there is no postgres user to run it as (apt-get install postgresql creates one)')
  return { uid, gid }
}

async function untilAnswers (url: string, child: ChildProcess, output: () => string): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt++) {
    if (child.exitCode !== null) throw new Error(`postgres exited with code ${child.exitCode}: ${output()}`)
    const client = new pg.Client({ connectionString: url })
    client.on('error', () => {})
    try {
      await client.connect()
      await client.query('SELECT 1')
      await client.end()
      return
    } catch {
      await client.end().catch(() => {})
    }
    await new Promise(resolve => setTimeout(resolve, 25))
  }
  throw new Error(`postgres did not answer: ${output()}`)
}

let shared: Promise<TestPostgres> | undefined
let users = 0
let stopShared: (() => Promise<void>) | undefined

/** The process's server, started on first use; `t.after` lets it go (the last one stops it). */
export async function startPostgres (t: WithAfter): Promise<TestPostgres> {
  users++
  t.after(async () => {
    if (--users > 0) return
    const stop = stopShared
    shared = stopShared = undefined
    await stop?.()
  })
  shared ??= start({ after: fn => { stopShared = fn as () => Promise<void> } })
  return shared
}

async function start (t: WithAfter): Promise<TestPostgres> {
  const bin = binDir()
  const initdb = bin === '' ? 'initdb' : join(bin, 'initdb')
  const postgres = bin === '' ? 'postgres' : join(bin, 'postgres')
  const user = serverUser()
  const dir = mkdtempSync(join(tmpdir(), 'test-postgres-'))
  if (user !== undefined) chownSync(dir, user.uid, user.gid)
  const dataDir = join(dir, 'data')
  const init = spawnSync(initdb, ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-locale', '--no-sync'], { encoding: 'utf8', ...user })
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true })
    throw new Error(`initdb failed (${init.error?.message ?? `code ${init.status}`}): ${init.stderr}. Debian: apt-get install postgresql`)
  }
  let output = ''
  let child: ChildProcess | undefined
  // One hook, so that the server stops before its directory goes, whatever order hooks run in.
  t.after(async () => {
    const running = child
    if (running !== undefined && running.exitCode === null && running.signalCode === null) {
      const exited = once(running, 'exit')
      // Fast shutdown: the server ends its connections and stops.
      running.kill('SIGINT')
      await exited
    }
    rmSync(dir, { recursive: true, force: true })
  })
  // A port found free can be taken by another test's server before postgres binds it (the suite
  // starts many at once): then it exits at once, and another port is tried.
  let port = 0
  let url = ''
  for (let attempt = 1; ; attempt++) {
    port = await freePort()
    url = `postgres://postgres@127.0.0.1:${port}/postgres`
    output = ''
    // fsync off: what these tests check is concurrency and constraints, not the server's own durability.
    const started = child = spawn(postgres, ['-D', dataDir, '-p', String(port), '-h', '127.0.0.1', '-k', dir, '-c', 'fsync=off', '-c', 'max_connections=100'], { stdio: ['ignore', 'pipe', 'pipe'], ...user })
    started.stdout?.on('data', (chunk: Buffer) => { output = (output + chunk.toString()).slice(-4000) })
    started.stderr?.on('data', (chunk: Buffer) => { output = (output + chunk.toString()).slice(-4000) })
    started.once('error', () => {})
    try {
      await untilAnswers(url, started, () => output)
      break
    } catch (err) {
      if (attempt === 5 || started.exitCode === null) throw err
    }
  }
  let databases = 0
  return {
    url,
    port,
    async freshDatabase () {
      const name = `test_${++databases}`
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      try {
        await client.query(`CREATE DATABASE ${name}`)
      } finally {
        await client.end()
      }
      return `postgres://postgres@127.0.0.1:${port}/${name}`
    },
  }
}
