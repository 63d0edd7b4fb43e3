/**
 * A stand-in host for developing in a plain browser against `npm run demo`, whose service has
 * routes for it: the demo signer (`POST /demo/signer/sign`: the host's signature object, made
 * with a made-up key per signer name), the demo wallet (`POST /demo/wallet/pay`: paid from the
 * emulator's wallet) and the demo's registration for notifications
 * (`POST /demo/notifications/register`: the signer's token at the demo's proxy emulator). None of
 * them exists outside the demo, so neither does this host's use: inside Bastyon, `connectHost()`.
 */
import { MiniAppError } from './errors.js'
import type { Host, HostPaymentRequest } from './host.js'
import { requestData, type Fetch } from './request.js'

export interface DemoHostOptions {
  /** The demo service's origin; '' (the default) for the page's own. */
  baseUrl?: string
  /** Which made-up user signs: 1 to 32 lowercase letters, digits or hyphens (default `demo`). */
  signer?: string
  fetch?: Fetch
}

const DECIMALS = 8

/** Integer satoshi for PKOIN as the host's request gives them (a JSON number), by its decimal text, never by float arithmetic. */
export function satoshiOfPkoin (pkoin: number): number {
  if (!Number.isFinite(pkoin) || pkoin <= 0) throw new MiniAppError(0, 'Not paid', `not an amount in PKOIN: ${pkoin}`)
  const [whole = '', fraction = ''] = pkoin.toFixed(DECIMALS).split('.')
  const satoshi = Number(`${whole}${fraction}`)
  if (!Number.isSafeInteger(satoshi)) throw new MiniAppError(0, 'Not paid', `not an amount in PKOIN: ${pkoin}`)
  return satoshi
}

export function demoHost (options: DemoHostOptions = {}): Host {
  const baseUrl = (options.baseUrl ?? '').replace(/\/+$/, '')
  const fetcher: Fetch = options.fetch ?? ((url, init) => globalThis.fetch(url, init))
  const signer = options.signer ?? 'demo'
  return {
    async sign (text: string) {
      const signed = await requestData<{ signature: unknown }>(fetcher, `${baseUrl}/demo/signer/sign`, { method: 'POST', body: { text, signer } })
      return signed.signature
    },
    async payment (request: HostPaymentRequest) {
      if (request.recievers.length !== 1) throw new MiniAppError(0, 'Not paid', 'the demo wallet pays exactly one receiver')
      const [to] = request.recievers as [{ address: string, amount: number }]
      const body = { to: to.address, amountSat: satoshiOfPkoin(to.amount), feemode: request.feemode, ...(request.message === '' ? {} : { memo: request.message }) }
      const paid = await requestData<{ txid: string }>(fetcher, `${baseUrl}/demo/wallet/pay`, { method: 'POST', body })
      return paid.txid
    },
    async registerForNotifications () {
      return await requestData<unknown>(fetcher, `${baseUrl}/demo/notifications/register`, { method: 'POST', body: { signer } })
    },
  }
}
