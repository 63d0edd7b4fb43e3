/**
 * The demo page's tip panel (issue #26) in Debian's Chromium, on the emulator's chain: an invoice
 * from the service, paid by a stand-in for Bastyon's SDK through the emulator (`sdk.payment` as
 * the host does it: the amount to the receiver, the invoice's memo in an OP_RETURN), its state
 * shown live from the event stream as the test mines blocks; an underpayment flagged and never
 * confirmed; the service's 400 in words; without the SDK, the invoice, its checkout and the line
 * that paying needs Bastyon; the invoice read by GET when the stream is refused; an expiry. And
 * `npm run demo`'s way to pay from a plain browser: the demo wallet (`?wallet=demo`, the demo's
 * routes in devnode/demo-wallet.ts) pays through the emulator's controls over HTTP, blocks mined
 * through them too; never offered outside the demo.
 */
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { addressOf, testKey } from '../../devnode/bastyon-host.js'
import { mountDemoWallet } from '../../devnode/demo-wallet.js'
import { CONTROLS_PATH, DEVNODE_WALLET, PAYMENT_FEE_SAT, type ChainTransaction, type Emulator } from '../../devnode/server.js'
import { pkoinToSatoshi } from '../../packages/pocketnet-client/payments/satoshi.js'
import { startApp, type TestApp } from '../helpers/build-app.js'
import { ensureBuilt } from '../helpers/built.js'
import { ARTIFACTS_DIR, launchBrowser, openPage as openPageAt, type PageOptions } from '../helpers/browser.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { waitFor } from '../helpers/wait-for.js'
import { freshDataDir } from '../payments/databases.js'

type WithAfter = { after (fn: () => unknown): void }

// One browser, emulator and service for the file; a fresh page, and a fresh invoice, for each test.
const suite = { after (fn: () => unknown) { cleanups.push(fn) } }
const cleanups: Array<() => unknown> = []
let browser: Browser
let node: Emulator
let service: TestApp

const PKOIN = 100_000_000
const RECEIVER = addressOf(testKey('tip-flow receiver'))
const PAYER = addressOf(testKey('tip-flow payer'))
const FEE_SAT = 10_000
const INVOICE_TTL_S = 3600
// The service's clock (invoices' expiry): the expiry test moves it on.
let clockOffsetMs = 0

before(async () => {
  // The page imports the browser client's build from /client/.
  ensureBuilt()
  // Controls on, and the demo wallet's routes on the service, as `npm run demo` has them.
  node = await startEmulator(suite, { controls: true })
  const dataDir = await freshDataDir()
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }))
  // Every page reads the node panel and opens streams, all from one address: well over the
  // default rate limit and streams per client, which these tests are not about.
  service = await startApp(suite, {
    nodes: [node.url],
    now: () => Date.now() + clockOffsetMs,
    env: {
      PAYMENT_ADDRESS: RECEIVER,
      PAYMENT_TIPS: 'true',
      PAYMENT_CONFIRMATIONS: '2',
      PAYMENT_INVOICE_TTL_S: String(INVOICE_TTL_S),
      DATA_DIR: dataDir,
      EVENTS_INGEST: 'true',
      RATE_LIMIT_MAX: '100000',
      EVENTS_MAX_STREAMS_PER_CLIENT: '1000',
    },
    extend: app => mountDemoWallet(app, { emulatorUrl: node.url }),
  })
  await waitFor('the watcher to ingest the chain', () => {
    const reported = service.app.events.since(`${service.app.events.lastId.split('-')[0] as string}-0`, new Set(['blocks']))
    return reported !== 'gap' && reported.length > 0
  })
  browser = await launchBrowser(suite)
})
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

/** What the page passes to `sdk.payment`: the invoice's `hostRequest`. */
interface HostRequest {
  recievers: Array<{ address: string, amount: number }>
  feemode: string
  message: string
}

/**
 * Pays `request` through the emulator as the host's wallet does: the amount (less `shortSat`) to
 * the receiver, the message as the OP_RETURN memo, the change back to the payer; in the mempool
 * until the test mines a block.
 */
