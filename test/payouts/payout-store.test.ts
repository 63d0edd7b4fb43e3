/**
 * The payouts' tables on both databases (the embedded one and a PostgreSQL server), through the
 * store's own class: a payout created with the outputs it spends held for it, the same key
 * answering the same payout, no output held by two open payouts (on the server, two instances
 * creating at once), a failed payout giving its outputs back, the moves guarded by state, a
 * refund's room counted under its invoice's lock, and the day's total. The signer here is a plain
 * function choosing outputs largest first: signing itself is tested with the wallet
 * (test/pocketnet-client/wallet) and end to end (payouts-service.test.ts).
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import type { Coin } from 'pocketnet-client'
import { openDatabase } from '../../src/db/open-database.js'
import { PayoutError } from '../../src/payouts/payout-errors.js'
import { DAY_MS, PayoutStore, type CreateOptions, type PayoutTerms, type SignedPayout } from '../../src/payouts/payout-store.js'
import { startPostgres } from '../helpers/start-postgres.js'
import { backends, sharedDatabase } from '../payments/databases.js'

const postgres = await startPostgres({ after })
const WALLET = 'mwalletaddressfortheseteststhatisfake'
const FEE_SAT = 1000
const hash = (text: string): string => createHash('sha256').update(text).digest('hex')

let serial = 0
/** Outputs of a transaction of this test's own. */
function coins (...amounts: number[]): Coin[] {
  const txid = hash(`funding ${++serial}`)
  return amounts.map((amountSat, vout) => ({ txid, vout, address: WALLET, amountSat, confirmations: 6, height: 100, coinbase: false, pocketTx: false }))
}

/** Largest first until the amount and a flat fee are covered; the "transaction" names what it spends. */
function sign (free: Coin[], terms: PayoutTerms): SignedPayout {
  const spent: Coin[] = []
  let total = 0
  for (const coin of [...free].sort((a, b) => b.amountSat - a.amountSat)) {
    if (total >= terms.amountSat + FEE_SAT) break
    spent.push(coin)
    total += coin.amountSat
  }
  if (total < terms.amountSat + FEE_SAT) throw new PayoutError('PAYOUT_ERR_INSUFFICIENT_FUNDS', `${terms.amountSat + FEE_SAT - total} sat missing`)
  const hex = Buffer.from(JSON.stringify({ spent: spent.map(coin => `${coin.txid}:${coin.vout}`), terms })).toString('hex')
  return { hex, txid: hash(hex), feeSat: FEE_SAT, spent }
}

const payout = (to: string, amountSat: number): PayoutTerms => ({ kind: 'payout', to, amountSat, requestedBy: 'app' })

function options (available: Coin[], terms: PayoutTerms, key: string | undefined, seen: { paidTodaySat?: number } = {}): CreateOptions {
  return {
    wallet: WALLET,
    terms,
    idempotencyKey: key,
    coins: available,
    admit: ({ paidTodaySat, terms }) => { seen.paidTodaySat = paidTodaySat; return terms },
    sign,
  }
}

