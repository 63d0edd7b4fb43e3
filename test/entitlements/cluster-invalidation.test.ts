/**
 * Instances on one PostgreSQL server and one Redis: a grant or a revocation on one drops what the
 * others kept of that user at once, through Redis; an instance without Redis answers from what it
 * kept until its entry's time to live runs out (entitlements-service.test.ts moves that clock).
 */
import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { RedisLink } from 'pocketnet-client'
import { openDatabase } from '../../src/db/open-database.js'
import { ENTITLEMENTS_CHANNEL } from '../../src/entitlements/cluster-invalidation.js'
import { EntitlementStore } from '../../src/entitlements/entitlement-store.js'
import { EntitlementsService } from '../../src/entitlements/entitlements-service.js'
import { startPostgres } from '../helpers/start-postgres.js'
import { startRedis } from '../helpers/start-redis.js'
import { waitFor } from '../helpers/wait-for.js'
import { PAYER } from '../payments/chain-transactions.js'

const postgres = await startPostgres({ after })

describe('entitlements on several instances', () => {
  it('drop what the others kept of a user at once when one grants or revokes, through Redis', async (t) => {
    const redis = await startRedis(t)
    const url = await postgres.freshDatabase()
    const prefix = `test${Math.random().toString(36).slice(2)}:`
    const instance = async (withRedis: boolean) => {
      const db = await openDatabase({ databaseUrl: url })
      t.after(() => db.close())
      const link = withRedis ? new RedisLink({ url: redis.url, keyPrefix: prefix, timeoutMs: 5000 }) : undefined
      if (link !== undefined) t.after(() => link.close())
      const store = new EntitlementStore(db)
      // A time to live no test reaches: only a message can drop an entry.
      const service = new EntitlementsService({ store: async () => store, cacheTtlMs: 3_600_000, maxCachedUsers: 100, redis: link })
      t.after(() => service.close())
      return { service, link }
    }
    const [a, b, alone] = [await instance(true), await instance(true), await instance(false)]
    // The subscriptions are in place once a message published on the channel reaches both.
    const heard = { a: 0, b: 0 }
    a.link?.subscribe(ENTITLEMENTS_CHANNEL, () => { heard.a++ })
    b.link?.subscribe(ENTITLEMENTS_CHANNEL, () => { heard.b++ })
    await waitFor('both instances subscribed', async () => {
      await a.link?.run('probe', redis => redis.publish(`${prefix}${ENTITLEMENTS_CHANNEL}`, 'probe'))
      return heard.a > 0 && heard.b > 0
    })

    const sku = 'cluster'
    assert.deepEqual(await Promise.all([a, b, alone].map(each => each.service.has(PAYER, sku))), [false, false, false])
    await b.service.grant(PAYER, sku)
    await waitFor('instance a told of b\'s grant', () => a.service.has(PAYER, sku))
    assert.equal(await b.service.has(PAYER, sku), true)
    assert.equal(await alone.service.has(PAYER, sku), false, 'without Redis: what it kept, until its time to live')

    await a.service.revoke(PAYER, sku, 'refunded')
    await waitFor('instance b told of a\'s revocation', async () => !(await b.service.has(PAYER, sku)))
    assert.equal(await a.service.has(PAYER, sku), false)
  })
})
