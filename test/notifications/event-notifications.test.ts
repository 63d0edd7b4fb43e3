/**
 * Events worth telling, end to end over real HTTP: the service (sign-in, payments, a catalogue and
 * notifications on), the node emulator's chain and the Bastyon proxy emulator. A catalogue item
 * paid through the node tells its buyer once that the payment is confirmed and once that the
 * purchase is granted, even when the outbox hands the events out again; a user who did not opt in
 * is told nothing; server code's grants are told; a time-limited entitlement is told once before
 * it ends, and again before the end a renewal moved; with the kinds off, nothing is told.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { addressOf, testKey } from '../../devnode/bastyon-host.js'
import { startBastyonProxy } from '../../devnode/bastyon-proxy.js'
import { startApp } from '../helpers/build-app.js'
import { APP_ID, bearer, postJson, signIn } from '../helpers/sign-in.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { waitFor } from '../helpers/wait-for.js'
import { freshDataDir } from '../payments/databases.js'

type WithAfter = { after (fn: () => unknown): void }

const PKOIN = 100_000_000
const DAY_MS = 86_400_000
const MONTH_S = 2_592_000
const ITEMS = [{ sku: 'premium.monthly', title: 'Premium, one month', priceSat: 3 * PKOIN / 2, durationS: MONTH_S }]

const memoHex = (memo: string): string => Buffer.from(memo, 'utf8').toString('hex')

async function shop (t: WithAfter, env: Record<string, string>, now: () => number = Date.now) {
  const node = await startEmulator(t)
  const [payer, receiver] = node.dataset.users.map(user => user.address) as [string, string]
  const proxy = await startBastyonProxy({ apps: { [APP_ID]: { name: 'Demo', scope: 'demo.pocketnet.app' } } })
  t.after(() => proxy.close())
  const dataDir = await freshDataDir()
  const folder = mkdtempSync(join(tmpdir(), 'notify-events-'))
  t.after(() => { rmSync(dataDir, { recursive: true, force: true }); rmSync(folder, { recursive: true, force: true }) })
  const catalogFile = join(folder, 'catalog.json')
  writeFileSync(catalogFile, JSON.stringify({ items: ITEMS }))
  const app = await startApp(t, {
    nodes: [node.url],
    now,
    notificationExpiryScanMs: 20,
    env: {
      EVENTS_INGEST: 'true',
      PAYMENT_ADDRESS: receiver,
      PAYMENT_CONFIRMATIONS: '2',
      DATA_DIR: dataDir,
      BASTYON_APP_ID: APP_ID,
      CATALOG_FILE: catalogFile,
      NOTIFY_BASTYON_PROXIES: proxy.url,
      NOTIFY_USER_INTERVAL_S: '0',
      // The tests poll the invoice every few milliseconds until it confirms, which on a slow
      // machine takes longer than the default 300 requests a minute allow.
      RATE_LIMIT_MAX: '1000000',
      ...env,
    },
  })
  await waitFor('the watcher to ingest the chain', () => {
    const reported = app.app.events.since(`${app.app.events.lastId.split('-')[0] as string}-0`, new Set(['blocks']))
    return reported !== 'gap' && reported.length > 0
  })
  /** A signed-in user who opted in as a host and front-end do: a token at the proxy, then PUT. */
  const optedIn = async (name: string) => {
    const user = await signIn(app, { key: testKey(name), issued: now() })
    proxy.addToken(APP_ID, user.address)
    const put = await app.get('/api/me/notifications/bastyon', { method: 'PUT', headers: { ...bearer(user.token).headers, 'content-type': 'application/json' }, body: '{}' })
    assert.equal(put.status, 200, JSON.stringify(put.body))
    return user
  }
  /** Buys the monthly item as `token` and pays it on the node's chain, two blocks deep. */
  const buy = async (token: string): Promise<string> => {
    const bought = await postJson(app, '/api/catalog/premium.monthly/invoice', undefined, bearer(token).headers)
    assert.equal(bought.status, 200, JSON.stringify(bought.body))
    const invoice = bought.body.data
    node.addTransaction({ inputs: [{ address: payer, amount: 10 * PKOIN }], outputs: [{ address: receiver, amount: invoice.amount }, { memo: memoHex(invoice.memo), amount: 0 }] })
    node.mineBlock()
    node.mineBlock()
    await waitFor('the invoice confirmed', async () => (await app.get(`/api/payments/invoices/${invoice.id}`)).body.data.state === 'confirmed')
    return invoice.id
  }
  /** The pushes recorded for `address`: their text and the path they open (the proxy's hex is plain hex for ASCII). */
  const pushes = (address: string) => proxy.pushes(address).map(push => ({ body: push.body, path: Buffer.from(new URL(push.url, 'https://host/').searchParams.get('p') ?? '', 'hex').toString('latin1') }))
  const metric = async (series: string): Promise<number> => {
    const text = String((await app.get('/metrics')).body)
    const line = text.split('\n').find(each => each.startsWith(`${series} `))
    return Number(line?.split(' ').at(-1) ?? 0)
  }
  const told = (kind: string, status: string): Promise<number> => metric(`notifications_event_notices_total{kind="${kind}",status="${status}"}`)
  /** Two scans begun after this call: one of them ran entirely at the current clock. */
  const settleScans = async (): Promise<void> => {
    const scans = await metric('notifications_expiry_scans_total')
    await waitFor('two more scans', async () => await metric('notifications_expiry_scans_total') >= scans + 2)
  }
  return { node, app, proxy, optedIn, buy, pushes, told, settleScans }
}