function payThroughNode (request: HostRequest, shortSat = 0): ChainTransaction {
  const [to] = request.recievers
  assert.ok(to, 'one receiver')
  const amount = pkoinToSatoshi(to.amount) - shortSat
  const funds = amount + PKOIN
  return node.addTransaction({
    inputs: [{ address: PAYER, amount: funds }],
    outputs: [
      { address: to.address, amount },
      { memo: Buffer.from(request.message, 'utf8').toString('hex'), amount: 0 },
      { address: PAYER, amount: funds - amount - FEE_SAT },
    ],
  })
}

// A stand-in for the host's SDK, with the shape Bastyon's has; `payment` is given as a method's source.
const standInSdk = (payment: string): string =>
  `window.BastyonSdk = class { async init () {}; emit () {}; sign () { return Promise.reject(new Error('no signing here')) }; ${payment} }`
/** The stand-in pays through `window.hostPay` (a function of this process) and resolves with the txid. */
const PAYS = standInSdk('payment (request) { return window.hostPay(request) }')

interface TipPageOptions extends PageOptions {
  /** More query parameters for the page. */
  query?: string
}

// The node panel polls once an hour: these tests are about the tip panel.
function openPage (t: WithAfter, options: TipPageOptions = {}): Promise<Page> {
  return openPageAt(t, browser, `${service.url}/?refreshMs=3600000&${options.query ?? ''}`, options)
}

const text = (page: Page, testId: string): Promise<string> => page.getByTestId(testId).innerText()

/** Asks for a tip of `pkoin` and answers the invoice the service created (its body as sent, too). */
async function tip (page: Page, pkoin: string): Promise<{ sent: unknown, invoice: any }> {
  const created = page.waitForResponse(response => new URL(response.url()).pathname === '/api/payments/tips')
  await page.getByLabel('Amount in PKOIN').fill(pkoin)
  await page.getByRole('button', { name: 'Tip', exact: true }).click()
  const response = await created
  const body = await response.json()
  return { sent: response.request().postDataJSON(), invoice: body.data }
}

/** Waits for the page's report of a txid (POST …/transaction) and answers the txid it sent. */
function reported (page: Page): Promise<string> {
  return page.waitForResponse(response => response.url().endsWith('/transaction') && response.request().method() === 'POST')
    .then(response => response.request().postDataJSON().txid)
}

/** Mines a block through the emulator's controls over HTTP, as a developer's curl does in the demo. */
async function mineOverHttp (): Promise<number> {
  const response = await fetch(`${node.url}${CONTROLS_PATH}/mine`, { method: 'POST' })
  assert.equal(response.status, 200)
  return (await response.json() as { height: number }).height
}

const state = (page: Page, name: string) => page.locator(`#tip-panel[data-state="${name}"]`).waitFor()

/**
 * Records every `data-state` the tip panel takes from now on, in order. A script's text, not a
 * function: tsx would name the function's inner ones with a helper the page does not have.
 */
const RECORD_STATES = `{
  const panel = document.getElementById('tip-panel')
  const shown = window.tipStates = []
  const note = value => { if (value && shown.at(-1) !== value) shown.push(value) }
  note(panel.dataset.state)
  new MutationObserver(records => {
    // Several changes in one task come as one batch: each record's old value, then the last.
    for (const record of records.slice(1)) note(record.oldValue)
    note(panel.dataset.state)
  }).observe(panel, { attributes: true, attributeFilter: ['data-state'], attributeOldValue: true })
}`

async function recordStates (page: Page): Promise<() => Promise<string[]>> {
  await page.evaluate(RECORD_STATES)
  return () => page.evaluate('[...window.tipStates]')
}

