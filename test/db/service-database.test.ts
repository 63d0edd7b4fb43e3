/**
 * `app.database`, the service's one database: with several workers (WEB_CONCURRENCY above 1) and
 * no DATABASE_URL it refuses to open the embedded database, which one process only can own, even
 * where the configuration let it through (payments and storage off, entitlements used from server
 * code), with one line saying why; a server database opens with any number of workers.
 */
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { startApp } from '../helpers/build-app.js'
import { startPostgres } from '../helpers/start-postgres.js'
import { PAYER } from '../payments/chain-transactions.js'

const postgres = await startPostgres({ after })
/** No call reaches a node here: nothing listens on the discard port. */
const NODES = ['http://127.0.0.1:9']

describe('app.database with several workers', () => {
  it('refuses the embedded database, and so do the entitlements that need it, touching no file', async (t) => {
    const parent = mkdtempSync(join(tmpdir(), 'service-database-'))
    t.after(() => rmSync(parent, { recursive: true, force: true }))
    const dataDir = join(parent, 'data')
    const { app } = await startApp(t, { nodes: NODES, env: { WEB_CONCURRENCY: '2', DATA_DIR: dataDir, POCKETNET_NETWORK: 'regtest' } })
    const refusal = { name: 'DatabaseError', code: 'DB_ERR_OPTIONS', message: 'WEB_CONCURRENCY is 2 and DATABASE_URL is empty: the embedded database can be opened by one process only, so several workers need DATABASE_URL' }
    await assert.rejects(app.database.open(), refusal)
    await assert.rejects(app.entitlements.grant(PAYER, 'premium'), refusal)
    await assert.rejects(app.database.open(), refusal, 'every time')
    assert.equal(app.database.isOpen, false)
    assert.equal(existsSync(dataDir), false, 'no data directory made, no lock taken')
    assert.deepEqual(readdirSync(parent), [])
  })

  it('opens a server database with several workers', async (t) => {
    const { app } = await startApp(t, { nodes: NODES, env: { WEB_CONCURRENCY: '2', DATABASE_URL: await postgres.freshDatabase(), POCKETNET_NETWORK: 'regtest' } })
    const grant = await app.entitlements.grant(PAYER, 'premium')
    assert.deepEqual(await app.entitlements.list(PAYER), [{ sku: 'premium', grantedAtMs: grant.grantedAtMs, expiresAtMs: null, invoiceId: null }])
    assert.equal(app.database.isOpen, true)
  })
})
