/**
 * Grants and revocations reach the webhook (issue #36), on both databases: each writes its event
 * and outbox row in its own transaction (a failed event write takes the grant back with it), and
 * the webhook sender POSTs it to a real receiver on loopback, signed, retried with the same
 * idempotency key, as it sends an invoice's events. An invoice that grants sends its `confirmed`
 * event (still with `grant`) and one `entitlementGranted`, however often it is confirmed at once.
 * In the service: `app.entitlements.grant` and `revoke` wake the sender; with no webhook
 * configured, no event is written.
 */
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import { after, describe, it } from 'node:test'
import { verifyWebhookSignature } from '../../packages/pocketnet-client/payments/webhook-signature.js'
import type { Database } from '../../src/db/database.js'
import { EntitlementStore } from '../../src/entitlements/entitlement-store.js'
import { InvoiceStore } from '../../src/payments/invoice-store.js'
import { PaymentOutbox } from '../../src/payments/payment-outbox.js'
import { WebhookDeliveryLog } from '../../src/payments/webhook-deliveries.js'
import { WEBHOOK_CONSUMER, WebhookSender } from '../../src/payments/webhook-sender.js'
import { startApp } from '../helpers/build-app.js'
import { manualClock } from '../helpers/manual-clock.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { startPostgres } from '../helpers/start-postgres.js'
import { waitFor } from '../helpers/wait-for.js'
import { MERCHANT, PAYER, paymentTransaction, txid } from '../payments/chain-transactions.js'
import { backends, freshDataDir, type Backend } from '../payments/databases.js'

type WithAfter = { after (fn: () => unknown): void }

const postgres = await startPostgres({ after })
const SECRET = 'whsec_test_0123456789abcdefghijklmnopqrstuvwxyz'
/** Where the manual clock's zero is, in milliseconds since the epoch. */
const EPOCH_MS = 1_800_000_000_000
const PRICE = 50_000_000

interface Received {
  headers: IncomingHttpHeaders
  body: string
}

/**
 * A receiver as docs/payments.md writes one: it answers its n-th request with `statuses[n]` (past
 * the list, 200), and handles a 2xx event once per `id`, as a receiver that dedupes must.
 */
async function startReceiver (t: WithAfter, statuses: number[] = []) {
  const received: Received[] = []
  const handled: Array<Record<string, any>> = []
  const seen = new Set<string>()
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks).toString('utf8')
    const status = statuses[received.length] ?? 200
    received.push({ headers: request.headers, body })
    if (status >= 200 && status < 300) {
      const event = JSON.parse(body)
      if (!seen.has(event.id)) {
        seen.add(event.id)
        handled.push(event)
      }
    }
    response.writeHead(status).end()
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.after(() => {
    server.closeAllConnections()
    return new Promise(resolve => server.close(resolve))
  })
  const { port } = server.address() as { port: number }
  return { url: `http://127.0.0.1:${port}/hooks`, received, handled }
}

const silentLog = { info () {}, warn () {}, error () {} }
const iso = (ms: number): string => new Date(ms).toISOString()

/** The stores, the outbox and a webhook sender to `url` on a fresh database of `backend`, on a manual clock. */
async function setup (t: WithAfter, backend: Backend, url: string) {
  const db = await backend.open(t)
  const clock = manualClock()
  const now = (): number => EPOCH_MS + clock.now()
  const grants = new EntitlementStore(db, { now, consumers: [WEBHOOK_CONSUMER] })
  const invoices = new InvoiceStore(db, { now, network: 'regtest', consumers: ['app', WEBHOOK_CONSUMER], grantConsumers: [WEBHOOK_CONSUMER] })
  const outbox = new PaymentOutbox(db, { now })
  const deliveries = new WebhookDeliveryLog(db)
  const sender = new WebhookSender({ outbox, deliveries, url, secret: SECRET, timeoutMs: 10_000, log: silentLog, now, timers: clock.timers, random: () => 0.5 })
  t.after(() => sender.close())
  const send = async () => {
    sender.wake()
    await sender.whenIdle()
  }
  const advance = async (ms: number) => {
    clock.advance(ms)
    await sender.whenIdle()
  }
  return { db, clock, now, grants, invoices, outbox, deliveries, send, advance }
}

