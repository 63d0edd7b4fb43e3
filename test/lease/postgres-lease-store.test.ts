/**
 * The database's lease statements (src/lease/postgres-lease-store.ts), on both databases: who
 * gets the lease, to the millisecond of the clock the store is given, and that one statement lets
 * only one of many asking at once have it.
 */
import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { PostgresLeaseStore } from '../../src/lease/postgres-lease-store.js'
import { startPostgres } from '../helpers/start-postgres.js'
import { backends } from '../payments/databases.js'

const postgres = await startPostgres({ after })
const NAME = 'payments-watcher'

for (const backend of backends(postgres)) {
  describe(`leases on the ${backend.name} database`, () => {
    it('go to one holder, are renewed by it, and pass to another once lapsed or released', async (t) => {
      let now = 1000
      const store = new PostgresLeaseStore(await backend.open(t), () => now)
      const ask = (holder: string, at: number) => {
        now = at
        return store.claim(NAME, holder, 10_000)
      }
      assert.equal(await ask('a', 1000), true)
      assert.equal(await ask('b', 1000), false)
      assert.equal(await ask('a', 9000), true, 'renewed until 19000')
      assert.equal(await ask('b', 18_999), false)
      assert.equal(await ask('b', 19_000), true, 'lapsed')
      assert.equal(await ask('a', 19_001), false)
      await store.release(NAME, 'a')
      assert.equal(await ask('a', 19_002), false, 'a released nothing it did not hold')
      await store.release(NAME, 'b')
      assert.equal(await ask('a', 19_003), true)
    })

    it('go to exactly one of many asking at once', async (t) => {
      const store = new PostgresLeaseStore(await backend.open(t), () => 5)
      const granted = await Promise.all(Array.from({ length: 10 }, (_, i) => store.claim(NAME, `h${i}`, 1000)))
      assert.equal(granted.filter(Boolean).length, 1)
    })
  })
}
