import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { describe, it } from 'node:test'
import { adler32, buildHostCheckout, hostPaymentHash, type HostCheckoutRequest, type HostPayment } from '../../../packages/pocketnet-client/payments/host-checkout.js'

const ADDRESS = 'PR7srzZt4EfcNb3s27grgmiG8aB9vYNV82'
/** The requests the fixture's payment objects were built from, in its order. */
const REQUESTS: HostCheckoutRequest[] = [
  { address: 'mwtvjM7XYJ59cbotx8ZerEJtnzmeshwH9G', amountSat: 150_000_000 },
  { address: ADDRESS, amountSat: 12_345_678, description: 'Coffee for the author', payload: { invoice: 'inv_Xq3vY8rL2bWm9Kd1pT6uZA' }, c_url: 'https://app.example/api/payments/callback', store: { name: 'Cafe', site: 'https://app.example' } },
  { address: ADDRESS, items: [{ name: 'Кофе', amountSat: 50_000_000, count: 2 }, { name: 'Tip', amountSat: 25_000_000, image: 'https://app.example/tip.png' }], payload: { invoice: 'inv_2', n: 7, gift: true }, c_url: 'https://app.example/cb', c_url_type: 'redirect', email: true, phone: true, date: 1795588977000, expired: 1795592577000 },
  { address: ADDRESS, amountSat: 1, date: 1795588977000 },
]

interface HostOutput { payment: HostPayment, ext: string, h: string }
const hostOutputs = JSON.parse(await readFile(new URL('../../fixtures/payments/host-checkout-links.json', import.meta.url), 'utf8')) as HostOutput[]

describe('Adler-32', () => {
  it('gives the standard checksums for ASCII', () => {
    assert.equal(adler32('Wikipedia'), 0x11e60398)
    assert.equal(adler32(''), 1)
    assert.equal(adler32('a'.repeat(5552 * 3)), adler32('a'.repeat(5552 * 3)))
    assert.ok(adler32('\uffff'.repeat(10_000)) >= 0)
  })
})

describe('the host\'s checkout link (sdk.ext)', () => {
  it('builds the payment object, hash and link the host\'s own SDK code computes', () => {
    assert.equal(hostOutputs.length, REQUESTS.length)
    for (const [index, request] of REQUESTS.entries()) {
      const host = hostOutputs[index] as HostOutput
      const built = buildHostCheckout(request)
      assert.deepEqual(built.payment, host.payment, `payment ${index}`)
      assert.equal(JSON.stringify(built.payment), JSON.stringify(host.payment), `key order of payment ${index}`)
      assert.equal(built.hash, host.h, `hash ${index}`)
      assert.equal(built.memo, `pay_${host.h}`)
      assert.equal(built.ext, host.ext, `ext ${index}`)
      assert.equal(hostPaymentHash(host.payment), host.h)
    }
  })

  it('makes the memo differ per invoice through the payload', () => {
    const first = buildHostCheckout({ address: ADDRESS, amountSat: 100, payload: { invoice: 'inv_a' } })
    const second = buildHostCheckout({ address: ADDRESS, amountSat: 100, payload: { invoice: 'inv_b' } })
    assert.notEqual(first.memo, second.memo)
    assert.match(first.memo, /^pay_\d+$/)
  })

  it('refuses text the host\'s hex encoding would change, and markup its filter strips', () => {
    for (const description of ['Café', 'ёлка', 'coffee ☕', '<b>tip</b>']) {
      assert.throws(() => buildHostCheckout({ address: ADDRESS, amountSat: 100, description }), { code: 'PAYMENT_ERR_LINK' }, description)
    }
    assert.equal(buildHostCheckout({ address: ADDRESS, amountSat: 100, description: 'Кофе для автора' }).payment.description, 'Кофе для автора')
  })

  it('refuses items whose float sum the host would get wrong', () => {
    assert.throws(() => buildHostCheckout({ address: ADDRESS, items: [{ name: 'a', amountSat: 10_000_000 }, { name: 'b', amountSat: 20_000_000 }] }), {
      code: 'PAYMENT_ERR_LINK', message: /gets 0\.30000000000000004 PKOIN, not 0\.3/,
    })
    assert.equal(buildHostCheckout({ address: ADDRESS, items: [{ name: 'a', amountSat: 50_000_000, count: 3 }] }).payment.items?.[0]?.value, 0.5)
  })

  it('refuses a request without an address or a price, or with payload keys the host sets', () => {
    const bad: HostCheckoutRequest[] = [
      { address: '', amountSat: 1 },
      { address: ADDRESS },
      { address: ADDRESS, amountSat: 1, items: [{ name: 'a', amountSat: 1 }] },
      { address: ADDRESS, amountSat: 0 },
      { address: ADDRESS, amountSat: 1.5 },
      { address: ADDRESS, items: [] },
      { address: ADDRESS, items: [{ name: '', amountSat: 1 }] },
      { address: ADDRESS, items: [{ name: 'a', amountSat: 0 }] },
      { address: ADDRESS, items: [{ name: 'a', amountSat: 1, count: 0 }] },
      { address: ADDRESS, amountSat: 1, payload: { tx: 'forged' } },
      { address: ADDRESS, amountSat: 1, payload: { account: 'x' } },
    ]
    for (const request of bad) assert.throws(() => buildHostCheckout(request), { code: 'PAYMENT_ERR_LINK' }, JSON.stringify(request))
  })
})
