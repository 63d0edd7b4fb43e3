/**
 * Which events are told, to whom, with what: the kinds off by default and while notifications are
 * off, the payer an invoice's confirmation knows (whom it grants to, else its metadata's `payer`),
 * ids fixed by the event, and the configuration refusing a header or a path a send would refuse.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { addressOf, testKey } from '../../devnode/bastyon-host.js'
import { ConfigError, loadConfig } from '../../src/config.js'
import type { EntitlementEvent } from '../../src/entitlements/entitlement-events.js'
import { eventNoticeSettings, expiryNotice, noticeOf, payerOf } from '../../src/notifications/event-notices.js'
import type { Invoice, InvoiceEvent } from '../../src/payments/invoice.js'

const APP = { BASTYON_APP_ID: 'demo.pocketnet.app', POCKETNET_NETWORK: 'main' }
const ALICE = addressOf(testKey('alice pays'))
const BOB = addressOf(testKey('bob is named in the metadata'))
const ALL_ON = { ...APP, NOTIFY_ON_INVOICE_CONFIRMED: 'true', NOTIFY_ON_ENTITLEMENT_GRANTED: 'true', NOTIFY_BEFORE_EXPIRY_S: '259200' }

function invoiceEvent (type: InvoiceEvent['type'], invoice: Partial<Invoice>): InvoiceEvent {
  return { id: 1, invoiceId: 'inv1', sequence: 2, type, idempotencyKey: 'inv1:2', previousState: 'seen', invoice: { grant: null, metadata: {}, ...invoice } as Invoice, createdAtMs: 0 }
}

const grantedEvent = (address: string): EntitlementEvent => ({ id: 2, type: 'entitlementGranted', grantId: 7, idempotencyKey: 'grant:7:granted', address, sku: 'gift', grantedAtMs: 0, expiresAtMs: null, invoiceId: null, reason: null, createdAtMs: 0 })

describe('events worth telling', () => {
  it('tells nothing by default, nor while notifications are off, and what each kind says when on', () => {
    assert.deepEqual(eventNoticeSettings(loadConfig(APP)), {})
    assert.deepEqual(eventNoticeSettings(loadConfig({ ...ALL_ON, NOTIFICATIONS: 'false' })), {})
    assert.deepEqual(eventNoticeSettings(loadConfig({ ...ALL_ON, BASTYON_APP_ID: '' })), {}, 'no sign-in, no notifications')
    assert.deepEqual(eventNoticeSettings(loadConfig({ ...ALL_ON, NOTIFY_EXPIRY_PATH: '/renew?plan=monthly' })), {
      invoiceConfirmed: { header: 'Your payment is confirmed', path: '/' },
      entitlementGranted: { header: 'Your purchase is ready', path: '/' },
      expiry: { header: 'Your access ends soon', path: '/renew?plan=monthly', beforeMs: 259_200_000 },
    })
  })

  it('refuses a header or a path that a send would refuse, naming the variable', () => {
    for (const [name, value] of [['NOTIFY_INVOICE_CONFIRMED_HEADER', 'a\tb'], ['NOTIFY_ENTITLEMENT_GRANTED_HEADER', 'x'.repeat(101)], ['NOTIFY_EXPIRY_HEADER', 'two\nlines'], ['NOTIFY_INVOICE_CONFIRMED_PATH', 'orders'], ['NOTIFY_ENTITLEMENT_GRANTED_PATH', '//evil.example'], ['NOTIFY_EXPIRY_PATH', '/a b']] as const) {
      assert.throws(() => loadConfig({ ...APP, [name]: value }), (err: unknown) => err instanceof ConfigError && err.problems.some(problem => problem.startsWith(`${name} must be`)), name)
    }
  })

  it('tells an invoice\'s confirmation to whom it grants, else to its metadata\'s payer, else to no one', () => {
    const settings = eventNoticeSettings(loadConfig(ALL_ON))
    assert.equal(payerOf({ grant: { sku: 'premium', to: ALICE }, metadata: { payer: BOB } } as unknown as Invoice, 'main'), ALICE)
    assert.equal(payerOf({ grant: null, metadata: { payer: BOB } } as unknown as Invoice, 'main'), BOB)
    for (const metadata of [{}, { payer: 'not an address' }, { payer: 42 }]) assert.equal(payerOf({ grant: null, metadata } as unknown as Invoice, 'main'), undefined)
    assert.deepEqual(noticeOf(invoiceEvent('confirmed', { metadata: { payer: BOB } }), settings, 'main'), {
      kind: 'invoiceConfirmed',
      notification: { to: BOB, header: 'Your payment is confirmed', path: '/', id: 'invoice:inv1:confirmed' },
    })
    assert.equal(noticeOf(invoiceEvent('confirmed', { metadata: { kind: 'tip' } }), settings, 'main'), undefined, 'a tip: no one known to tell')
    assert.equal(noticeOf(invoiceEvent('seen', { metadata: { payer: BOB } }), settings, 'main'), undefined, 'only confirmations')
    assert.equal(noticeOf(invoiceEvent('confirmed', { metadata: { payer: BOB } }), {}, 'main'), undefined, 'the kind off')
  })

  it('tells a grant to its holder, and an end by the grant and the end it names', () => {
    const settings = eventNoticeSettings(loadConfig(ALL_ON))
    assert.deepEqual(noticeOf(grantedEvent(ALICE), settings, 'main'), { kind: 'entitlementGranted', notification: { to: ALICE, header: 'Your purchase is ready', path: '/', id: 'grant:7:granted' } })
    assert.equal(noticeOf({ ...grantedEvent(ALICE), type: 'entitlementRevoked' }, settings, 'main'), undefined, 'revocations are not told')
    assert.equal(noticeOf(grantedEvent(ALICE), {}, 'main'), undefined)
    assert.deepEqual(expiryNotice({ grantId: 7, address: ALICE, expiresAtMs: 1_800_000_000_000 }, { header: 'Ends', path: '/renew' }), { kind: 'expiring', notification: { to: ALICE, header: 'Ends', path: '/renew', id: 'grant:7:expiring:1800000000000' } })
  })
})
