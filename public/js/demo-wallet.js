// `npm run demo` only: a stand-in for the host's wallet, so that a plain browser can pay a tip on
// the emulator's chain. The page asks for it with `?wallet=demo` (the address the demo prints);
// it is there only when the service answers GET /demo/wallet, a route `npm run demo` alone mounts,
// so anywhere else the page finds no wallet and shows none. It pays an invoice's hostRequest as
// the host does (the amount to the receiver, the message as the memo, the fee mode) through the
// demo's POST /demo/wallet/pay, which hands it to the emulator.
import { getJson, requestJson } from './api.js'
import { pkoinNumberToSatoshi } from './pkoin.js'

/** The demo wallet, when this service is `npm run demo`; else undefined. */
export async function connectDemoWallet () {
  const answer = await getJson('/demo/wallet', { fresh: true })
  if (!answer.ok || typeof answer.data?.address !== 'string') return undefined
  return {
    /** The wallet's address on the emulator's chain. */
    address: answer.data.address,
    /**
     * Pays `hostRequest` (what the page would pass to `sdk.payment`) and resolves with the txid;
     * rejects with an Error saying why it did not.
     * @param {{ recievers: Array<{ address: string, amount: number }>, feemode?: string, message?: string }} hostRequest
     * @returns {Promise<string>}
     */
    async pay (hostRequest) {
      const receivers = hostRequest?.recievers
      if (!Array.isArray(receivers) || receivers.length !== 1) throw new Error('the demo wallet pays exactly one receiver')
      const [{ address, amount }] = receivers
      // The host's request gives PKOIN as a JSON number; the emulator takes integer satoshi.
      const amountSat = pkoinNumberToSatoshi(amount)
      if (amountSat === undefined) throw new Error(`not an amount in PKOIN: ${amount}`)
      const body = { to: address, amountSat, feemode: hostRequest.feemode ?? 'exclude', ...(hostRequest.message ? { memo: hostRequest.message } : {}) }
      const paid = await requestJson('/demo/wallet/pay', { method: 'POST', body })
      if (!paid.ok) throw new Error(paid.error ?? paid.message)
      return paid.data.txid
    },
  }
}
