/**
 * The grants' rules on both databases: a grant for good or for a time, a renewal that extends
 * from the current end while held and from now once ended, a revocation that ends what is held
 * (renewals to come included) and says why, and a history that keeps every grant.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { EntitlementStore } from '../../src/entitlements/entitlement-store.js'
import { startPostgres } from '../helpers/start-postgres.js'
import { MERCHANT, PAYER } from '../payments/chain-transactions.js'
import { backends, sharedDatabase } from '../payments/databases.js'

const postgres = await startPostgres({ after })
const DAY_S = 86_400
const DAY_MS = DAY_S * 1000
const START = 1_800_000_000_000

let sku = 0
/** A SKU of its own for each test: the tests of a backend share one database. */
const freshSku = (): string => `sku-${++sku}`

for (const backend of backends(postgres)) {
  describe(`entitlements on the ${backend.name} database`, () => {
    const database = sharedDatabase(backend, { before, after })
    const setup = (): { store: EntitlementStore, clock: { now: number } } => {
      const clock = { now: START }
      return { store: new EntitlementStore(database(), { now: () => clock.now }), clock }
    }

    it('grants for good, or for a time that ends on the clock', async () => {
      const { store, clock } = setup()
      const forever = freshSku()
      const monthly = freshSku()
      const kept = await store.grant({ address: PAYER, sku: forever, reason: 'beta tester' })
      assert.deepEqual([kept.sku, kept.address, kept.expiresAtMs, kept.startsAtMs, kept.grantedAtMs, kept.reason, kept.invoiceId], [forever, PAYER, null, START, START, 'beta tester', null])
      await store.grant({ address: PAYER, sku: monthly, durationS: 30 * DAY_S })
      const held = await store.entitlements(PAYER)
      assert.deepEqual(held.filter(each => each.sku === forever || each.sku === monthly), [
        { sku: forever, grantedAtMs: START, expiresAtMs: null, invoiceId: null },
        { sku: monthly, grantedAtMs: START, expiresAtMs: START + 30 * DAY_MS, invoiceId: null },
      ].sort((a, b) => (a.sku < b.sku ? -1 : 1)))
      clock.now = START + 30 * DAY_MS - 1
      assert.ok((await store.entitlements(PAYER)).some(each => each.sku === monthly), 'held until its last millisecond')
      clock.now = START + 30 * DAY_MS
      const later = (await store.entitlements(PAYER)).map(each => each.sku)
      assert.ok(!later.includes(monthly), 'ended at its end')
      assert.ok(later.includes(forever))
      assert.deepEqual(await store.entitlements(MERCHANT).then(list => list.filter(each => each.sku === monthly)), [], 'another address holds nothing of it')
    })

    it('extends a renewal from the current end while held, and from now once ended', async () => {
      const { store, clock } = setup()
      const monthly = freshSku()
      await store.grant({ address: PAYER, sku: monthly, durationS: 30 * DAY_S })
      clock.now = START + 10 * DAY_MS
      const renewal = await store.grant({ address: PAYER, sku: monthly, durationS: 30 * DAY_S })
      assert.deepEqual([renewal.startsAtMs, renewal.expiresAtMs], [START + 30 * DAY_MS, START + 60 * DAY_MS])
      const [held] = (await store.entitlements(PAYER)).filter(each => each.sku === monthly)
      assert.deepEqual(held, { sku: monthly, grantedAtMs: START + 10 * DAY_MS, expiresAtMs: START + 60 * DAY_MS, invoiceId: null })
      // Past the renewal's end: the next grant starts now.
      clock.now = START + 70 * DAY_MS
      const fresh = await store.grant({ address: PAYER, sku: monthly, durationS: DAY_S })
      assert.deepEqual([fresh.startsAtMs, fresh.expiresAtMs], [START + 70 * DAY_MS, START + 71 * DAY_MS])
    })

    it('counts two renewals made at once one after the other', async () => {
      const { store } = setup()
      const monthly = freshSku()
      await Promise.all(Array.from({ length: 6 }, () => store.grant({ address: PAYER, sku: monthly, durationS: DAY_S })))
      const [held] = (await store.entitlements(PAYER)).filter(each => each.sku === monthly)
      assert.equal(held?.expiresAtMs, START + 6 * DAY_MS)
      const ends = (await store.history(PAYER)).filter(grant => grant.sku === monthly).map(grant => grant.expiresAtMs)
      assert.deepEqual(ends, [1, 2, 3, 4, 5, 6].map(days => START + days * DAY_MS))
    })

    it('revokes what is held, renewals to come included, with its reason, and keeps every grant', async () => {
      const { store, clock } = setup()
      const monthly = freshSku()
      const first = await store.grant({ address: PAYER, sku: monthly, durationS: 30 * DAY_S })
      clock.now = START + DAY_MS
      await store.grant({ address: PAYER, sku: monthly, durationS: 30 * DAY_S })
      clock.now = START + 2 * DAY_MS
      const revoked = await store.revoke(PAYER, monthly, 'refunded')
      assert.equal(revoked.length, 2)
      assert.ok(revoked.every(grant => grant.revokedAtMs === START + 2 * DAY_MS && grant.revokeReason === 'refunded'))
      assert.deepEqual((await store.entitlements(PAYER)).filter(each => each.sku === monthly), [])
      assert.deepEqual(await store.revoke(PAYER, monthly, 'again'), [], 'nothing left to revoke')
      // A grant after the revocation starts now, not at the revoked run's end.
      clock.now = START + 3 * DAY_MS
      const again = await store.grant({ address: PAYER, sku: monthly, durationS: DAY_S })
      assert.deepEqual([again.startsAtMs, again.expiresAtMs], [START + 3 * DAY_MS, START + 4 * DAY_MS])
      const history = (await store.history(PAYER)).filter(grant => grant.sku === monthly)
      assert.deepEqual(history.map(grant => [grant.id === first.id, grant.revokeReason]), [[true, 'refunded'], [false, 'refunded'], [false, null]])
    })

    it('leaves an ended grant as it ended when the SKU is revoked later', async () => {
      const { store, clock } = setup()
      const trial = freshSku()
      await store.grant({ address: PAYER, sku: trial, durationS: DAY_S })
      clock.now = START + 2 * DAY_MS
      assert.deepEqual(await store.revoke(PAYER, trial, 'abuse'), [])
      const [grant] = (await store.history(PAYER)).filter(each => each.sku === trial)
      assert.deepEqual([grant?.revokedAtMs, grant?.revokeReason], [null, null])
    })

    it('keeps a SKU held for good whatever timed grants come on top', async () => {
      const { store, clock } = setup()
      const pro = freshSku()
      await store.grant({ address: PAYER, sku: pro })
      await store.grant({ address: PAYER, sku: pro, durationS: DAY_S })
      clock.now = START + 10 * DAY_MS
      const [held] = (await store.entitlements(PAYER)).filter(each => each.sku === pro)
      assert.deepEqual([held?.expiresAtMs, held?.grantedAtMs], [null, START])
    })

    it('refuses a row the constraints forbid, whatever the code does', async () => {
      const db = database()
      const insert = (sku: string, starts: number, ends: number | null): Promise<unknown> => db.query(
        'INSERT INTO entitlement_grants (address, sku, granted_at_ms, starts_at_ms, expires_at_ms) VALUES ($1, $2, $3, $3, $4)', [PAYER, sku, starts, ends])
      await assert.rejects(insert('Premium', START, null), { code: '23514' })
      await assert.rejects(insert('ok', START, START), { code: '23514' })
      await assert.rejects(db.query('UPDATE entitlement_grants SET revoked_at_ms = 1 WHERE address = $1', [PAYER]), { code: '23514' })
    })
  })
}
