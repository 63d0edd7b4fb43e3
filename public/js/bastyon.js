// Inside Bastyon, a mini-app runs in an iframe and talks to the host through the Bastyon mini-app
// SDK (the global BastyonSdk: new BastyonSdk(), init(), emit('loaded'), sign(text) → the host's
// signature object, payment(request) → the transaction it sent), which the host page's developer
// includes with a script tag. Standalone, there is no SDK and this module does nothing.

/** Why a promise was rejected, in words: hosts reject with errors, strings or plain objects. */
function reason (err) {
  if (err instanceof Error && err.message) return err.message
  if (typeof err === 'string' && err) return err
  if (typeof err?.message === 'string' && err.message) return err.message
  if (typeof err?.error === 'string' && err.error) return err.error
  return 'no detail'
}

const TXID = /^[0-9a-f]{64}$/i

/**
 * The txid in what the host's payment call resolved with: the txid itself, or the host's action
 * object, which names it `transaction` once sent (`txid` accepted too); '' when it names none.
 */
function txidOf (result) {
  const candidate = typeof result === 'string' ? result : (result?.transaction ?? result?.txid)
  return typeof candidate === 'string' && TXID.test(candidate) ? candidate.toLowerCase() : ''
}

/** The host, when the SDK is there and starts; else undefined. */
export async function connectBastyon () {
  const Sdk = globalThis.BastyonSdk
  if (typeof Sdk !== 'function') return undefined
  try {
    const sdk = new Sdk()
    await sdk.init()
    sdk.emit?.('loaded')
    return {
      /**
       * The host's signature object for `text` ({nonce, signature, pubkey, address, v}). The host
       * asks the user every time; a refusal rejects with an Error saying why.
       * @param {string} text
       */
      async sign (text) {
        let signature
        try {
          signature = await sdk.sign(text)
        } catch (err) {
          throw new Error(reason(err))
        }
        if (signature === null || typeof signature !== 'object') throw new Error('Bastyon returned no signature')
        return signature
      },
      /** Whether this host can pay from a mini-app (its SDK has `payment`). */
      canPay: typeof sdk.payment === 'function',
      /**
       * Pays what the server's invoice asks (`invoice.hostRequest`, passed unchanged) from the
       * user's wallet; the host asks the user first. Resolves with the txid; a refusal rejects
       * with an Error saying why.
       * @param {{ recievers: Array<{ address: string, amount: number }>, feemode: string, message: string }} hostRequest
       * @returns {Promise<string>}
       */
      async pay (hostRequest) {
        let result
        try {
          result = await sdk.payment(hostRequest)
        } catch (err) {
          throw new Error(reason(err))
        }
        const txid = txidOf(result)
        if (txid === '') throw new Error('Bastyon sent no transaction')
        return txid
      },
    }
  } catch {
    return undefined
  }
}
