/**
 * The host's checkout (`sdk.ext(payment)`): the mini-app hands the host a payment object; the
 * host's SDK turns it into a link whose hash `h` is an Adler-32 checksum of the payment's main
 * fields, shows its checkout, pays with the memo `pay_<h>`, then POSTs `{tx, ...payload}` to
 * `c_url`. A back-end that builds the object itself knows the memo before the user pays, and so
 * can recognise the payment on chain. The host's rules, field by field, are in docs/payments.md,
 * "The host's checkout".
 */
import { PaymentError } from './errors.js'
import { formatPkoin, isSatoshi, satoshiToPkoinNumber } from './satoshi.js'

/** One line of the checkout. */
export interface CheckoutItem {
  name: string
  amountSat: number
  count?: number
  image?: string
}

export interface HostCheckoutRequest {
  /** The receiving address. */
  address: string
  /** The price in satoshi; or give `items`, whose prices the host adds up. */
  amountSat?: number
  items?: CheckoutItem[]
  description?: string
  store?: { name?: string, site?: string }
  /**
   * What the host POSTs back to `c_url` beside `tx`, and what makes the hash (and so the memo)
   * unique: put the invoice id here.
   */
  payload?: Record<string, string | number | boolean>
  /** The host's `date` and `expired` fields, passed as given. */
  date?: number
  expired?: number
  /** Where the host POSTs `{tx, ...payload}` after paying (`fetch`), or sends the user (`redirect`). */
  c_url?: string
  c_url_type?: 'fetch' | 'redirect'
  /** Ask the user for an e-mail address or a phone number, sent to `c_url`. */
  email?: boolean
  phone?: boolean
}

/** The object for `sdk.ext(...)`, in the host's field names; pass it on unchanged (its key order is part of the hash). */
export interface HostPayment {
  address: string
  value?: number
  items?: Array<{ name: string, value: number, count?: number, image?: string }>
  description?: string
  store?: { name?: string, site?: string }
  payload?: Record<string, string | number | boolean>
  date?: number
  expired?: number
  c_url?: string
  c_url_type?: 'fetch' | 'redirect'
  email?: boolean
  phone?: boolean
}

export interface HostCheckout {
  payment: HostPayment
  /** The host's `h`: the Adler-32 of the payment's fields, in decimal. */
  hash: string
  /** The memo the host's checkout pays with: `pay_<hash>`. */
  memo: string
  /** The hex link text the SDK sends the host (`_` + hex of the link's JSON), for links built without the SDK. */
  ext: string
}

/** Fields the host sets itself in what it POSTs to `c_url`: a payload key of these names would be lost or confused. */
const RESERVED_PAYLOAD_KEYS = new Set(['tx', 'account', 'email', 'phone', 'shipment'])

/**
 * Adler-32 over the UTF-16 code units of `text`, as the host's SDK computes it (for ASCII, the
 * standard Adler-32 of the bytes).
 */
export function adler32 (text: string): number {
  const MOD_ADLER = 65521
  let a = 1
  let b = 0
  for (let i = 0; i < text.length; i++) {
    a = (a + text.charCodeAt(i)) % MOD_ADLER
    b = (b + a) % MOD_ADLER
  }
  return ((b << 16) | a) >>> 0
}

function refuse (message: string): never {
  throw new PaymentError('PAYMENT_ERR_LINK', message)
}

/**
 * The host carries a link as hex of its JSON, one byte per character, shifting Cyrillic down by
 * 0x350 and back: anything else beyond ASCII (`é`, `ё`, an emoji) comes back as another
 * character, and `<` `>` are stripped by its XSS filter before the JSON is read.
 */
function hexForHost (json: string): string {
  let hex = ''
  for (let i = 0; i < json.length; i++) {
    const code = json.charCodeAt(i)
    const carried = code < 0x80 ? code : code >= 0x3d0 && code <= 0x44f ? code - 0x350 : -1
    if (carried < 0) refuse(`the host's link cannot carry the character ${JSON.stringify(json[i])}: use ASCII or Cyrillic (А–я) text`)
    if (code === 0x3c || code === 0x3e) refuse('the host strips "<" and ">" from links: leave them out')
    hex += carried.toString(16).padStart(2, '0')
  }
  return hex
}

function hostItems (items: CheckoutItem[]): NonNullable<HostPayment['items']> {
  if (!Array.isArray(items) || items.length === 0) refuse('items must be a non-empty list')
  return items.map((item, index) => {
    if (typeof item.name !== 'string' || item.name === '') refuse(`item ${index} needs a name`)
    if (!isSatoshi(item.amountSat) || item.amountSat === 0) refuse(`item ${index} needs a positive amountSat`)
    if (item.count !== undefined && (!Number.isSafeInteger(item.count) || item.count < 1)) refuse(`item ${index} has a count that is not a positive whole number`)
    return {
      ...(item.image === undefined ? {} : { image: item.image }),
      name: item.name,
      value: satoshiToPkoinNumber(item.amountSat),
      ...(item.count === undefined ? {} : { count: item.count }),
    }
  })
}

/**
 * The host adds item prices as floats (`count × value`, summed): refuse items whose float sum is
 * not exactly the price in satoshi, since the host would pay that float.
 */
