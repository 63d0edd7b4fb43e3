import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { acquireLease, releaseLease } from '../../src/db/lease.js'
import { startPostgres } from '../helpers/start-postgres.js'
import { backends } from '../payments/databases.js'

const postgres = await startPostgres({ after })
const NAME = 'payments-watcher'

for (const backend of backends(postgres)) {
  describe(`leases on the ${backend.name} database`, () => {
    it('go to one holder, are renewed by it, and pass to another once lapsed or released', async (t) => {
      const db = await backend.open(t)
      const ask = (holder: string, now: number) => acquireLease(db, { name: NAME, holder, ttlMs: 10_000, now })
      assert.equal(await ask('a', 1000), true)
      assert.equal(await ask('b', 1000), false)
      assert.equal(await ask('a', 9000), true, 'renewed until 19000')
      assert.equal(await ask('b', 18_999), false)
      assert.equal(await ask('b', 19_000), true, 'lapsed')
      assert.equal(await ask('a', 19_001), false)
      await releaseLease(db, NAME, 'a')
      assert.equal(await ask('a', 19_002), false, 'a released nothing it did not hold')
      await releaseLease(db, NAME, 'b')
      assert.equal(await ask('a', 19_003), true)
    })

    it('go to exactly one of many asking at once', async (t) => {
      const db = await backend.open(t)
      const granted = await Promise.all(Array.from({ length: 10 }, (_, i) => acquireLease(db, { name: NAME, holder: `h${i}`, ttlMs: 1000, now: 5 })))
      assert.equal(granted.filter(Boolean).length, 1)
    })
  })
}
