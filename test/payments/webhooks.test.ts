/**
 * Outgoing payment webhooks (PAYMENT_WEBHOOK_URL), to a real HTTP receiver on loopback: signed so
 * that pocketnet-client's verifier accepts the body, retried with growing delays on a clock the
 * tests move, timed out when the receiver hangs, given up after the last attempt, delivered again
 * with the same idempotency key after a restart cut an attempt short, and never writing the secret
 * anywhere.
 */
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import { after, describe, it } from 'node:test'
import { signWebhook, verifyWebhookSignature } from '../../packages/pocketnet-client/payments/webhook-signature.js'
import { ConfigError, loadConfig } from '../../src/config.js'
import { openDatabase } from '../../src/db/open-database.js'
import { createPaymentStore } from '../../src/payments/create-payment-store.js'
import { WebhookDeliveryLog } from '../../src/payments/webhook-deliveries.js'
import { RetryPolicy } from '../../src/outbox/retry-policy.js'
import { WEBHOOK_MAX_ATTEMPTS, WEBHOOK_RETRY } from '../../src/payments/webhook-retry.js'
import { WEBHOOK_CONSUMER, WEBHOOK_USER_AGENT, WebhookSender, type SenderLog, type WebhookSenderOptions } from '../../src/payments/webhook-sender.js'
import type { FastifyInstance } from 'fastify'
import { startApp, type TestApp } from '../helpers/build-app.js'
import { manualClock } from '../helpers/manual-clock.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { startPostgres } from '../helpers/start-postgres.js'
import { waitFor } from '../helpers/wait-for.js'
import { MERCHANT, paymentTransaction, txid } from './chain-transactions.js'
import { freshDataDir } from './databases.js'

type WithAfter = { after (fn: () => unknown): void }

const postgres = await startPostgres({ after })
const SECRET = 'whsec_test_0123456789abcdefghijklmnopqrstuvwxyz'
/** Where the manual clock's zero is, in milliseconds since the epoch. */
const EPOCH_MS = 1_800_000_000_000

interface Received {
  headers: IncomingHttpHeaders
  url: string
  /** The raw body, as a receiver must verify it. */
  body: string
  /** Resolves when the connection of this request closed (answered, or cut by the sender). */
  closed: Promise<unknown>
}

/** What the receiver answers its n-th request with; past the list, 200. */
type Reply = { status: number, body?: string, headers?: Record<string, string> } | 'hang'

async function startReceiver (t: WithAfter, replies: Reply[] = []): Promise<{ url: string, received: Received[] }> {
  const received: Received[] = []
  const hanging: ServerResponse[] = []
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const reply = replies[received.length] ?? { status: 200, body: 'ok' }
    received.push({ headers: request.headers, url: request.url ?? '', body: Buffer.concat(chunks).toString('utf8'), closed: new Promise(resolve => response.once('close', resolve)) })
    if (reply === 'hang') hanging.push(response)
    else response.writeHead(reply.status, reply.headers).end(reply.body ?? '')
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.after(() => {
    for (const response of hanging) response.destroy()
    server.closeAllConnections()
    return new Promise(resolve => server.close(resolve))
  })
  const { port } = server.address() as { port: number }
  return { url: `http://127.0.0.1:${port}/hooks/payments`, received }
}

/** Log lines as the sender writes them, kept. */
function capturedLog (): SenderLog & { lines: Array<{ level: string, fields: Record<string, unknown>, message: string }> } {
  const lines: Array<{ level: string, fields: Record<string, unknown>, message: string }> = []
  const line = (level: string) => (fields: object, message: string) => { lines.push({ level, fields: fields as Record<string, unknown>, message }) }
  return { lines, info: line('info'), warn: line('warn'), error: line('error') }
}

/**
 * A store on a fresh database of the PostgreSQL server (quicker to make than an embedded one; the
 * service's tests below run on the embedded one) and a sender on a manual clock, to `url`. Each
 * event is made by confirming a new invoice (one required confirmation: one `confirmed` event).
 */