for (const backend of backends(postgres)) {
  describe(`payouts on the ${backend.name} database`, () => {
    const database = sharedDatabase(backend, { before, after })
    // Each test on a day of its own: the day's total is per UTC day.
    let day = 0
    const clockOnNewDay = (): { now: number } => ({ now: Date.parse('2026-11-29T10:00:00.000Z') + ++day * 2 * DAY_MS })

    it('creates a pending payout with its signed bytes and the outputs it spends; the same key answers it again without signing', async () => {
      const clock = clockOnNewDay()
      const store = new PayoutStore(database(), () => clock.now)
      const funds = coins(50_000, 200_000)
      const made = await store.create(options(funds, payout('m-receiver-1', 100_000), 'key-create-1'))
      assert.equal(made.created, true)
      assert.equal(made.payout.state, 'pending')
      assert.equal(made.payout.amountSat, 100_000)
      assert.equal(made.payout.feeSat, FEE_SAT)
      assert.match(made.payout.id, /^po_/)
      assert.deepEqual(made.payout.inputs, [`${funds[1]?.txid as string}:1`])
      assert.equal(made.payout.txid, hash(made.payout.rawTx))
      let signed = 0
      const again = await store.create({ ...options(funds, payout('m-receiver-1', 100_000), 'key-create-1'), sign: (free, terms) => { signed++; return sign(free, terms) } })
      assert.equal(again.created, false)
      assert.equal(again.payout.id, made.payout.id)
      assert.equal(again.payout.rawTx, made.payout.rawTx, 'the stored bytes, never signed again')
      assert.equal(signed, 0)
      assert.deepEqual((await store.log(made.payout.id)).map(entry => [entry.state, entry.actor]), [['pending', 'app']])
    })

    it('never gives an output an open payout holds to another payout; with none free, the signer sees none', async () => {
      const clock = clockOnNewDay()
      const store = new PayoutStore(database(), () => clock.now)
      const funds = coins(150_000, 150_000)
      const first = await store.create(options(funds, payout('m-receiver-2', 100_000), 'key-hold-1'))
      const second = await store.create(options(funds, payout('m-receiver-2', 100_000), 'key-hold-2'))
      assert.notDeepEqual(first.payout.inputs, second.payout.inputs)
      assert.equal(new Set([...first.payout.inputs, ...second.payout.inputs]).size, 2)
      let offered: Coin[] | undefined
      await assert.rejects(store.create({ ...options(funds, payout('m-receiver-2', 100_000), 'key-hold-3'), sign: (free, terms) => { offered = free; return sign(free, terms) } }),
        (err: unknown) => err instanceof PayoutError && err.code === 'PAYOUT_ERR_INSUFFICIENT_FUNDS')
      assert.deepEqual(offered, [])
      assert.equal(await store.byKey('key-hold-3'), undefined, 'nothing stored for a refusal')
      await assert.rejects(database().query('INSERT INTO payout_inputs (txid, vout, payout_id, amount_sat) VALUES ($1, 0, $2, 1)', [funds[0]?.txid, second.payout.id]), /duplicate key|unique/i,
        'an output is held once, whatever the code does')
    })

    it('moves a payout forward only: broadcast once, confirmed from broadcast, failed giving its outputs back, each move logged', async () => {
      const clock = clockOnNewDay()
      const store = new PayoutStore(database(), () => clock.now)
      const funds = coins(300_000)
      const { payout: made } = await store.create(options(funds, payout('m-receiver-3', 100_000), 'key-moves-1'))
      assert.equal(await store.confirmed(made.id, { height: 10, blockHash: hash('b10'), confirmations: 6 }), false, 'not from pending')
      clock.now += 1000
      assert.equal(await store.accepted(made.id), true)
      assert.equal(await store.accepted(made.id), false, 'once')
      const broadcast = await store.byId(made.id)
      assert.equal(broadcast?.state, 'broadcast')
      assert.equal(broadcast?.broadcastAtMs, clock.now)
      await store.inBlock(made.id, { height: 10, blockHash: hash('b10'), confirmations: 2 })
      assert.deepEqual([(await store.byId(made.id))?.height, (await store.byId(made.id))?.confirmations], [10, 2])
      assert.equal(await store.confirmed(made.id, { height: 10, blockHash: hash('b10'), confirmations: 6 }), true)
      assert.equal(await store.failed(made.id, 'INPUTS_SPENT', {}), false, 'confirmed is final')
      assert.deepEqual((await store.byId(made.id))?.inputs, [`${funds[0]?.txid as string}:0`])

      const other = await store.create(options(coins(300_000), payout('m-receiver-3', 100_000), 'key-moves-2'))
      assert.equal(await store.failed(other.payout.id, 'INPUTS_SPENT', { since: 9 }), true)
      const failed = await store.byId(other.payout.id)
      assert.deepEqual([failed?.state, failed?.reason, failed?.inputs], ['failed', 'INPUTS_SPENT', []])
      assert.equal(await store.accepted(other.payout.id), false, 'failed is final')
      assert.deepEqual((await store.log(made.id)).map(entry => entry.state), ['pending', 'broadcast', 'confirmed'])
      assert.deepEqual((await store.log(other.payout.id)).map(entry => [entry.state, entry.detail.reason]), [['pending', undefined], ['failed', 'INPUTS_SPENT']])
      const due = (await store.due(100)).map(open => open.id)
      assert.ok(!due.includes(made.id) && !due.includes(other.payout.id), 'final payouts are never checked again')
    })

    it('gives admit the day\'s total of payouts not failed, and a refund its invoice\'s room', async () => {
      const clock = clockOnNewDay()
      const store = new PayoutStore(database(), () => clock.now)
      const seen: { paidTodaySat?: number } = {}
      await store.create(options(coins(500_000), payout('m-receiver-4', 100_000), 'key-day-1'))
      await store.create(options(coins(500_000), payout('m-receiver-4', 20_000), 'key-day-2', seen))
      assert.equal(seen.paidTodaySat, 100_000)
      const invoiceId = `inv-refund-${backend.name}`
      const txid = hash(invoiceId)
      await database().query("INSERT INTO invoices (id, amount_sat, receiver, memo, state, confirmations_required, expires_at_ms, created_at_ms, updated_at_ms) VALUES ($1, 150000, 'm-merchant', $1, 'pending', 1, $2, $2, $2)", [invoiceId, clock.now])
      await database().query("INSERT INTO payments (txid, invoice_id, received_sat, state, height, block_hash, confirmations, first_seen_at_ms, checked_at_ms) VALUES ($1, $2, 150000, 'in_block', 5, $1, 1, $3, $3)", [txid, invoiceId, clock.now])
      await database().query("UPDATE invoices SET state = 'confirmed', settling_txid = $2 WHERE id = $1", [invoiceId, txid])
      const rooms: unknown[] = []
      const refund = (amountSat: number): CreateOptions => ({
        ...options(coins(500_000), { kind: 'refund', invoiceId, to: 'm-payer', amountSat, requestedBy: 'admin' }, undefined),
        admit: ({ refund, terms }) => { rooms.push(refund); return terms },
      })
      const first = await store.create(refund(100_000))
      assert.equal(first.payout.idempotencyKey, `refund:${invoiceId}:1`)
      assert.equal(first.payout.invoiceId, invoiceId)
      await store.create(refund(50_000))
      assert.deepEqual(rooms, [{ paidSat: 150_000, refundedSat: 0, refunds: 0 }, { paidSat: 150_000, refundedSat: 100_000, refunds: 1 }])
      await assert.rejects(database().query('UPDATE payouts SET invoice_id = NULL WHERE id = $1', [first.payout.id]), /check/i, 'a refund names its invoice')
    })
  })
}

describe('payouts on a PostgreSQL server shared by two instances', () => {
  it('two instances creating payouts at once from the same outputs spend disjoint ones', async (t) => {
    const url = await postgres.freshDatabase()
    const one = await openDatabase({ databaseUrl: url })
    t.after(() => one.close())
    const two = await openDatabase({ databaseUrl: url })
    t.after(() => two.close())
    const now = () => Date.parse('2026-11-29T10:00:00.000Z')
    const funds = coins(...Array.from({ length: 10 }, () => 120_000))
    const stores = [new PayoutStore(one, now), new PayoutStore(two, now)]
    const made = await Promise.all(Array.from({ length: 10 }, (_, n) => (stores[n % 2] as PayoutStore).create(options(funds, payout('m-receiver-5', 100_000), `key-race-${n}`))))
    const inputs = made.flatMap(result => result.payout.inputs)
    assert.equal(inputs.length, 10)
    assert.equal(new Set(inputs).size, 10, 'no output spent by two payouts')
  })
})