/** The entitlement events stored, oldest first. */
async function entitlementEvents (db: Database): Promise<Array<{ type: string, grant_id: number }>> {
  const { rows } = await db.query<{ type: string, grant_id: number }>('SELECT type, grant_id::integer AS grant_id FROM outbox_events WHERE grant_id IS NOT NULL ORDER BY id')
  return rows
}

for (const backend of backends(postgres)) {
  describe(`entitlement webhooks on the ${backend.name} database`, () => {
    it('sends one signed webhook per grant by server code and one per revocation, with what was granted and why', async (t) => {
      const receiver = await startReceiver(t)
      const { db, clock, now, grants, outbox, deliveries, send } = await setup(t, backend, receiver.url)
      const first = await grants.grant({ address: PAYER, sku: 'gift', durationS: 3600, reason: 'a gift' })
      await send()
      assert.equal(receiver.received.length, 1)
      const [request] = receiver.received as [Received]
      assert.deepEqual(verifyWebhookSignature({ secret: SECRET, header: request.headers['x-payment-signature'], body: request.body, nowS: Math.floor(now() / 1000) }), { timestampS: Math.floor(now() / 1000) })
      assert.equal(request.headers['idempotency-key'], `grant:${first.id}:granted`)
      const body = JSON.parse(request.body)
      assert.deepEqual(Object.keys(body), ['id', 'type', 'createdAt', 'entitlement'])
      assert.deepEqual(body, {
        id: `grant:${first.id}:granted`,
        type: 'entitlementGranted',
        createdAt: iso(EPOCH_MS + 1000),
        entitlement: { address: PAYER, sku: 'gift', grantedAt: iso(first.grantedAtMs), expiresAt: iso(EPOCH_MS + 1000 + 3_600_000), invoiceId: null, reason: 'a gift' },
      })

      // A renewal, then the revocation of the run: one event for the two grants it ends.
      clock.advance(60_000)
      const renewal = await grants.grant({ address: PAYER, sku: 'gift', durationS: 3600 })
      clock.advance(60_000)
      const revoked = await grants.revoke(PAYER, 'gift', 'refunded')
      assert.deepEqual(revoked.map(grant => grant.id), [first.id, renewal.id])
      assert.deepEqual(await grants.revoke(PAYER, 'gift', 'again'), [], 'nothing held: nothing revoked, nothing told')
      await send()
      // A batch is sent at once: in the order they were made, not necessarily received.
      const bodies = receiver.received.map(each => JSON.parse(each.body)).sort((a, b) => (a.createdAt < b.createdAt ? -1 : 1))
      assert.deepEqual(bodies.map(each => [each.id, each.type]), [
        [`grant:${first.id}:granted`, 'entitlementGranted'],
        [`grant:${renewal.id}:granted`, 'entitlementGranted'],
        [`grant:${renewal.id}:revoked`, 'entitlementRevoked'],
      ])
      assert.deepEqual(bodies[1].entitlement, { address: PAYER, sku: 'gift', grantedAt: iso(renewal.grantedAtMs), expiresAt: iso(EPOCH_MS + 1000 + 7_200_000), invoiceId: null, reason: null })
      assert.deepEqual(bodies[2], {
        id: `grant:${renewal.id}:revoked`,
        type: 'entitlementRevoked',
        createdAt: iso(EPOCH_MS + 121_000),
        entitlement: { address: PAYER, sku: 'gift', grantedAt: iso(renewal.grantedAtMs), expiresAt: iso(EPOCH_MS + 1000 + 7_200_000), invoiceId: null, reason: 'refunded' },
      })
      assert.deepEqual((await entitlementEvents(db)).map(row => [row.type, row.grant_id]), [['entitlementGranted', first.id], ['entitlementGranted', renewal.id], ['entitlementRevoked', renewal.id]])
      assert.deepEqual(await outbox.backlog(WEBHOOK_CONSUMER), { pending: 0, givenUp: 0 })
      assert.equal(await outbox.countUndelivered('app'), 0, 'the app\'s handlers are of invoices: no row of theirs')
      const [revokedEvent] = (await db.query<{ id: number }>("SELECT id::integer AS id FROM outbox_events WHERE type = 'entitlementRevoked'")).rows
      assert.deepEqual((await deliveries.list(revokedEvent!.id)).map(attempt => [attempt.attempt, attempt.statusCode]), [[1, 200]])
    })

    it('sends the confirmed event, with its grant, and one entitlementGranted, however often the invoice is confirmed at once', async (t) => {
      const receiver = await startReceiver(t)
      const { db, grants, invoices, outbox, send } = await setup(t, backend, receiver.url)
      const invoice = await invoices.createInvoice({ amountSat: PRICE, receiver: MERCHANT, expiresInS: 900, confirmations: 1, grant: { sku: 'premium', to: PAYER, durationS: 86_400 } })
      const pay = { txid: txid(1), amountSat: PRICE, memo: invoice.memo, height: 100 }
      const results = await Promise.all(Array.from({ length: 4 }, () => invoices.recordObservation(invoice.id, { txid: txid(1), transaction: paymentTransaction(pay), tipHeight: 100 })))
      assert.deepEqual(results.flatMap(result => result.events.map(event => event.type)), ['confirmed'])
      const grant = await grants.grantOfInvoice(invoice.id)
      assert.ok(grant !== undefined)
      assert.deepEqual(await entitlementEvents(db), [{ type: 'entitlementGranted', grant_id: grant.id }])
      await send()

      const bodies = receiver.received.map(each => JSON.parse(each.body)).sort((a, b) => (a.type < b.type ? -1 : 1))
      assert.deepEqual(bodies.map(body => body.type), ['confirmed', 'entitlementGranted'])
      const [confirmed, granted] = bodies
      const view = { sku: 'premium', grantedAt: iso(grant.grantedAtMs), expiresAt: iso(grant.grantedAtMs + 86_400_000), invoiceId: invoice.id }
      assert.deepEqual(confirmed.grant, { address: PAYER, ...view }, 'the confirmed event keeps its grant')
      assert.deepEqual(granted, { id: `grant:${grant.id}:granted`, type: 'entitlementGranted', createdAt: confirmed.createdAt, entitlement: { address: PAYER, ...view, reason: null } })
      assert.equal(await outbox.countUndelivered('app'), 1, 'the app\'s handlers get the confirmed event only')
    })

    it('tries a receiver that answered 500 again, the same event and key, and it is handled once', async (t) => {
      const receiver = await startReceiver(t, [500])
      const { grants, deliveries, db, send, advance } = await setup(t, backend, receiver.url)
      const grant = await grants.grant({ address: PAYER, sku: 'retried' })
      await send()
      assert.equal(receiver.received.length, 1)
      await advance(59_999)
      assert.equal(receiver.received.length, 1, 'not before its time')
      await advance(1)
      assert.equal(receiver.received.length, 2)
      await advance(24 * 3_600_000)
      assert.equal(receiver.received.length, 2, 'delivered: never sent again')
      assert.deepEqual(receiver.received.map(each => each.headers['idempotency-key']), [`grant:${grant.id}:granted`, `grant:${grant.id}:granted`])
      assert.equal(receiver.received[0]?.body, receiver.received[1]?.body)
      assert.deepEqual(receiver.handled.map(event => [event.id, event.entitlement.expiresAt]), [[`grant:${grant.id}:granted`, null]])
      const [event] = (await db.query<{ id: number }>('SELECT id::integer AS id FROM outbox_events WHERE grant_id = $1', [grant.id])).rows
      assert.deepEqual((await deliveries.list(event!.id)).map(attempt => [attempt.attempt, attempt.statusCode]), [[1, 500], [2, 200]])
    })

    it('writes the event in the grant\'s transaction: an event that cannot be written takes the grant back', async (t) => {
      const db = await backend.open(t)
      // The same consumer twice: the second outbox row breaks the outbox's key, and the whole write fails.
      const broken = new EntitlementStore(db, { now: () => EPOCH_MS, consumers: [WEBHOOK_CONSUMER, WEBHOOK_CONSUMER] })
      await assert.rejects(broken.grant({ address: PAYER, sku: 'atomic' }), { code: '23505' })
      assert.deepEqual(await broken.history(PAYER), [], 'no grant without its event')
      const fine = new EntitlementStore(db, { now: () => EPOCH_MS, consumers: [WEBHOOK_CONSUMER] })
      await fine.grant({ address: PAYER, sku: 'atomic' })
      await assert.rejects(broken.revoke(PAYER, 'atomic', 'broken'), { code: '23505' })
      assert.deepEqual((await fine.history(PAYER)).map(grant => grant.revokedAtMs), [null], 'no revocation without its event')
      assert.deepEqual((await entitlementEvents(db)).map(row => row.type), ['entitlementGranted'])
    })

    it('writes no entitlement event when no consumer hears of them', async (t) => {
      const db = await backend.open(t)
      const now = (): number => EPOCH_MS
      const grants = new EntitlementStore(db, { now })
      const invoices = new InvoiceStore(db, { now, network: 'regtest', consumers: ['app'] })
      await grants.grant({ address: PAYER, sku: 'quiet' })
      assert.equal((await grants.revoke(PAYER, 'quiet', 'done')).length, 1)
      const invoice = await invoices.createInvoice({ amountSat: PRICE, receiver: MERCHANT, expiresInS: 900, confirmations: 1, grant: { sku: 'quiet', to: PAYER } })
      const pay = { txid: txid(2), amountSat: PRICE, memo: invoice.memo, height: 100 }
      const { events } = await invoices.recordObservation(invoice.id, { txid: txid(2), transaction: paymentTransaction(pay), tipHeight: 100 })
      assert.deepEqual([events.map(event => event.type), events[0]?.grant?.sku], [['confirmed'], 'quiet'])
      assert.deepEqual(await entitlementEvents(db), [])
    })
  })
}

