/**
 * The client a mini-app's page creates once: its session, its calls to the service, its live
 * events, its payments, and what the user holds and can buy.
 */
import { MiniAppError, reasonOf } from './errors.js'
import { follow, type EventSourceConstructor, type FollowOptions, type Following, type MiniAppEvent, type Transport } from './events.js'
import { txidOf, type Host } from './host.js'
import { requestAnswer, type Answer, type Fetch, type RequestOptions } from './request.js'
import { notificationsOf, type Notifications } from './notifications.js'
import { storageOf, type Storage } from './storage.js'
import type { CatalogItem, Challenge, CheckedTransaction, Entitlement, Invoice, Session, StreamTicket } from './api-types.js'

/** Where the session is kept across reloads: `sessionStorage`, say. Default: nowhere (memory only). */
export interface SessionStore {
  getItem (key: string): string | null
  setItem (key: string, value: string): void
  removeItem (key: string): void
}

export interface ClientOptions {
  /** The service's origin, such as https://api.example.com; '' (the default) for the page's own. */
  baseUrl?: string
  /** The host (connectHost()), or a stand-in; without one, signIn and pay refuse. */
  host?: Host | undefined
  fetch?: Fetch
  /** Default: the browser's; none makes follow() poll. */
  EventSource?: EventSourceConstructor | undefined
  sessionStore?: SessionStore
  /** How long a stream may take to open before following falls back to long-polling (default 5000). */
  streamOpenTimeoutMs?: number
  /** The first wait before reconnecting (default 3000, as the service's `retry`), doubled per failure up to 30 s. */
  retryMs?: number
}

export interface PayOptions {
  /** Told of each state the invoice goes through (`seen`, each confirmation), for the page to show. */
  onUpdate?: (invoice: Invoice) => void
  /** Told of the txid once the host has sent the transaction, before it is reported. */
  onSent?: (txid: string) => void
  transport?: Transport | 'auto'
}

export interface MiniAppClient {
  /** While signed in. */
  readonly session: Session | undefined
  /** A call to the service; resolves with the envelope's `data`, rejects with a MiniAppError. */
  request<T = any>(path: string, options?: RequestOptions): Promise<T>
  /** The signed-in user's stored values, and the app's collections (`storage.collection(name)`). */
  readonly storage: Storage
  /** The signed-in user's notifications: `optIn()` through the host, `optOut()`, `channels()`. */
  readonly notifications: Notifications
  /** Signs in through the host: the service's challenge, the host's signature of it, a session. */
  signIn (): Promise<Session>
  /** Ends the session here and on the service. */
  signOut (): Promise<void>
  /** Follows topics (`blocks`, `address:<a>`, `content:<hash>`, `app:<channel>`, `payment:<id>`); signed in, the user's own notifications too. */
  follow (topics: string[], onEvent: (event: MiniAppEvent) => void, options?: FollowOptions): Following
  /**
   * Pays an invoice through the host (`payment(invoice.hostRequest)`), reports the txid, and
   * resolves with the invoice once the chain has confirmed it. Rejects with a MiniAppError when
   * the host refuses, when the service refuses the host's transaction for this invoice (its
   * `detail` is the refusal's code, such as `MEMO_MISMATCH`), or when the invoice expires unpaid.
   */
  pay (invoice: Invoice, options?: PayOptions): Promise<Invoice>
  /**
   * `pay`'s first step alone, for a page that shows each one: asks the host to pay the invoice's
   * `hostRequest` and resolves with the txid of the transaction it sent.
   */
  sendPayment (invoice: Invoice): Promise<string>
  /**
   * `pay`'s second step alone: tells the service the txid the host sent. A hint that speeds the
   * check up (the chain decides either way); the answer says why the service does not count the
   * transaction, if it does not (`refused`).
   */
  reportPayment (invoice: Invoice, txid: string): Promise<CheckedTransaction>
  /** What the signed-in user holds now (`GET /api/me/entitlements`): one entry per SKU. */
  entitlements (): Promise<Entitlement[]>
  /** What the app sells (`GET /api/catalog`, from the service's CATALOG_FILE). */
  catalog (): Promise<CatalogItem[]>
  /**
   * Buys a catalogue item for the signed-in user: an invoice at the catalogue's price
   * (`POST /api/catalog/{sku}/invoice`), then `pay`. Resolves with the invoice once confirmed: the
   * item was granted in the same commit, so `entitlements()` lists it from then on.
   */
  buy (sku: string, options?: PayOptions): Promise<Invoice>
}

const SESSION_KEY = 'bastyon-miniapp-session'

function restored (store: SessionStore | undefined): Session | undefined {
  try {
    const session = JSON.parse(store?.getItem(SESSION_KEY) ?? 'null') as Session | null
    return session !== null && Date.parse(session.expiresAt) > Date.now() ? session : undefined
  } catch {
    return undefined
  }
}

