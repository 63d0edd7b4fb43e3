/**
 * `app.entitlements` without HTTP, on the embedded database: `has` answered from the per-user
 * cache (no query while fresh), the entry dropped by a grant or a revocation and at the latest
 * after its time to live, a read that a change overtook never kept, a subscription ending on time
 * whatever the cache holds; the checks on what it is given; the changes it announces.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Database } from '../../src/db/database.js'
import type { Entitlement } from '../../src/entitlements/entitlement.js'
import { EntitlementStore } from '../../src/entitlements/entitlement-store.js'
import { EntitlementsService, type EntitlementChange } from '../../src/entitlements/entitlements-service.js'
import { startPostgres } from '../helpers/start-postgres.js'
import { MERCHANT, PAYER } from '../payments/chain-transactions.js'
import { backends, sharedDatabase } from '../payments/databases.js'

const postgres = await startPostgres({ after })
const [embedded] = backends(postgres)
const START = 1_800_000_000_000
const TTL_MS = 5000

/** A store that counts its reads of what an address holds, and can hold the next one back. */
class CountingStore extends EntitlementStore {
  reads = 0
  gate: Promise<void> | undefined
  override async entitlements (address: string): Promise<Entitlement[]> {
    this.reads++
    const read = super.entitlements(address)
    const gate = this.gate
    if (gate !== undefined) await gate
    return read
  }
}

let counter = 0
/** A SKU of its own for each test: the tests share one database. */
const freshSku = (): string => `svc-${++counter}`

describe('app.entitlements', () => {
  const database = sharedDatabase(embedded!, { before, after })
  function setup (ttlMs = TTL_MS) {
    const time = { now: START, clock: 1000 }
    const store = new CountingStore(database() as Database, { now: () => time.now })
    const changes: Array<[string, EntitlementChange]> = []
    const service = new EntitlementsService({
      store: async () => store,
      network: 'regtest',
      now: () => time.now,
      clock: () => time.clock,
      cacheTtlMs: ttlMs,
      maxCachedUsers: 100,
      announce: (address, change) => changes.push([address, change]),
    })
    return { service, store, time, changes }
  }

  it('answers a repeated check from the cache, and reads again once a grant or a revocation dropped it', async () => {
    const { service, store } = setup()
    const sku = freshSku()
    assert.equal(await service.has(PAYER, sku), false)
    assert.equal(await service.has(PAYER, sku), false)
    assert.equal(store.reads, 1, 'the second check asked no query')
    await service.grant(PAYER, sku, { durationS: 60 })
    assert.equal(await service.has(PAYER, sku), true)
    assert.equal(await service.has(PAYER, sku), true)
    assert.equal(store.reads, 2)
    await service.revoke(PAYER, sku, 'refunded')
    assert.equal(await service.has(PAYER, sku), false)
    assert.equal(store.reads, 3)
  })

  it('ends a subscription on time from the cache, without a read', async () => {
    const { service, store, time } = setup(3_600_000)
    const sku = freshSku()
    await service.grant(PAYER, sku, { durationS: 60 })
    assert.equal(await service.has(PAYER, sku), true)
    time.now = START + 59_999
    assert.equal(await service.has(PAYER, sku), true)
    time.now = START + 60_000
    assert.equal(await service.has(PAYER, sku), false)
    assert.equal(store.reads, 1)
  })

  it('reads again once an entry is older than its time to live: the bound on a change it was not told of', async () => {
    const { service, store, time } = setup()
    const sku = freshSku()
    assert.equal(await service.has(PAYER, sku), false)
    // Another instance grants, and no message comes: this one still answers from its entry.
    await new EntitlementStore(database() as Database, { now: () => time.now }).grant({ address: PAYER, sku })
    time.clock += TTL_MS - 1
    assert.equal(await service.has(PAYER, sku), false)
    time.clock += 2
    assert.equal(await service.has(PAYER, sku), true)
    assert.equal(store.reads, 2)
  })

  it('keeps no read that a change overtook', async () => {
    const { service, store } = setup()
    const sku = freshSku()
    let release!: () => void
    store.gate = new Promise(resolve => { release = resolve })
    // The read starts before the grant commits, and ends after it.
    const early = service.has(PAYER, sku)
    await service.grant(PAYER, sku)
    store.gate = undefined
    release()
    assert.equal(await early, false, 'what the database held when the check began')
    assert.equal(await service.has(PAYER, sku), true, 'not the overtaken read')
  })

  it('shares one read among the checks that miss at once', async () => {
    const { service, store } = setup()
    const sku = freshSku()
    const answers = await Promise.all(Array.from({ length: 5 }, () => service.has(MERCHANT, sku)))
    assert.deepEqual([answers, store.reads], [[false, false, false, false, false], 1])
  })

  it('reads the database on every check when the time to live is 0', async () => {
    const { service, store } = setup(0)
    const sku = freshSku()
    await service.has(PAYER, sku)
    await service.has(PAYER, sku)
    assert.equal(store.reads, 2)
  })

  it('announces grants and revocations on the user\'s own events, and a revocation of nothing not at all', async () => {
    const { service, changes, time } = setup()
    const sku = freshSku()
    const grant = await service.grant(PAYER, sku, { durationS: 60, reason: 'a gift' })
    assert.deepEqual([grant.reason, grant.invoiceId], ['a gift', null])
    assert.deepEqual(await service.revoke(MERCHANT, sku, 'never held'), [])
    time.now += 1000
    const revoked = await service.revoke(PAYER, sku, 'refunded')
    assert.deepEqual(revoked.map(each => [each.id, each.revokeReason, each.revokedAtMs]), [[grant.id, 'refunded', START + 1000]])
    assert.deepEqual(changes, [
      [PAYER, { change: 'granted', sku, grantedAt: new Date(START).toISOString(), expiresAt: new Date(START + 60_000).toISOString(), invoiceId: null }],
      [PAYER, { change: 'revoked', sku }],
    ])
    assert.deepEqual((await service.history(PAYER)).filter(each => each.sku === sku).map(each => each.revokeReason), ['refunded'])
    assert.deepEqual(await service.list(PAYER).then(list => list.filter(each => each.sku === sku)), [])
  })

  it('refuses a malformed SKU, address, duration or reason before asking the database', async () => {
    const { service, store } = setup()
    const refusals: Array<[string, () => Promise<unknown>]> = [
      ['a SKU in capitals', () => service.has(PAYER, 'Premium')],
      ['an empty SKU', () => service.has(PAYER, '')],
      ['an address of another network', () => service.has('PR7srzZt4EfcNb3s27grgmiG8aB9vYNV82', 'premium')],
      ['an address that is none', () => service.list('nobody')],
      ['a duration of 0', () => service.grant(PAYER, 'premium', { durationS: 0 })],
      ['a duration in fractions', () => service.grant(PAYER, 'premium', { durationS: 1.5 })],
      ['an empty reason', () => service.grant(PAYER, 'premium', { reason: ' ' })],
      ['a revocation without a reason', () => service.revoke(PAYER, 'premium', undefined as unknown as string)],
      ['a reason too long', () => service.revoke(PAYER, 'premium', 'x'.repeat(201))],
    ]
    for (const [what, call] of refusals) await assert.rejects(call(), { code: 'ENTITLEMENT_ERR_INVALID' }, what)
    assert.equal(store.reads, 0)
    assert.deepEqual((await service.history(PAYER)).filter(each => each.sku === 'premium'), [])
  })
})
