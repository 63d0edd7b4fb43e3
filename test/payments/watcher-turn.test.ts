/**
 * One payments watcher at a time across instances on one PostgreSQL server: only the holder of the
 * `payments-watcher` lease re-checks and expires on a block; when it closes, or can no longer
 * renew and its lease lapses on the clock the test moves, another instance takes over, and not
 * before. Payment hints stay every instance's.
 */
import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import type { BlockEvent } from '../../packages/pocketnet-client/events/chain-event.js'
import pg from 'pg'
import type { Sql } from '../../src/db/database.js'
import { ChainWatcher } from '../../src/payments/chain-watcher.js'
import { createPaymentStore } from '../../src/payments/create-payment-store.js'
import { PaymentSightings } from '../../src/payments/payment-sightings.js'
import { PaymentsService } from '../../src/payments/payments-service.js'
import { WATCHER_LEASE_NAME, watcherLease } from '../../src/payments/watcher-turn.js'
import { startApp } from '../helpers/build-app.js'
import { manualClock, type ManualClock } from '../helpers/manual-clock.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { startPostgres } from '../helpers/start-postgres.js'
import { waitFor } from '../helpers/wait-for.js'
import { MERCHANT } from './chain-transactions.js'

const postgres = await startPostgres({ after })
const EPOCH_MS = 1_800_000_000_000
const TTL_MS = 30_000

type WithAfter = { after (fn: () => unknown): void }

/** The service, counting the per-block work it does. */
class CountingPayments extends PaymentsService {
  readonly blocks: Array<number | undefined> = []

  override async onBlock (tipHeight?: number): Promise<void> {
    this.blocks.push(tipHeight)
    return super.onBlock(tipHeight)
  }
}

const block = (height: number): BlockEvent => ({ kind: 'block', height, blockHash: height.toString(16).padStart(64, 'b'), time: 1_800_000_000 })

/** Statements that fail while `isDown()`, as on a connection lost. */
function interruptible (sql: Sql, isDown: () => boolean): Sql {
  const unreachable = (): Promise<never> => Promise.reject(new Error('the database is unreachable (test)'))
  return {
    query: (text, params) => isDown() ? unreachable() : sql.query(text, params),
    exec: text => isDown() ? unreachable() : sql.exec(text),
  }
}

/**
 * An instance as the payments plugin builds one, on `url`: its store, service, lease and watcher,
 * its lease renewed on `clock`. `renewals` stand for its lease's connection to the database.
 */
async function instance (t: WithAfter, url: string, clock: ManualClock, holder: string, renewals = (db: Sql): Sql => db) {
  const now = (): number => EPOCH_MS + clock.now()
  const store = await createPaymentStore({ databaseUrl: url, now })
  // No open payment in these tests: nothing reads the chain, so no node is needed.
  const payments = new CountingPayments(store, () => Promise.reject(new Error('no node in this test')), { receiver: MERCHANT, confirmations: 1, invoiceTtlS: 60 }, () => {})
  const failures: Error[] = []
  const leaseErrors: unknown[] = []
  const lease = watcherLease({ db: renewals(store.db), holder, ttlMs: TTL_MS, now, timers: clock.timers, onTakeover: () => { watcher.recheck() }, onError: err => { leaseErrors.push(err) } })
  // Sightings are written, not read: reading them would ask the chain, and these tests have no node.
  const sighted: number[] = []
  const watcher: ChainWatcher = new ChainWatcher({ payments, turn: lease, receivers: [MERCHANT], sightings: new PaymentSightings(store.db, now), sighted: () => { sighted.push(clock.now()) }, failed: err => { failures.push(err) } })
  let closed = false
  const close = async () => {
    if (closed) return
    closed = true
    await watcher.close()
    await lease.close()
    await store.close()
  }
  t.after(close)
  return { store, payments, lease, leaseErrors, watcher, failures, sighted, close }
}

type Instance = Awaited<ReturnType<typeof instance>>

/** Moves the clock in steps no longer than a renewal, letting each instance finish what that woke. */
async function advance (clock: ManualClock, ms: number, instances: Instance[]): Promise<void> {
  for (let left = ms; left > 0; left -= TTL_MS / 3) {
    clock.advance(Math.min(left, TTL_MS / 3))
    await Promise.all(instances.map(async one => { await one.lease.whenIdle(); await one.watcher.whenIdle() }))
  }
}

async function leaseHolder (url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query<{ holder: string }>('SELECT holder FROM leases WHERE name = $1', [WATCHER_LEASE_NAME])
    return rows[0]?.holder
  } finally {
    await client.end()
  }
}

