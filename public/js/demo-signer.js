// `npm run demo` only: a stand-in for the host's `sdk.sign`, so that a plain browser can sign in
// on the emulator's chain. The page asks for it with `?signer=<name>` (`demo`, `alice`…: each name
// a made-up user of its own); it is there only when the service answers GET /demo/signer, a route
// `npm run demo` alone mounts, so anywhere else the page finds no signer and signs in only inside
// Bastyon. It signs as the host does, through the demo's POST /demo/signer/sign.
import { getJson, requestJson } from './api.js'

/** The demo signer for `name`, when this service is `npm run demo`; else undefined. */
export async function connectDemoSigner (name) {
  const answer = await getJson(`/demo/signer?signer=${encodeURIComponent(name)}`, { fresh: true })
  if (!answer.ok || typeof answer.data?.address !== 'string') return undefined
  return {
    /** The made-up user's address on the emulator's chain. */
    address: answer.data.address,
    /**
     * The host's signature object for `text`, as `sdk.sign` gives it; rejects with an Error saying why not.
     * @param {string} text
     */
    async sign (text) {
      const signed = await requestJson('/demo/signer/sign', { method: 'POST', body: { text, signer: name } })
      if (!signed.ok) throw new Error(signed.error ?? signed.message)
      return signed.data.signature
    },
  }
}