export function createClient (options: ClientOptions = {}): MiniAppClient {
  const baseUrl = (options.baseUrl ?? '').replace(/\/+$/, '')
  const fetcher: Fetch = options.fetch ?? ((url, init) => globalThis.fetch(url, init))
  const host = options.host
  const store = options.sessionStore
  let session = restored(store)

  const keep = (next: Session | undefined): void => {
    session = next
    if (next === undefined) store?.removeItem(SESSION_KEY)
    else store?.setItem(SESSION_KEY, JSON.stringify(next))
  }

  async function send<T> (path: string, requestOptions: RequestOptions = {}): Promise<Answer<T>> {
    const token = requestOptions.auth === true ? session?.token : undefined
    if (requestOptions.auth === true && token === undefined) throw new MiniAppError(401, 'Not signed in', 'sign in first')
    try {
      return await requestAnswer<T>(fetcher, `${baseUrl}${path}`, { ...requestOptions, token })
    } catch (error) {
      // The service no longer knows the token (signed out elsewhere, expired): signed out here too.
      if (token !== undefined && (error as MiniAppError).status === 401 && session?.token === token) keep(undefined)
      throw error
    }
  }

  async function request<T> (path: string, requestOptions: RequestOptions = {}): Promise<T> {
    return (await send<T>(path, requestOptions)).data
  }

  const followContext = {
    baseUrl,
    fetch: fetcher,
    EventSource: 'EventSource' in options ? options.EventSource : (globalThis as { EventSource?: EventSourceConstructor }).EventSource,
    streamOpenTimeoutMs: options.streamOpenTimeoutMs ?? 5000,
    retryMs: options.retryMs ?? 3000,
    ticket: async () => session === undefined ? undefined : (await request<StreamTicket>('/api/events/ticket', { method: 'POST', auth: true })).ticket,
  }

  async function sendPayment (invoice: Invoice): Promise<string> {
    const payment = host?.payment
    if (payment === undefined) throw new MiniAppError(0, 'Not paid', 'this host cannot pay from a mini-app (its SDK has no payment)')
    let result: unknown
    try {
      result = await payment.call(host, invoice.hostRequest)
    } catch (error) {
      // A stand-in host's refusal (demoHost) is already in the service's words.
      throw error instanceof MiniAppError ? error : new MiniAppError(0, 'Not paid', reasonOf(error))
    }
    const txid = txidOf(result)
    if (txid === '') throw new MiniAppError(0, 'Not paid', 'the host sent no transaction')
    return txid
  }

  const reportPayment = (invoice: Invoice, txid: string): Promise<CheckedTransaction> =>
    request<CheckedTransaction>(`/api/payments/invoices/${encodeURIComponent(invoice.id)}/transaction`, { method: 'POST', body: { txid } })

  function pay (invoice: Invoice, payOptions: PayOptions = {}): Promise<Invoice> {
    // The same refusal as sendPayment's, before following anything.
    if (host?.payment === undefined) return sendPayment(invoice).then(() => invoice)
    return new Promise<Invoice>((resolve, reject) => {
      let done = false
      const finish = (error: unknown, paid?: Invoice): void => {
        if (done) return
        done = true
        following.close()
        if (paid !== undefined) resolve(paid)
        else reject(error)
      }
      const update = (next: Invoice): void => {
        if (done) return
        payOptions.onUpdate?.(next)
        if (next.state === 'confirmed') finish(undefined, next)
        else if (next.state === 'expired' && next.txid === null) finish(new MiniAppError(0, 'Not paid', 'the invoice expired before it was paid'))
      }
      const reread = (): void => {
        request<Invoice>(`/api/payments/invoices/${encodeURIComponent(invoice.id)}`).then(update, () => {})
      }
      // Followed before paying, so that no transition comes before the page listens; read once
      // connected, for one that came before.
      const following = follow(followContext, [`payment:${invoice.id}`], event => {
        if (event.event === 'payment' && event.data?.invoice !== undefined) update(event.data.invoice as Invoice)
        else if (event.event === 'resync') reread()
      }, { transport: payOptions.transport ?? 'auto', onConnect: reread })
      ;(async () => {
        const txid = await sendPayment(invoice)
        payOptions.onSent?.(txid)
        const checked = await reportPayment(invoice, txid)
        // Not yet known to the node is no refusal: the invoice follows the chain until it is.
        if (checked.refused !== undefined && checked.refused !== 'UNKNOWN_TRANSACTION') throw new MiniAppError(0, 'Not paid', checked.refused)
        update(checked.invoice)
      })().catch(error => finish(error))
    })
  }

  return {
    get session () { return session },
    request,
    storage: storageOf(send),
    notifications: notificationsOf(send, host, () => session !== undefined),
    async signIn () {
      if (host === undefined) throw new MiniAppError(0, 'Not signed in', 'no host to sign with: open the app in Bastyon, or give the client a stand-in host')
      const { challenge } = await request<Challenge>('/api/auth/challenge', { method: 'POST' })
      let signature: unknown
      try {
        signature = await host.sign(challenge)
      } catch (error) {
        throw new MiniAppError(0, 'Not signed in', reasonOf(error))
      }
      const signedIn = await request<Session>('/api/auth/session', { method: 'POST', body: { signature } })
      keep({ token: signedIn.token, address: signedIn.address, expiresAt: signedIn.expiresAt })
      return session as Session
    },
    async signOut () {
      if (session === undefined) return
      try {
        await request('/api/auth/session', { method: 'DELETE', auth: true })
      } finally {
        // Forgotten here whatever the answer: a token the service no longer knows is signed out too.
        keep(undefined)
      }
    },
    follow: (topics, onEvent, followOptions) => follow(followContext, topics, onEvent, followOptions),
    pay,
    sendPayment,
    reportPayment,
    async entitlements () {
      return (await request<{ entitlements: Entitlement[] }>('/api/me/entitlements', { auth: true })).entitlements
    },
    async catalog () {
      return (await request<{ items: CatalogItem[] }>('/api/catalog')).items
    },
    async buy (sku, payOptions) {
      const invoice = await request<Invoice>(`/api/catalog/${encodeURIComponent(sku)}/invoice`, { method: 'POST', auth: true })
      return pay(invoice, payOptions)
    },
  }
}