describe('the demo page\'s tip panel', () => {
  it('pays a tip through the host and shows it pending, seen after one block, confirmed after the second', async (t) => {
    const asked: HostRequest[] = []
    const page = await openPage(t, { init: PAYS, expose: { hostPay: (request: HostRequest) => { asked.push(request); return payThroughNode(request).txid } } })
    assert.equal(await page.getByTestId('tip-needs-bastyon').isVisible(), false, 'inside Bastyon, paying works')
    const report = reported(page)
    // 0.3 PKOIN: integer satoshi on the wire, never 0.1 + 0.2.
    const { sent, invoice } = await tip(page, '0.3')
    assert.deepEqual(sent, { amount: 30_000_000 })
    assert.deepEqual([invoice.amount, invoice.receiver, invoice.state], [30_000_000, RECEIVER, 'pending'])
    const txid = await report
    assert.deepEqual(asked, [invoice.hostRequest], 'the host is given the invoice\'s hostRequest unchanged')
    assert.equal(node.chain.findTransaction(txid)?.block, undefined, 'in the mempool')

    await page.getByTestId('tip-status').filter({ hasText: 'Sent and reported' }).waitFor()
    await state(page, 'pending')
    assert.equal(await text(page, 'tip-state'), 'Payment sent: waiting for a block.')
    assert.equal(await text(page, 'tip-txid'), txid)
    assert.equal(await text(page, 'tip-due'), '0.3 PKOIN')
    assert.equal(await text(page, 'tip-receiver'), RECEIVER)
    assert.equal(await text(page, 'tip-memo'), invoice.memo)
    assert.equal(await page.getByTestId('tip-pay').isVisible(), false, 'paid once')
    assert.equal(await page.getByTestId('tip-state').getAttribute('aria-live'), 'polite')

    node.mineBlock()
    await state(page, 'seen')
    assert.equal(await text(page, 'tip-state'), 'Seen in a block: 1 of 2 confirmations.')
    node.mineBlock()
    await state(page, 'confirmed')
    assert.equal(await text(page, 'tip-state'), 'Confirmed: 2 of 2 confirmations. Thank you!')
    assert.equal(await page.locator('#tip-panel').getAttribute('data-live'), 'stream', 'live from the event stream')
    assert.equal(await page.getByTestId('tip-flag').count(), 0)
    await page.locator('#tip-panel').screenshot({ path: `${ARTIFACTS_DIR}tip-confirmed.png` })
  })

  it('shows an underpayment as underpaid, never confirmed, however deep its block; a payment in full then settles it', async (t) => {
    // This host answers with its action object, whose `transaction` is the txid.
    const page = await openPage(t, {
      init: standInSdk('payment (request) { return window.hostPay(request).then(transaction => ({ transaction, completed: true })) }'),
      expose: { hostPay: (request: HostRequest) => payThroughNode(request, 50_000).txid },
    })
    const states = await recordStates(page)
    const report = reported(page)
    const { invoice } = await tip(page, '0.01')
    const shortTxid = await report
    await page.locator('[data-testid="tip-flag"][data-flag="underpaid"]').waitFor()
    assert.equal(await text(page, 'tip-flags'), 'Underpaid: 0.0095 PKOIN received of 0.01 PKOIN.')
    assert.equal(await text(page, 'tip-state'), 'Waiting for a payment in full.')
    // Its block, and one more: as deep as a payment in full needs.
    node.mineBlock()
    node.mineBlock()
    const checked = await service.get(`/api/payments/invoices/${invoice.id}/transaction`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ txid: shortTxid }),
    })
    assert.deepEqual([checked.body.data.invoice.state, checked.body.data.invoice.underpaidAmount], ['pending', 950_000], 'checked on chain, two blocks deep')

    // Paid again, in full, from another wallet: the watcher finds it on chain.
    payThroughNode(invoice.hostRequest)
    node.mineBlock()
    await state(page, 'seen')
    node.mineBlock()
    await state(page, 'confirmed')
    const shown = await states()
    assert.deepEqual(shown.slice(shown.indexOf('pending')), ['pending', 'seen', 'confirmed'], 'never confirmed before the payment in full')
    assert.equal(await text(page, 'tip-flags'), 'Underpaid: 0.0095 PKOIN received of 0.01 PKOIN.', 'the short payment stays on record')
    await page.locator('#tip-panel').screenshot({ path: `${ARTIFACTS_DIR}tip-underpaid.png` })
  })

  it('shows the service\'s 400 for an amount below its minimum and its 404 with tips off, and refuses a malformed amount itself', async (t) => {
    let paid = 0
    const page = await openPage(t, { init: PAYS, expose: { hostPay: () => { paid++; return '' } } })
    const { sent } = await tip(page, '0.00000001')
    assert.deepEqual(sent, { amount: 1 })
    await page.locator('[data-testid="tip-status"].error').waitFor()
    assert.equal(await text(page, 'tip-status'), 'Invalid body: amount: amount must be from 100000 to 10000000000 satoshi (got 1)')
    assert.equal(await page.getByTestId('tip-invoice').isVisible(), false)

    let asked = 0
    page.on('request', request => { if (new URL(request.url()).pathname === '/api/payments/tips') asked++ })
    for (const malformed of ['0.123456789', '-1', '1e3', 'one']) {
      await page.getByLabel('Amount in PKOIN').fill(malformed)
      await page.getByRole('button', { name: 'Tip', exact: true }).click()
      await page.getByTestId('tip-status').filter({ hasText: 'Enter an amount in PKOIN' }).waitFor()
    }
    assert.equal(asked, 0, 'nothing sent for a malformed amount')

    // A service with tips off has no such route (the service's own 404 answer).
    await page.route(url => url.pathname === '/api/payments/tips', route => route.fulfill({
      status: 404, json: { message: 'Not found', error: 'No route answers POST /api/payments/tips' },
    }))
    await tip(page, '1')
    await page.getByTestId('tip-status').filter({ hasText: 'Tips are off' }).waitFor()
    assert.equal(await text(page, 'tip-status'), 'Tips are off on this server. Not found: No route answers POST /api/payments/tips')
    assert.equal(paid, 0, 'the host was never asked to pay')
  })

  it('shows why the host did not pay, pays on "Pay with Bastyon", and shows the service\'s text when the report fails', async (t) => {
    let calls = 0
    const page = await openPage(t, {
      init: standInSdk('payment (request) { return window.hostPay(request).then(txid => txid === \'\' ? Promise.reject(new Error(\'The user declined\')) : txid) }'),
      // The user declines first, then pays.
      expose: { hostPay: (request: HostRequest) => ++calls === 1 ? '' : payThroughNode(request).txid },
    })
    await tip(page, '0.05')
    await page.locator('[data-testid="tip-status"].error', { hasText: 'Not paid: The user declined' }).waitFor()
    await state(page, 'pending')
    assert.equal(await text(page, 'tip-state'), 'Waiting for payment.')

    await page.route(url => url.pathname.endsWith('/transaction'), route => route.fulfill({
      status: 500, json: { message: 'Failed to check the transaction', error: 'The node did not answer' },
    }))
    await page.getByRole('button', { name: 'Pay with Bastyon' }).click()
    await page.locator('[data-testid="tip-status"].error', { hasText: 'Failed to check the transaction: The node did not answer' }).waitFor()
    assert.equal(calls, 2)
    assert.equal(await page.getByTestId('tip-pay').isVisible(), false, 'sent: not paid twice')
    // Unreported, the payment is still the chain's: found by the watcher, shown live.
    node.mineBlock()
    await state(page, 'seen')
    node.mineBlock()
    await state(page, 'confirmed')
  })

  it('without Bastyon\'s SDK, says paying needs Bastyon, shows the invoice and its checkout, and follows its state', async (t) => {
    // On a phone's width: the invoice and its checkout fit.
    const page = await openPage(t, { width: 360 })
    await page.getByTestId('tip-needs-bastyon').waitFor()
    assert.match(await text(page, 'tip-needs-bastyon'), /^Paying needs Bastyon/)
    const { sent, invoice } = await tip(page, '1.5')
    assert.deepEqual(sent, { amount: 150_000_000, checkout: true })
    await state(page, 'pending')
    assert.equal(await text(page, 'tip-status'), 'Invoice for 1.5 PKOIN created.')
    assert.equal(await text(page, 'tip-state'), 'Waiting for payment.')
    assert.equal(await text(page, 'tip-memo'), invoice.memo)
    assert.match(invoice.memo, /^pay_\d+$/, 'the memo Bastyon\'s checkout pays with')
    assert.equal(await page.getByTestId('tip-pay').isVisible(), false)
    await page.getByText('Bastyon\'s checkout for this invoice').click()
    assert.deepEqual(JSON.parse(await text(page, 'tip-checkout-object')), invoice.hostCheckout)
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 360), 'no sideways scrolling')
    await page.locator('#tip-panel').screenshot({ path: `${ARTIFACTS_DIR}tip-standalone.png` })

    // Paid elsewhere (in Bastyon): the page shows it as the chain has it.
    payThroughNode(invoice.hostRequest)
    node.mineBlock()
    await state(page, 'seen')
    node.mineBlock()
    await state(page, 'confirmed')
  })

  it('follows the invoice by long-polling while the service refuses the event stream', async (t) => {
    const page = await openPage(t, { init: PAYS, expose: { hostPay: (request: HostRequest) => payThroughNode(request).txid } })
    let streams = 0
    await page.route(url => url.pathname === '/api/events' && (url.searchParams.get('topics') ?? '').startsWith('payment:'), route => {
      streams++
      return route.fulfill({ status: 503, json: { message: 'Service unavailable', error: 'Too many streams' } })
    })
    const polls: string[] = []
    page.on('request', request => {
      const url = new URL(request.url())
      if (url.pathname === '/api/events/poll') polls.push(url.searchParams.get('topics') ?? '')
    })
    const report = reported(page)
    const { invoice } = await tip(page, '0.2')
    await report
    node.mineBlock()
    await state(page, 'seen')
    node.mineBlock()
    await state(page, 'confirmed')
    assert.equal(await text(page, 'tip-state'), 'Confirmed: 2 of 2 confirmations. Thank you!')
    assert.equal(await page.locator('#tip-panel').getAttribute('data-live'), 'poll')
    assert.equal(streams, 1, 'a refused stream is not asked for again')
    assert.ok(polls.length > 0 && polls.every(topics => topics === `payment:${invoice.id}`), `polled ${polls.join(', ')}`)
  })

  it('shows an invoice expired, and a payment after expiry as paid late, not confirmed', async (t) => {
    const page = await openPage(t)
    const { invoice } = await tip(page, '0.5')
    await state(page, 'pending')
    clockOffsetMs += (INVOICE_TTL_S + 1) * 1000
    // Each block, the service expires what is due.
    node.mineBlock()
    await state(page, 'expired')
    assert.match(await text(page, 'tip-state'), /^Expired: no payment in full arrived before /)
    payThroughNode(invoice.hostRequest)
    node.mineBlock()
    await page.locator('[data-testid="tip-flag"][data-flag="paidLate"]').waitFor()
    assert.equal(await text(page, 'tip-flags'), 'Paid late: 0.5 PKOIN arrived after the invoice expired.')
    const checked = await service.get(`/api/payments/invoices/${invoice.id}`)
    assert.deepEqual([checked.body.data.state, checked.body.data.paidLate], ['expired', true])
    assert.equal(await page.locator('#tip-panel').getAttribute('data-state'), 'expired')
  })

  it('without Bastyon, in the demo (?wallet=demo), pays with the demo wallet through the emulator\'s controls and reaches confirmed as blocks are mined through them', async (t) => {
    const page = await openPage(t, { query: 'wallet=demo' })
    await page.locator('#tip-panel[data-payer="demo"]').waitFor()
    assert.match(await text(page, 'tip-needs-bastyon'), /^Paying needs Bastyon/)
    assert.equal(await text(page, 'tip-demo-address'), DEVNODE_WALLET)
    const demoPay = page.getByRole('button', { name: 'Pay with the demo wallet' })
    assert.equal(await demoPay.isDisabled(), true, 'nothing to pay before an invoice')
    const states = await recordStates(page)

    const { sent, invoice } = await tip(page, '0.3')
    assert.deepEqual(sent, { amount: 30_000_000, checkout: true })
    await state(page, 'pending')
    assert.equal(await page.getByTestId('tip-pay').isVisible(), false, 'no "Pay with Bastyon" without Bastyon')
    const report = reported(page)
    const ordered = page.waitForRequest(request => new URL(request.url()).pathname === '/demo/wallet/pay')
    await demoPay.click()
    // The hostRequest as the host pays it: its receiver, its amount in satoshi, its message as the memo.
    assert.deepEqual((await ordered).postDataJSON(), { to: RECEIVER, amountSat: 30_000_000, feemode: 'exclude', memo: invoice.memo })
    const txid = await report
    const paid = node.chain.findTransaction(txid)
    assert.equal(paid?.block, undefined, 'in the mempool')
    assert.deepEqual(paid?.transaction.outputs, [{ address: RECEIVER, amount: 30_000_000 }, { memo: Buffer.from(invoice.memo, 'utf8').toString('hex'), amount: 0 }])
    assert.deepEqual(paid?.transaction.inputs, [{ address: DEVNODE_WALLET, amount: 30_000_000 + PAYMENT_FEE_SAT }])

    await page.getByTestId('tip-status').filter({ hasText: 'Sent and reported' }).waitFor()
    assert.equal(await text(page, 'tip-state'), 'Payment sent: waiting for a block.')
    assert.equal(await text(page, 'tip-txid'), txid)
    assert.equal(await demoPay.isDisabled(), true, 'paid once')

    const height = await mineOverHttp()
    await state(page, 'seen')
    assert.equal(await text(page, 'tip-state'), 'Seen in a block: 1 of 2 confirmations.')
    assert.equal(node.chain.findTransaction(txid)?.block?.height, height)
    await mineOverHttp()
    await state(page, 'confirmed')
    assert.equal(await text(page, 'tip-state'), 'Confirmed: 2 of 2 confirmations. Thank you!')
    const shown = await states()
    assert.deepEqual(shown.slice(shown.indexOf('pending')), ['pending', 'seen', 'confirmed'])
    const checked = await service.get(`/api/payments/invoices/${invoice.id}`)
    assert.deepEqual([checked.body.data.state, checked.body.data.txid], ['confirmed', txid], 'the service\'s own word, from the chain')
    await page.locator('#tip-panel').screenshot({ path: `${ARTIFACTS_DIR}tip-demo-wallet.png` })
  })

  it('shows why the demo wallet did not pay (the emulator\'s refusal, through the demo\'s route), then pays on a second click', async (t) => {
    const page = await openPage(t, { query: 'wallet=demo', width: 360 })
    await page.locator('#tip-panel[data-payer="demo"]').waitFor()
    await tip(page, '0.05')
    await state(page, 'pending')
    // The order reaches the real route and the real emulator with a memo over 80 bytes.
    const payRoute = (url: URL): boolean => url.pathname === '/demo/wallet/pay'
    await page.route(payRoute, route => route.continue({
      postData: JSON.stringify({ ...route.request().postDataJSON(), memo: 'm'.repeat(81) }),
    }))
    await page.getByRole('button', { name: 'Pay with the demo wallet' }).click()
    await page.locator('[data-testid="tip-status"].error', { hasText: 'Not paid: ' }).waitFor()
    assert.equal(await text(page, 'tip-status'), 'Not paid: memo must be 1 to 80 bytes of UTF-8 (got 81); leave it out for a payment without one (INVALID_MEMO)')
    assert.equal(node.chain.pendingTransactions.length, 0, 'nothing paid')
    assert.equal(await page.getByRole('button', { name: 'Pay with the demo wallet' }).isDisabled(), false, 'it can pay again')
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 360), 'no sideways scrolling on a phone')

    await page.unroute(payRoute)
    const report = reported(page)
    await page.getByRole('button', { name: 'Pay with the demo wallet' }).click()
    const txid = await report
    assert.equal(node.chain.pendingTransactions.at(-1)?.txid, txid)
    await mineOverHttp()
    await mineOverHttp()
    await state(page, 'confirmed')
  })

  it('never offers the demo wallet outside the demo: not without ?wallet=demo, not where the service has no demo wallet, not inside Bastyon', async (t) => {
    const plain = await openPage(t)
    await plain.locator('#tip-panel[data-payer="none"]').waitFor()
    assert.equal(await plain.getByTestId('tip-demo-wallet').isVisible(), false)
    const asked = await plain.evaluate('performance.getEntriesByType(\'resource\').map(entry => new URL(entry.name).pathname).filter(path => path.startsWith(\'/demo/\'))')
    assert.deepEqual(asked, [], 'not even asked for')

    // A service that is not the demo answers its own 404 for the demo's route.
    const elsewhere = await openPage(t, { query: 'wallet=demo' })
    await elsewhere.route(url => url.pathname === '/demo/wallet', route => route.fulfill({
      status: 404, json: { message: 'Not found', error: 'No route answers GET /demo/wallet' },
    }))
    await elsewhere.reload()
    await elsewhere.locator('#tip-panel[data-payer="none"]').waitFor()
    assert.equal(await elsewhere.getByTestId('tip-demo-wallet').isVisible(), false)
    assert.equal(await elsewhere.getByTestId('tip-needs-bastyon').isVisible(), true)

    const inBastyon = await openPage(t, { query: 'wallet=demo', init: PAYS, expose: { hostPay: () => '' } })
    await inBastyon.locator('#tip-panel[data-payer="bastyon"]').waitFor()
    assert.equal(await inBastyon.getByTestId('tip-demo-wallet').isVisible(), false, 'the host pays there')
  })
})