async function senderOn (t: WithAfter, url: string, options: Partial<WebhookSenderOptions> = {}) {
  const clock = manualClock()
  const now = (): number => EPOCH_MS + clock.now()
  const store = await createPaymentStore({ databaseUrl: await postgres.freshDatabase(), now, consumers: ['app', WEBHOOK_CONSUMER] })
  const deliveries = new WebhookDeliveryLog(store.db)
  const log = capturedLog()
  const sender = new WebhookSender({ outbox: store.outbox, deliveries, url, secret: SECRET, timeoutMs: 10_000, log, now, timers: clock.timers, random: () => 0.5, ...options })
  t.after(async () => {
    await sender.close()
    await store.close()
  })
  let payments = 0
  async function confirmedEvent () {
    const invoice = await store.invoices.createInvoice({ amountSat: 250_000_000, receiver: MERCHANT, expiresInS: 600, confirmations: 1 })
    const id = txid(++payments)
    const { events } = await store.invoices.recordObservation(invoice.id, { txid: id, transaction: paymentTransaction({ txid: id, amountSat: 250_000_000, memo: invoice.memo, height: 7 }), tipHeight: 7 })
    assert.deepEqual(events.map(event => event.type), ['confirmed'])
    return events[0] as NonNullable<typeof events[0]>
  }
  /** Moves the clock, then waits for what that woke to finish. */
  async function advance (ms: number) {
    clock.advance(ms)
    await sender.whenIdle()
  }
  return { store, deliveries, sender, log, now, clock, advance, confirmedEvent }
}

const verified = (request: Received, nowS: number) => verifyWebhookSignature({ secret: SECRET, header: request.headers['x-payment-signature'], body: request.body, nowS })

