/**
 * `standInHost()`: the Bastyon host's SDK as bastyon-miniapp-client uses it (`createClient({ host })`),
 * in Node: it signs with a test signer, pays from the signer's address on the devnode, and, given
 * a Bastyon proxy (the emulator's URL), registers the user for notifications there as the host
 * does, so that a test drives a mini-app's sign-in, payments and opt-in as a user in Bastyon would.
 *
 * The client's `Host` and `HostPaymentRequest` are written out again below rather than imported:
 * this package does not depend on the client, and a structural copy is all `createClient` needs.
 */
import type { Devnode } from './devnode.js'
import { PROXY_SESSION } from '../../../devnode/bastyon-proxy.js'
import type { HostSignature, TestSigner } from './signer.js'

/** What the client hands the host's `payment()`: an invoice's `hostRequest` (bastyon-miniapp-client's HostPaymentRequest). */
export interface HostPaymentRequest {
  /** The host's own spelling. Amounts in PKOIN. */
  recievers: Array<{ address: string, amount: number }>
  feemode: string
  /** The memo the payment carries. */
  message: string
}

/** bastyon-miniapp-client's `Host`, the shape `createClient({ host })` takes. */
export interface Host {
  sign (text: string): Promise<unknown>
  payment? (request: HostPaymentRequest): Promise<unknown>
  registerForNotifications? (): Promise<unknown>
}

export interface HostPaymentMade {
  txid: string
  to: string
  amountSat: number
  memo: string
}

export interface StandInHostOptions {
  signer: TestSigner
  /** Where payments go: the signer's address pays, into the devnode's next block. */
  devnode: Devnode
  /** The mini-app's id, as the host puts it in what it signs: the service's BASTYON_APP_ID. */
  appId: string
  /**
   * The Bastyon proxy `registerForNotifications()` registers with, such as the emulator's URL
   * (startBastyonProxy); without one, it rejects, as a host whose user has no proxy with
   * notifications on.
   */
  proxy?: string
  /**
   * Asked before each signature, payment or registration, as Bastyon asks the user: false (or a
   * rejection) refuses it, as a user who says no (the host then rejects with `reason`).
   */
  approve?: (action: { kind: 'sign', text: string } | { kind: 'payment', request: HostPaymentRequest } | { kind: 'notifications' }) => boolean | Promise<boolean>
}

/** The token row a Bastyon proxy keeps for (app, address), as `miniapp/addToken` answers it. */
export interface ProxyTokenRow {
  token: string
  appId: string
  address: string
  date: string
  key: string
  _id: string
}

export interface StandInHost extends Host {
  sign (text: string): Promise<HostSignature>
  /** Resolves as the host does, with its action object naming the txid: `{ transaction }`. */
  payment (request: HostPaymentRequest): Promise<{ transaction: string }>
  /**
   * As the host does: `miniapp/addToken {appId, address}` at the proxy, signed by the user with
   * the proxy's session; resolves with the proxy's token row (which does not name the proxy).
   */
  registerForNotifications (): Promise<ProxyTokenRow>
  /** The payments made so far, oldest first. */
  readonly payments: readonly HostPaymentMade[]
  /**
   * The payments one by one, in the order made: each call resolves with the first one no earlier
   * call had, once it is made. Awaited after `client.pay(invoice)`: the moment to mine.
   */
  nextPayment (): Promise<HostPaymentMade>
}

const DECIMALS = 8

/**
 * Integer satoshi for PKOIN as the host's request gives them (a JSON number), by its decimal text,
 * never by float arithmetic: the client's own satoshiOfPkoin, copied, as its Host type is.
 */
function satoshiOfPkoin (pkoin: number): number {
  if (!Number.isFinite(pkoin) || pkoin <= 0) throw new Error(`not an amount in PKOIN: ${pkoin}`)
  const [whole = '', fraction = ''] = pkoin.toFixed(DECIMALS).split('.')
  const satoshi = Number(`${whole}${fraction}`)
  if (!Number.isSafeInteger(satoshi)) throw new Error(`not an amount in PKOIN: ${pkoin}`)
  return satoshi
}

/** The host's words when the user says no. */
const REFUSED = 'The user refused'

export function standInHost (options: StandInHostOptions): StandInHost {
  const { signer, devnode, appId } = options
  const approve = options.approve ?? (() => true)
  const payments: HostPaymentMade[] = []
  /** How many payments nextPayment() has handed out or promised. */
  let claimed = 0
  const waiting: Array<(payment: HostPaymentMade) => void> = []

  return {
    payments,
    async sign (text) {
      if (!await approve({ kind: 'sign', text })) throw new Error(REFUSED)
      return signer.sign(text, appId)
    },
    async payment (request) {
      if (!await approve({ kind: 'payment', request })) throw new Error(REFUSED)
      // The client pays an invoice, which has one receiver; a transaction of several is not made here.
      if (request.recievers.length !== 1) throw new Error(`the stand-in host pays exactly one receiver, not ${request.recievers.length}`)
      const [receiver] = request.recievers as [{ address: string, amount: number }]
      if (request.feemode !== 'exclude' && request.feemode !== 'include') throw new Error(`feemode must be exclude or include, not ${JSON.stringify(request.feemode)}`)
      const amountSat = satoshiOfPkoin(receiver.amount)
      const { txid } = devnode.pay({
        to: receiver.address,
        amountSat,
        from: signer.address,
        feemode: request.feemode,
        ...(request.message === '' ? {} : { memo: request.message }),
      })
      const made = { txid, to: receiver.address, amountSat, memo: request.message }
      payments.push(made)
      waiting.shift()?.(made)
      return { transaction: txid }
    },
    async registerForNotifications () {
      if (!await approve({ kind: 'notifications' })) throw new Error(REFUSED)
      if (options.proxy === undefined) throw new Error('no proxy of the user\'s has notifications on (give the stand-in host a proxy)')
      const response = await fetch(`${options.proxy.replace(/\/+$/, '')}/miniapp/addToken`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ appId, address: signer.address, signature: signer.signSession(PROXY_SESSION) }),
      })
      const answer = await response.json().catch(() => undefined) as { result?: unknown, data?: ProxyTokenRow } | undefined
      if (response.status !== 200 || answer?.result !== 'success' || answer.data === undefined) throw new Error(`the proxy refused the registration (HTTP ${response.status})`)
      return answer.data
    },
    nextPayment () {
      const index = claimed++
      const made = payments[index]
      if (made !== undefined) return Promise.resolve(made)
      return new Promise(resolve => { waiting.push(resolve) })
    },
  }
}