function checkItemsTotal (items: CheckoutItem[], host: NonNullable<HostPayment['items']>): void {
  let hostTotal = 0
  for (const item of host) hostTotal += (item.count ?? 1) * item.value
  const totalSat = items.reduce((sum, item) => sum + item.amountSat * (item.count ?? 1), 0)
  if (!isSatoshi(totalSat) || hostTotal !== satoshiToPkoinNumber(totalSat)) {
    refuse(`the host adds these item prices as floats and gets ${hostTotal} PKOIN, not ${isSatoshi(totalSat) ? formatPkoin(totalSat) : 'a whole number of satoshi'}: give one amountSat instead`)
  }
}

/**
 * The payment object for the host's `sdk.ext`, with the memo the host will pay it with.
 * `s_url` (shipping quotes), `shipmentValue`, `saltValue`, `discount` and `tax` are left out on
 * purpose: each changes what the host pays, so that the price would no longer be the server's.
 * @throws PaymentError `PAYMENT_ERR_LINK` for a missing address or price, items whose float sum
 *   is not exact, a payload key the host overwrites, or text the host's link cannot carry.
 * @example buildHostCheckout({ address, amountSat: 150_000_000, payload: { invoice: id }, c_url }).memo // 'pay_…'
 */
export function buildHostCheckout (request: HostCheckoutRequest): HostCheckout {
  if (typeof request.address !== 'string' || request.address === '') refuse('the address is missing')
  if ((request.amountSat === undefined) === (request.items === undefined)) refuse('give either amountSat or items')
  if (request.amountSat !== undefined && (!isSatoshi(request.amountSat) || request.amountSat === 0)) refuse('amountSat must be a positive whole number of satoshi')
  for (const key of Object.keys(request.payload ?? {})) {
    if (RESERVED_PAYLOAD_KEYS.has(key)) refuse(`the payload key "${key}" is one the host sets itself`)
  }
  const items = request.items === undefined ? undefined : hostItems(request.items)
  if (items !== undefined) checkItemsTotal(request.items as CheckoutItem[], items)
  const payment: HostPayment = {
    address: request.address,
    ...(request.amountSat === undefined ? {} : { value: satoshiToPkoinNumber(request.amountSat) }),
    ...(items === undefined ? {} : { items }),
    ...(request.description === undefined ? {} : { description: request.description }),
    ...(request.store === undefined ? {} : { store: request.store }),
    ...(request.payload === undefined ? {} : { payload: request.payload }),
    ...(request.date === undefined ? {} : { date: request.date }),
    ...(request.expired === undefined ? {} : { expired: request.expired }),
    ...(request.c_url === undefined ? {} : { c_url: request.c_url }),
    ...(request.c_url_type === undefined ? {} : { c_url_type: request.c_url_type }),
    ...(request.email === true ? { email: true } : {}),
    ...(request.phone === true ? { phone: true } : {}),
  }
  const hash = hostPaymentHash(payment)
  return { payment, hash, memo: `pay_${hash}`, ext: `_${hexForHost(JSON.stringify(linkParameters(payment, hash)))}` }
}

/**
 * The host SDK's `h` for a payment object: Adler-32 of its address, its items (JSON) or value,
 * description, store (JSON) and payload (JSON, or else the date), joined by `_`, in decimal.
 */
export function hostPaymentHash (payment: HostPayment): string {
  const parts: unknown[] = [payment.address]
  parts.push(payment.items ? JSON.stringify(payment.items) : (payment.value || 0))
  if (payment.description) parts.push(payment.description)
  if (payment.store) parts.push(JSON.stringify(payment.store))
  // As the SDK does: JSON.stringify(undefined) is undefined, which join() writes as nothing.
  parts.push(payment.payload ? JSON.stringify(payment.payload) : JSON.stringify(payment.date))
  return String(adler32(parts.map(part => (part === undefined ? '' : String(part))).join('_')))
}

/** The link's short field names, in the SDK's order (the order is part of the hex). */
function linkParameters (payment: HostPayment, hash: string): Record<string, unknown> {
  const link: Record<string, unknown> = { a: 'p' }
  if (payment.c_url) link.c = payment.c_url
  if (payment.c_url_type && payment.c_url_type !== 'fetch') link.ct = payment.c_url_type
  link.ad = payment.address
  if (payment.email) link.e = 1
  if (payment.phone) link.p = 1
  if (payment.payload) link.pl = payment.payload
  if (payment.date) link.d = payment.date
  if (payment.expired) link.ex = payment.expired
  if (payment.value) link.v = payment.value
  if (payment.description) link.de = payment.description
  if (payment.store) {
    const store: Record<string, string> = {}
    if (payment.store.name) store.n = payment.store.name
    if (payment.store.site) store.s = payment.store.site
    link.st = store
  }
  if (payment.items) {
    link.i = payment.items.map(item => ({
      ...(item.image ? { i: item.image } : {}),
      ...(item.name ? { n: item.name } : {}),
      ...(item.value ? { v: item.value } : {}),
      ...(item.count ? { c: item.count } : {}),
    }))
  }
  link.h = hash
  return link
}