describe('payment webhooks', () => {
  it('POST each event as signed JSON that pocketnet-client\'s verifier accepts, with its idempotency key, and log the attempt', async (t) => {
    const receiver = await startReceiver(t)
    // Credentials become Basic authorization; neither they nor the query are stored.
    const url = receiver.url.replace('http://', 'http://hook:p%40ss@') + '?token=receivers-own'
    const { sender, deliveries, store, now, confirmedEvent } = await senderOn(t, url)
    const event = await confirmedEvent()
    sender.wake()
    await sender.whenIdle()

    assert.equal(receiver.received.length, 1)
    const [request] = receiver.received as [Received]
    assert.equal(request.url, '/hooks/payments?token=receivers-own')
    assert.equal(request.headers['content-type'], 'application/json')
    assert.equal(request.headers['user-agent'], WEBHOOK_USER_AGENT)
    assert.equal(request.headers['idempotency-key'], `${event.invoiceId}:1`)
    assert.equal(request.headers.authorization, `Basic ${Buffer.from('hook:p@ss').toString('base64')}`)
    assert.deepEqual(verified(request, Math.floor(now() / 1000)), { timestampS: Math.floor(now() / 1000) })
    assert.throws(() => verifyWebhookSignature({ secret: `${SECRET}-other`, header: request.headers['x-payment-signature'], body: request.body, nowS: Math.floor(now() / 1000) }), { code: 'WEBHOOK_ERR_SIGNATURE' })
    const body = JSON.parse(request.body)
    assert.deepEqual(Object.keys(body), ['id', 'type', 'invoiceId', 'sequence', 'createdAt', 'invoice'])
    assert.deepEqual([body.id, body.type, body.invoiceId, body.sequence, body.createdAt], [`${event.invoiceId}:1`, 'confirmed', event.invoiceId, 1, new Date(event.createdAtMs).toISOString()])
    assert.deepEqual([body.invoice.id, body.invoice.state, body.invoice.amount, body.invoice.txid, body.invoice.confirmations], [event.invoiceId, 'confirmed', 250_000_000, txid(1), 1])
    assert.equal(body.invoice.hostRequest.feemode, 'exclude', 'the invoice as the API answers it')

    const [attempt] = await deliveries.list(event.id)
    assert.deepEqual({ ...attempt, id: 0 }, { id: 0, eventId: event.id, url: receiver.url, attempt: 1, startedAtMs: now(), finishedAtMs: now(), durationMs: 0, statusCode: 200, error: null })
    assert.deepEqual(await store.outbox.backlog(WEBHOOK_CONSUMER), { pending: 0, givenUp: 0 })
    assert.equal(await store.outbox.countUndelivered('app'), 1, 'the app\'s handlers have their own row')
    assert.deepEqual(sender.counts, { delivered: 1, failed: 0, givenUp: 0 })
  })

  it('try a receiver that answered 500 twice again after growing delays, the same event each time, until it takes it', async (t) => {
    const receiver = await startReceiver(t, [{ status: 500, body: 'database down' }, { status: 500 }, { status: 204 }])
    const { sender, deliveries, log, advance, confirmedEvent } = await senderOn(t, receiver.url)
    const event = await confirmedEvent()
    sender.wake()
    await sender.whenIdle()
    assert.equal(receiver.received.length, 1)
    // The schedule: a minute, then two (the jitter source at its middle adds nothing).
    await advance(59_999)
    assert.equal(receiver.received.length, 1, 'not before its time')
    await advance(1)
    assert.equal(receiver.received.length, 2)
    await advance(119_999)
    assert.equal(receiver.received.length, 2, 'not before its time')
    await advance(1)
    assert.equal(receiver.received.length, 3)
    await advance(24 * 3_600_000)
    assert.equal(receiver.received.length, 3, 'delivered: never sent again')

    const attempts = await deliveries.list(event.id)
    assert.deepEqual(attempts.map(attempt => [attempt.attempt, attempt.statusCode, attempt.error]), [[1, 500, 'answered 500: "database down"'], [2, 500, 'answered 500'], [3, 204, null]])
    assert.deepEqual([attempts[1]!.startedAtMs - attempts[0]!.startedAtMs, attempts[2]!.startedAtMs - attempts[1]!.startedAtMs], [60_000, 120_000])
    // One event: the same body and key every time, signed anew at each attempt's time.
    assert.equal(new Set(receiver.received.map(request => request.body)).size, 1)
    assert.deepEqual(receiver.received.map(request => request.headers['idempotency-key']), Array(3).fill(event.idempotencyKey))
    assert.deepEqual(receiver.received.map(request => verified(request, Math.floor(attempts[2]!.startedAtMs / 1000)).timestampS), attempts.map(attempt => Math.floor(attempt.startedAtMs / 1000)))
    assert.deepEqual(log.lines.map(line => [line.level, line.fields.retryInMs]), [['warn', 60_000], ['warn', 120_000]])
    assert.deepEqual(sender.counts, { delivered: 1, failed: 2, givenUp: 0 })
  })

  it('time out a receiver that does not answer, then try again and deliver', async (t) => {
    const receiver = await startReceiver(t, ['hang'])
    const { sender, deliveries, clock, advance, confirmedEvent } = await senderOn(t, receiver.url)
    const event = await confirmedEvent()
    sender.wake()
    await waitFor('the first attempt to reach the receiver', () => receiver.received.length === 1)
    // The attempt is in flight: the clock moves without waiting for the sender.
    clock.advance(9_999)
    assert.equal((await deliveries.list(event.id))[0]?.finishedAtMs, null, 'still waiting: in flight, and logged as such')
    await advance(1)
    await receiver.received[0]!.closed
    const [timedOut] = await deliveries.list(event.id)
    assert.deepEqual([timedOut?.statusCode, timedOut?.error, timedOut?.durationMs], [null, 'no answer within 10000 ms', 10_000])
    await advance(60_000)
    assert.equal(receiver.received.length, 2)
    assert.deepEqual((await deliveries.list(event.id)).map(attempt => attempt.statusCode), [null, 200])
    assert.deepEqual(sender.counts, { delivered: 1, failed: 1, givenUp: 0 })
  })

  it('follow no redirect, and leave an event undelivered after its last attempt, counted and logged once', async (t) => {
    const receiver = await startReceiver(t, [{ status: 302, headers: { location: '/elsewhere' } }, { status: 503 }])
    const { sender, deliveries, store, log, advance, confirmedEvent } = await senderOn(t, receiver.url, { maxAttempts: 2 })
    const event = await confirmedEvent()
    sender.wake()
    await sender.whenIdle()
    await advance(60_000)
    await advance(7 * 24 * 3_600_000)
    assert.deepEqual(receiver.received.map(request => request.url), ['/hooks/payments', '/hooks/payments'], 'the redirect is a failure, not followed')
    assert.deepEqual((await deliveries.list(event.id)).map(attempt => attempt.statusCode), [302, 503])
    assert.deepEqual(await store.outbox.backlog(WEBHOOK_CONSUMER), { pending: 0, givenUp: 1 })
    assert.equal(await store.outbox.countUndelivered(WEBHOOK_CONSUMER), 1)
    assert.deepEqual(sender.counts, { delivered: 0, failed: 2, givenUp: 1 })
    assert.deepEqual(log.lines.filter(line => line.level === 'error').map(line => [line.fields.idempotencyKey, line.fields.attempt]), [[event.idempotencyKey, 2]])
  })

  it('retry a receiver that cannot be reached, naming the network error', async (t) => {
    const receiver = await startReceiver(t)
    // A port that was free a moment ago: nothing listens there.
    const closed = createServer()
    await new Promise<void>(resolve => closed.listen(0, '127.0.0.1', resolve))
    const { port } = closed.address() as { port: number }
    await new Promise(resolve => closed.close(resolve))
    const { sender, deliveries, confirmedEvent } = await senderOn(t, `http://127.0.0.1:${port}/hooks`)
    const event = await confirmedEvent()
    sender.wake()
    await sender.whenIdle()
    assert.deepEqual((await deliveries.list(event.id)).map(attempt => [attempt.statusCode, attempt.error]), [[null, 'network error: ECONNREFUSED']])
    assert.equal(receiver.received.length, 0)
  })
})