describe('the payments watcher lease', () => {
  it('lets only its holder re-check on a block, and passes to the other instance when the holder closes', async (t) => {
    const url = await postgres.freshDatabase()
    const clock = manualClock()
    const a = await instance(t, url, clock, 'instance-a')
    const b = await instance(t, url, clock, 'instance-b')
    await a.lease.start()
    await b.lease.start()
    assert.deepEqual([a.lease.held, b.lease.held, await leaseHolder(url)], [true, false, 'instance-a'])

    const invoice = await b.store.invoices.createInvoice({ amountSat: 5000, receiver: MERCHANT, expiresInS: 60, confirmations: 1 })
    await advance(clock, 60_000, [a, b])
    assert.deepEqual([a.lease.held, b.lease.held], [true, false], 'renewed while it runs')
    for (const one of [a, b]) one.watcher.onChainEvent(block(10))
    await Promise.all([a.watcher.whenIdle(), b.watcher.whenIdle()])
    assert.deepEqual([a.payments.blocks, b.payments.blocks], [[10], []])
    assert.deepEqual((await b.store.invoices.listEvents(invoice.id)).map(event => event.type), ['expired'], 'expired by the holder')
    // A payment to the receiver is recorded by whichever instance hears of it: recording it twice changes nothing.
    const paid = { kind: 'transaction', address: MERCHANT, txid: 'c'.repeat(64), nout: 0, amount: 5000, height: 10, blockHash: block(10).blockHash, time: 1_800_000_000 } as const
    b.watcher.onChainEvent(paid)
    b.watcher.onChainEvent({ ...paid, address: 'mvmQvHFvYB1a1CtkTrYaZdELk15d2sB86z', txid: 'd'.repeat(64) })
    a.watcher.onChainEvent(paid)
    await waitFor('both sightings written', () => a.sighted.length === 1 && b.sighted.length === 1)
    const { rows } = await b.store.db.query<{ txid: string }>('SELECT txid FROM payment_sightings')
    assert.deepEqual(rows.map(row => row.txid), ['c'.repeat(64)])

    await a.close()
    assert.equal(await leaseHolder(url), undefined, 'given up at close')
    await advance(clock, TTL_MS / 3, [b])
    assert.equal(b.lease.held, true)
    assert.equal(await leaseHolder(url), 'instance-b')
    // Taking over, it re-checks at once what the last holder may have missed, at the tip it noted.
    assert.deepEqual(b.payments.blocks, [10])
    b.watcher.onChainEvent(block(11))
    await b.watcher.whenIdle()
    assert.deepEqual([a.payments.blocks, b.payments.blocks], [[10], [10, 11]])
    assert.deepEqual([...a.failures, ...b.failures, ...a.leaseErrors, ...b.leaseErrors], [])
  })

  it('passes to another instance once a holder that can no longer renew lets its lease lapse, and not before; the old holder stops by itself', async (t) => {
    const url = await postgres.freshDatabase()
    const clock = manualClock()
    // After its first answer, A's lease reaches the database no more: it holds what it took, and no more.
    let cutOff = false
    const a = await instance(t, url, clock, 'instance-a', db => interruptible(db, () => cutOff))
    const b = await instance(t, url, clock, 'instance-b')
    await a.lease.start()
    await b.lease.start()
    cutOff = true
    await advance(clock, TTL_MS - TTL_MS / 3, [a, b])
    assert.deepEqual([a.lease.held, b.lease.held], [true, false], 'A\'s lease still runs')
    for (const one of [a, b]) one.watcher.onChainEvent(block(20))
    await Promise.all([a.watcher.whenIdle(), b.watcher.whenIdle()])
    assert.deepEqual([a.payments.blocks, b.payments.blocks], [[20], []])

    await advance(clock, TTL_MS / 3, [a, b])
    assert.deepEqual([a.lease.state, b.lease.state, await leaseHolder(url)], ['unreachable', 'held', 'instance-b'], 'lapsed: B took it at its next question')
    for (const one of [a, b]) one.watcher.onChainEvent(block(21))
    await Promise.all([a.watcher.whenIdle(), b.watcher.whenIdle()])
    assert.deepEqual(a.payments.blocks, [20], 'A, its lease lapsed, stops even though nothing told it')
    assert.deepEqual(b.payments.blocks, [20, 21], 'B re-checked on taking over, then on the block')
    assert.deepEqual([...a.failures, ...b.failures], [])
    assert.equal(a.leaseErrors.length, 3, 'A\'s three unanswered renewals, told to onError')
    assert.deepEqual(b.leaseErrors, [])
  })

  it('gives the turn to exactly one of two services on one server, and frees it when that one closes', async (t) => {
    const url = await postgres.freshDatabase()
    const node = await startEmulator(t)
    const address = node.dataset.users[1]?.address as string
    const env = { PAYMENT_ADDRESS: address, DATABASE_URL: url }
    const closers: Array<Array<() => unknown>> = [[], []]
    const apps = await Promise.all(closers.map(list => startApp({ after: fn => list.push(fn) }, { nodes: [node.url], env })))
    t.after(async () => { for (const list of closers) for (const fn of list.reverse()) await fn() })
    const held = async (): Promise<number[]> => Promise.all(apps.map(async app => Number(/^payments_watcher_lease_held (\d)$/m.exec(await app.app.metrics.registry.metrics())?.[1])))
    const turns = await held()
    assert.deepEqual([...turns].sort(), [0, 1])
    const holder = turns.indexOf(1)
    assert.match(await leaseHolder(url) ?? '', /^watcher-/)
    for (const fn of (closers[holder] as Array<() => unknown>).splice(0).reverse()) await fn()
    assert.equal(await leaseHolder(url), undefined, 'released at close: the other need not wait for it to lapse')
  })
})