describe('events worth telling', () => {
  it('tells a buyer who opted in that the payment is confirmed and the purchase granted, once each, even when the outbox hands them out again', async (t) => {
    const { app, optedIn, buy, pushes, told } = await shop(t, {
      NOTIFY_ON_INVOICE_CONFIRMED: 'true',
      NOTIFY_INVOICE_CONFIRMED_PATH: '/receipts',
      NOTIFY_ON_ENTITLEMENT_GRANTED: 'true',
      NOTIFY_ENTITLEMENT_GRANTED_HEADER: 'Premium is yours',
    })
    const alice = await optedIn('alice, told of her purchase')
    const bob = await signIn(app, { key: testKey('bob, who never opted in'), issued: Date.now() })
    const invoiceId = await buy(alice.token)
    await buy(bob.token)
    await waitFor('both notices pushed to alice', () => pushes(alice.address).length >= 2)
    assert.deepEqual(pushes(alice.address).sort((a, b) => a.body < b.body ? -1 : 1), [
      { body: 'Demo: Premium is yours', path: '/' },
      { body: 'Demo: Your payment is confirmed', path: '/receipts' },
    ])
    const grant = (await app.app.entitlements.history(alice.address))[0]
    const deliveries = await (await app.app.database.open()).query<{ address: string, notification_id: string }>('SELECT address, notification_id FROM notification_deliveries ORDER BY notification_id')
    assert.deepEqual(deliveries.rows.map(row => ({ ...row })), [
      { address: alice.address, notification_id: `grant:${grant?.id}:granted` },
      { address: alice.address, notification_id: `invoice:${invoiceId}:confirmed` },
    ], 'bob, not registered, got nothing queued')

    // The handler runs twice: every row of the consumer, once handled, handed out again.
    const db = await app.app.database.open()
    await waitFor('every event told once', async () => (await db.query("SELECT 1 FROM outbox WHERE consumer = 'notify' AND status = 'pending'")).rows.length === 0)
    const again = await db.query("UPDATE outbox SET status = 'pending', available_at_ms = 0, delivered_at_ms = NULL WHERE consumer = 'notify'")
    assert.equal(again.rowCount, 4, 'two confirmations and two grants, nothing else of the invoices')
    await app.app.entitlements.grant(bob.address, 'gift', { reason: 'wakes the consumer' })
    await waitFor('the rows handled again', async () => (await db.query("SELECT 1 FROM outbox WHERE consumer = 'notify' AND status = 'pending'")).rows.length === 0)
    assert.equal((await db.query('SELECT 1 FROM notification_deliveries')).rows.length, 2, 'nothing queued again')
    assert.deepEqual([await told('invoiceConfirmed', 'duplicate'), await told('entitlementGranted', 'duplicate')], [1, 1])
    assert.deepEqual([await told('invoiceConfirmed', 'not_registered'), await told('entitlementGranted', 'not_registered')], [2, 3], 'bob, twice, and his gift')
    assert.equal(pushes(alice.address).length, 2, 'told once each')
    assert.deepEqual(pushes(bob.address), [])
  })

  it('tells a grant by server code, and counts what it told by kind and status', async (t) => {
    const { app, optedIn, pushes, told } = await shop(t, { NOTIFY_ON_ENTITLEMENT_GRANTED: 'true', NOTIFY_ENTITLEMENT_GRANTED_PATH: '/gifts' })
    const carol = await optedIn('carol, given a gift')
    await app.app.entitlements.grant(carol.address, 'gift', { reason: 'a promotion' })
    await waitFor('the gift told', () => pushes(carol.address).length === 1)
    assert.deepEqual(pushes(carol.address), [{ body: 'Demo: Your purchase is ready', path: '/gifts' }])
    await app.app.entitlements.grant(testAddress('dave, not registered'), 'gift')
    await waitFor('the second grant handled', async () => await told('entitlementGranted', 'not_registered') === 1)
    assert.equal(await told('entitlementGranted', 'queued') + await told('entitlementGranted', 'sent'), 1)
  })

  it('tells a time-limited entitlement once before it ends, and again before the end a renewal moved', async (t) => {
    let at = Date.now()
    const { app, optedIn, pushes, settleScans } = await shop(t, { NOTIFY_BEFORE_EXPIRY_S: String(3 * 86_400) }, () => at)
    const erin = await optedIn('erin, whose month ends')
    const first = await app.app.entitlements.grant(erin.address, 'premium.monthly', { durationS: MONTH_S })
    at += 26 * DAY_MS
    await settleScans()
    assert.deepEqual(pushes(erin.address), [], 'four days left: not yet')
    at += DAY_MS + 60_000
    await waitFor('the expiry told', () => pushes(erin.address).length === 1)
    assert.deepEqual(pushes(erin.address), [{ body: 'Demo: Your access ends soon', path: '/' }])
    at += 3_600_000
    await settleScans()
    assert.equal(pushes(erin.address).length, 1, 'later scans: the same end, not told again')

    const renewal = await app.app.entitlements.grant(erin.address, 'premium.monthly', { durationS: MONTH_S })
    assert.equal(renewal.startsAtMs, first.expiresAtMs, 'a renewal from the current end')
    // Its end is 60 days after the first grant; three days before it, now 57 days in.
    at += 30 * DAY_MS
    await waitFor('the new end told', () => pushes(erin.address).length === 2)
    const ids = (await (await app.app.database.open()).query<{ notification_id: string }>('SELECT notification_id FROM notification_deliveries ORDER BY id')).rows.map(row => row.notification_id)
    assert.deepEqual(ids, [`grant:${first.id}:expiring:${first.expiresAtMs}`, `grant:${renewal.id}:expiring:${renewal.expiresAtMs}`])
  })

  it('tells nothing while the kinds are off (the default)', async (t) => {
    const { app, optedIn, buy, pushes } = await shop(t, {})
    const frank = await optedIn('frank, of an app that tells nothing')
    await buy(frank.token)
    await app.app.entitlements.grant(frank.address, 'gift', { durationS: 60 })
    await app.app.payments?.deliver()
    const db = await app.app.database.open()
    assert.deepEqual((await db.query("SELECT 1 FROM outbox WHERE consumer = 'notify'")).rows, [], 'no row written for the notifications')
    assert.deepEqual(pushes(frank.address), [])
  })
})

function testAddress (name: string): string {
  return addressOf(testKey(name))
}