describe('entitlement webhooks in the service', () => {
  /** The service with payments on, its database `backend`'s, with or without a webhook to `receiverUrl`. */
  async function service (t: WithAfter, backend: Backend['name'], receiverUrl: string) {
    const node = await startEmulator(t)
    const storage: Record<string, string> = {}
    if (backend === 'server') storage.DATABASE_URL = await postgres.freshDatabase()
    else {
      const dataDir = await freshDataDir()
      t.after(() => rmSync(dataDir, { recursive: true, force: true }))
      storage.DATA_DIR = dataDir
    }
    const webhook: Record<string, string> = receiverUrl === '' ? {} : { PAYMENT_WEBHOOK_URL: receiverUrl, PAYMENT_WEBHOOK_SECRET: SECRET }
    const running = await startApp(t, {
      nodes: [node.url],
      env: { PAYMENT_ADDRESS: node.dataset.users[1]?.address as string, ...storage, ...webhook },
    })
    return { app: running.app, user: node.dataset.users[2]?.address as string }
  }

  for (const backend of ['embedded', 'server'] as const) {
    it(`sends app.entitlements' grant and revocation at once, on the ${backend} database`, async (t) => {
      const receiver = await startReceiver(t)
      const { app, user } = await service(t, backend, receiver.url)
      const grant = await app.entitlements.grant(user, 'support.gift', { reason: 'support case 17' })
      await waitFor('the grant\'s webhook', () => receiver.handled.length === 1)
      await app.entitlements.revoke(user, 'support.gift', 'case closed')
      await waitFor('the revocation\'s webhook', () => receiver.handled.length === 2)
      assert.deepEqual(receiver.handled.map(event => [event.id, event.type, event.entitlement.address, event.entitlement.reason]), [
        [`grant:${grant.id}:granted`, 'entitlementGranted', user, 'support case 17'],
        [`grant:${grant.id}:revoked`, 'entitlementRevoked', user, 'case closed'],
      ])
    })
  }

  it('writes no entitlement event, and sends nothing, with no webhook configured', async (t) => {
    const { app, user } = await service(t, 'embedded', '')
    await app.entitlements.grant(user, 'no.hook')
    assert.equal((await app.entitlements.revoke(user, 'no.hook', 'done')).length, 1)
    assert.deepEqual(await entitlementEvents(await app.database.open()), [])
    assert.equal(await new PaymentOutbox(await app.database.open()).countUndelivered(WEBHOOK_CONSUMER), 0)
  })
})