describe('a receiver as docs/payments.md writes one', () => {
  it('takes a genuine webhook once however often it comes, and refuses a forged one', async (t) => {
    process.env.PAYMENT_WEBHOOK_SECRET = SECRET
    const handled = new Set<string>()
    const paid: Array<{ id: string, type: string }> = []
    const markPaid = async (event: { id: string, type: string }) => { paid.push(event) }
    // docs:webhook-receiver:start
    const receiver = createServer(async (request, response) => {
      const chunks: Buffer[] = []
      for await (const chunk of request) chunks.push(chunk as Buffer)
      const body = Buffer.concat(chunks) // the raw bytes: verify before parsing
      try {
        verifyWebhookSignature({
          secret: process.env.PAYMENT_WEBHOOK_SECRET as string,
          header: request.headers['x-payment-signature'],
          body,
          nowS: Math.floor(Date.now() / 1000),
        })
      } catch {
        response.writeHead(400).end()
        return
      }
      const event = JSON.parse(body.toString('utf8'))
      // At least once: the same event may come again. Its id says so.
      if (!handled.has(event.id)) {
        await markPaid(event)
        handled.add(event.id)
      }
      response.writeHead(204).end()
    })
    // docs:webhook-receiver:end
    await new Promise<void>(resolve => receiver.listen(0, '127.0.0.1', resolve))
    t.after(() => new Promise(resolve => receiver.close(resolve)))
    const url = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/`
    // The receiver reads the real clock: so does this sender.
    const { sender, deliveries, confirmedEvent } = await senderOn(t, url, { now: Date.now })
    const event = await confirmedEvent()
    sender.wake()
    await sender.whenIdle()
    assert.deepEqual(paid.map(one => [one.id, one.type]), [[event.idempotencyKey, 'confirmed']])
    assert.deepEqual((await deliveries.list(event.id)).map(attempt => attempt.statusCode), [204])

    const body = JSON.stringify({ id: event.idempotencyKey, type: 'confirmed' })
    const post = async (headers: Record<string, string>) => (await fetch(url, { method: 'POST', headers, body })).status
    const nowS = Math.floor(Date.now() / 1000)
    assert.equal(await post({ 'x-payment-signature': signWebhook(SECRET, body, nowS) }), 204, 'again: answered, not handled twice')
    assert.equal(await post({ 'x-payment-signature': signWebhook(`${SECRET}-forged`, body, nowS) }), 400)
    assert.equal(await post({ 'x-payment-signature': signWebhook(SECRET, body, nowS - 3600) }), 400, 'replayed an hour later')
    assert.equal(await post({}), 400)
    assert.equal(paid.length, 1)
  })
})

describe('the retry schedule', () => {
  it('doubles from a minute up to eight hours, twelve attempts over about a day, each delay within a quarter of it', () => {
    const middle = new RetryPolicy(WEBHOOK_RETRY, () => 0.5)
    const minutes = Array.from({ length: WEBHOOK_MAX_ATTEMPTS - 1 }, (_, i) => middle.delayMs(i + 1) / 60_000)
    assert.deepEqual(minutes, [1, 2, 4, 8, 16, 32, 64, 128, 256, 480, 480])
    const total = minutes.reduce((sum, one) => sum + one, 0)
    assert.ok(total > 23 * 60 && total < 25 * 60, `${total} minutes`)
    assert.deepEqual(middle.afterFailure(WEBHOOK_MAX_ATTEMPTS - 1), { giveUp: false, retryInMs: 480 * 60_000 })
    assert.deepEqual(middle.afterFailure(WEBHOOK_MAX_ATTEMPTS), { giveUp: true }, 'the twelfth failure is the last')
    assert.equal(new RetryPolicy(WEBHOOK_RETRY, () => 0).delayMs(3), 180_000)
    assert.equal(new RetryPolicy(WEBHOOK_RETRY, () => 0.999_999).delayMs(3), 300_000)
  })
})

describe('payment webhooks in the service', () => {
  /** The service with payments and webhooks on, on `dataDir`, its log lines kept; closed by `close()` or when the test ends. */
  async function service (t: WithAfter, options: { dataDir: string, receiverUrl: string, now: () => number, lines: string[] }) {
    const node = await startEmulator(t)
    const address = node.dataset.users[1]?.address as string
    const closers: Array<() => unknown> = []
    const app = await startApp({ after: fn => closers.push(fn) }, {
      nodes: [node.url],
      now: options.now,
      logStream: { write: line => { options.lines.push(line) } },
      env: { LOG_LEVEL: 'trace', PAYMENT_ADDRESS: address, DATA_DIR: options.dataDir, PAYMENT_WEBHOOK_URL: options.receiverUrl, PAYMENT_WEBHOOK_SECRET: SECRET },
    })
    let closed = false
    const close = async () => {
      if (closed) return
      closed = true
      for (const closer of closers.reverse()) await closer()
    }
    t.after(close)
    return { app: app.app, get: app.get, close }
  }

  /** An invoice the service makes, read over HTTP once expired: its `expired` event is the webhook. */
  async function expiredInvoice (service: { app: FastifyInstance, get: TestApp['get'] }, clock: { now: number }): Promise<string> {
    const invoice = await service.app.payments!.createInvoice({ amount: 1_000_000, expiresInS: 60 })
    clock.now += 60_000
    const read = await service.get(`/api/payments/invoices/${invoice.id}`)
    assert.deepEqual([read.status, read.body.data.state], [200, 'expired'])
    return invoice.id
  }

  it('delivers an event again, with the same idempotency key, after a restart cut its attempt short', async (t) => {
    const receiver = await startReceiver(t, ['hang'])
    const dataDir = await freshDataDir()
    t.after(() => rmSync(dataDir, { recursive: true, force: true }))
    const clock = { now: EPOCH_MS }
    const lines: string[] = []
    const first = await service(t, { dataDir, receiverUrl: receiver.url, now: () => clock.now, lines })
    const invoiceId = await expiredInvoice(first, clock)
    await waitFor('the webhook to reach the receiver', () => receiver.received.length === 1)
    await first.close()
    await receiver.received[0]!.closed
    const second = await service(t, { dataDir, receiverUrl: receiver.url, now: () => clock.now, lines })
    await waitFor('the webhook sent again by the new instance', () => receiver.received.length === 2)

    const [cut, again] = receiver.received as [Received, Received]
    assert.equal(again.headers['idempotency-key'], `${invoiceId}:1`)
    assert.equal(cut.headers['idempotency-key'], again.headers['idempotency-key'])
    assert.equal(cut.body, again.body)
    assert.deepEqual([JSON.parse(again.body).id, JSON.parse(again.body).type], [`${invoiceId}:1`, 'expired'])
    assert.deepEqual(verified(again, Math.floor(clock.now / 1000)), { timestampS: Math.floor(clock.now / 1000) })
    // The acknowledgement follows the answer: scraped until it shows (the deadline only turns a hang into a failure).
    let metrics = ''
    for (const deadline = performance.now() + 30_000; !metrics.includes('payments_webhook_deliveries_total{outcome="delivered"} 1');) {
      assert.ok(performance.now() < deadline, metrics)
      await new Promise(resolve => setTimeout(resolve, 5))
      metrics = await second.app.metrics.registry.metrics()
    }
    assert.match(metrics, /payments_webhook_deliveries_total\{outcome="failed"\} 0/)
    assert.match(metrics, /payments_webhook_backlog\{state="pending"\} 0/)
    assert.match(metrics, /payments_watcher_lease_held 1/, 'the embedded database\'s one process always watches')
    await second.close()

    const db = await openDatabase({ dataDir })
    t.after(() => db.close())
    const { rows } = await db.query<{ attempt: number, status_code: number | null, error: string | null }>('SELECT attempt, status_code, error FROM webhook_deliveries ORDER BY id')
    assert.deepEqual(rows, [{ attempt: 1, status_code: null, error: 'cut short: the service shut down' }, { attempt: 2, status_code: 200, error: null }])
  })

  it('writes the secret in no log line and no delivery row, even when the receiver quotes it back', async (t) => {
    const receiver = await startReceiver(t, [{ status: 401, body: `expected secret ${SECRET}` }])
    const dataDir = await freshDataDir()
    t.after(() => rmSync(dataDir, { recursive: true, force: true }))
    const clock = { now: EPOCH_MS }
    const lines: string[] = []
    const running = await service(t, { dataDir, receiverUrl: receiver.url, now: () => clock.now, lines })
    await expiredInvoice(running, clock)
    await waitFor('the failed attempt logged', () => lines.some(line => line.includes('webhook attempt failed')))
    await running.close()
    assert.ok(lines.length >= 3, `${lines.length} lines at trace level: the start, the request, the failure`)
    assert.deepEqual(lines.filter(line => line.includes(SECRET) || line.includes(SECRET.slice(8, 30))), [])
    const failure = JSON.parse(lines.find(line => line.includes('webhook attempt failed')) as string)
    assert.deepEqual([failure.statusCode, failure.error, failure.url], [401, 'answered 401: "expected secret [secret]"', receiver.url])

    const db = await openDatabase({ dataDir })
    t.after(() => db.close())
    const { rows } = await db.query('SELECT * FROM webhook_deliveries')
    assert.equal(rows.length, 1)
    assert.ok(!JSON.stringify(rows).includes(SECRET), JSON.stringify(rows))
  })

  it('refuses a webhook URL without a secret, a short secret, a URL that is not http(s), and webhooks with payments off', () => {
    const address = 'PR7srzZt4EfcNb3s27grgmiG8aB9vYNV82'
    const problems = (env: Record<string, string>): string[] => {
      try {
        loadConfig(env)
        return []
      } catch (err) {
        assert.ok(err instanceof ConfigError)
        return err.problems
      }
    }
    assert.deepEqual(problems({ PAYMENT_ADDRESS: address, PAYMENT_WEBHOOK_URL: 'https://shop.example/hooks' }).map(problem => problem.split(' ')[0]), ['PAYMENT_WEBHOOK_SECRET'])
    const short = 'too-short-but-secret-still'
    const refused = problems({ PAYMENT_ADDRESS: address, PAYMENT_WEBHOOK_URL: 'https://user:hunter2@shop.example/hooks', PAYMENT_WEBHOOK_SECRET: short })
    assert.deepEqual(refused.map(problem => problem.split(' ')[0]), ['PAYMENT_WEBHOOK_SECRET'])
    assert.ok(refused.every(problem => !problem.includes(short)), 'the secret is not quoted')
    const badUrl = problems({ PAYMENT_ADDRESS: address, PAYMENT_WEBHOOK_URL: 'ftp://user:hunter2@shop.example/hooks', PAYMENT_WEBHOOK_SECRET: SECRET })
    assert.deepEqual(badUrl.map(problem => problem.split(' ')[0]), ['PAYMENT_WEBHOOK_URL'])
    assert.ok(badUrl.every(problem => !problem.includes('hunter2')), 'nor the URL, which may hold credentials')
    assert.deepEqual(problems({ PAYMENT_WEBHOOK_URL: 'https://shop.example/hooks', PAYMENT_WEBHOOK_SECRET: SECRET }).map(problem => problem.split(' ')[0]), ['PAYMENT_WEBHOOK_URL'])
    const config = loadConfig({ PAYMENT_ADDRESS: address, PAYMENT_WEBHOOK_URL: 'https://shop.example/hooks', PAYMENT_WEBHOOK_SECRET: SECRET })
    assert.deepEqual([config.PAYMENT_WEBHOOK_URL, config.PAYMENT_WEBHOOK_TIMEOUT_MS], ['https://shop.example/hooks', 10_000])
    assert.equal(loadConfig({}).PAYMENT_WEBHOOK_URL, '', 'off by default')
  })
})
