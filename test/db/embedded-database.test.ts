import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { describe, it } from 'node:test'
import { openDatabase } from '../../src/db/open-database.js'
import { freshDataDir } from '../payments/databases.js'
import { waitFor } from '../helpers/wait-for.js'

async function dataDir (t: { after (fn: () => unknown): void }): Promise<string> {
  const dir = await freshDataDir()
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

describe('the embedded database', () => {
  it('has one owner at a time: a second open is refused until the first closes', async (t) => {
    const dir = await dataDir(t)
    const db = await openDatabase({ dataDir: dir })
    assert.equal(readFileSync(join(dir, 'postgres.lock'), 'utf8').trim(), String(process.pid))
    await assert.rejects(openDatabase({ dataDir: dir }), { code: 'DB_ERR_LOCKED', message: /already open in this process/ })
    await db.close()
    assert.equal(existsSync(join(dir, 'postgres.lock')), false)
    const again = await openDatabase({ dataDir: dir })
    await again.close()
    await again.close()
  })

  it('refuses a directory another running process holds', async (t) => {
    const dir = await dataDir(t)
    // The test runner's parent is alive for as long as this test runs.
    writeFileSync(join(dir, 'postgres.lock'), `${process.ppid}\n`)
    await assert.rejects(openDatabase({ dataDir: dir }), { code: 'DB_ERR_LOCKED', message: new RegExp(`in use by process ${process.ppid}`) })
  })

  it('takes over a lock left by a process that is gone, or by an earlier run with this pid', async (t) => {
    const dir = await dataDir(t)
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout
    for (const holder of [gone, String(process.pid), 'garbage']) {
      writeFileSync(join(dir, 'postgres.lock'), `${holder}\n`)
      const db = await openDatabase({ dataDir: dir })
      assert.equal(readFileSync(join(dir, 'postgres.lock'), 'utf8').trim(), String(process.pid), holder)
      await db.close()
    }
  })

  it('takes over the lock of a process killed (kill -9) and not yet reaped, a zombie', async (t) => {
    const dir = await dataDir(t)
    const openDatabaseUrl = new URL('../../src/db/open-database.ts', import.meta.url).href
    const holder = `const { openDatabase } = await import(${JSON.stringify(openDatabaseUrl)}); await openDatabase({ dataDir: ${JSON.stringify(dir)} }); process.stdout.write('open\\n'); setInterval(() => {}, 60_000)`
    // The holder's parent is a shell that became `sleep`, which never waits for its children:
    // once killed, the holder stays a zombie until that parent ends.
    const parent = spawn('sh', ['-c', '"$0" --import tsx --input-type=module -e "$1" & exec sleep 600 >/dev/null', process.execPath, holder], { stdio: ['ignore', 'pipe', 'inherit'] })
    t.after(() => parent.kill('SIGKILL'))
    for await (const line of createInterface({ input: parent.stdout })) if (line === 'open') break
    const pid = Number(readFileSync(join(dir, 'postgres.lock'), 'utf8'))
    process.kill(pid, 'SIGKILL')
    await waitFor('the holder a zombie', () => /^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8')))
    // Still in the process table: kill(pid, 0) answers as for a running process.
    assert.equal(process.kill(pid, 0), true)

    const db = await openDatabase({ dataDir: dir })
    t.after(() => db.close())
    assert.equal(readFileSync(join(dir, 'postgres.lock'), 'utf8').trim(), String(process.pid))
  })

  it('keeps what was committed across a close and an open', async (t) => {
    const dir = await dataDir(t)
    const db = await openDatabase({ dataDir: dir })
    await db.query("INSERT INTO leases (name, holder, expires_at_ms) VALUES ('kept', 'me', 9007199254740991)")
    await db.close()
    const reopened = await openDatabase({ dataDir: dir })
    t.after(() => reopened.close())
    assert.equal(reopened.kind, 'embedded')
    assert.deepEqual((await reopened.query('SELECT holder, expires_at_ms FROM leases')).rows, [{ holder: 'me', expires_at_ms: Number.MAX_SAFE_INTEGER }])
  })

  it('rolls a transaction back when its work throws', async (t) => {
    const dir = await dataDir(t)
    const db = await openDatabase({ dataDir: dir })
    t.after(() => db.close())
    await assert.rejects(db.transaction(async sql => {
      await sql.query("INSERT INTO leases (name, holder, expires_at_ms) VALUES ('rolled-back', 'me', 1)")
      throw new Error('no')
    }), { message: 'no' })
    assert.deepEqual((await db.query('SELECT name FROM leases')).rows, [])
  })
})

describe('opening the database', () => {
  it('needs a directory or a postgres:// URL', async () => {
    await assert.rejects(openDatabase({}), { code: 'DB_ERR_OPTIONS' })
    await assert.rejects(openDatabase({ databaseUrl: 'mysql://x' }), { code: 'DB_ERR_OPTIONS' })
  })

  it('closes the database when a migration fails, so that it can be opened again', async (t) => {
    const dir = await freshDataDir('initialised')
    t.after(() => rmSync(dir, { recursive: true, force: true }))
    await assert.rejects(openDatabase({ dataDir: dir, migrations: [{ version: 1, name: 'broken', sql: 'NOT SQL' }] }), { code: '42601' })
    assert.equal(existsSync(join(dir, 'postgres.lock')), false)
  })
})
