/**
 * The app's hot wallet (PAYOUT_KEY_FILE): one WIF private key of the service's network, read once
 * at start from a file only its owner may read (a key that other users of the machine can read is
 * a key they can spend). It signs the payouts' transactions (pocketnet-client's buildPayment) and
 * is never logged, never sent, never a user's key.
 */
import { readFileSync, statSync } from 'node:fs'
import { buildPayment, walletKeyFromWif, WalletError, type Coin, type PocketnetNetwork, type WalletKey } from 'pocketnet-client'
import { PayoutError } from './payout-errors.js'
import type { PayoutSigner } from './payouts-service.js'
import type { PayoutTerms, SignedPayout } from './payout-store.js'

/** Why the key file was refused: one sentence for the start-up error, never the key. */
export class HotWalletError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'HotWalletError'
  }
}

/** The key in `path`, for `network`; refused when the file is readable by its group or others, or holds no key of the network. */
export function readHotWallet (path: string, network: PocketnetNetwork): HotWallet {
  let mode: number
  try {
    mode = statSync(path).mode
  } catch (err) {
    throw new HotWalletError(`PAYOUT_KEY_FILE ${path} cannot be read: ${(err as NodeJS.ErrnoException).code ?? 'error'}`)
  }
  if ((mode & 0o077) !== 0) throw new HotWalletError(`PAYOUT_KEY_FILE ${path} may be read by others (mode ${(mode & 0o777).toString(8)}): make it readable by its owner only (chmod 600)`)
  const text = readFileSync(path, 'utf8').trim()
  try {
    return new HotWallet(walletKeyFromWif(text, network))
  } catch (err) {
    // The code says what is wrong; the text (the key) is never repeated.
    throw new HotWalletError(`PAYOUT_KEY_FILE ${path} holds no private key of the ${network} network in WIF (${err instanceof WalletError ? err.code : 'unreadable'})`)
  }
}

export class HotWallet implements PayoutSigner {
  readonly #key: WalletKey

  constructor (key: WalletKey) {
    this.#key = key
  }

  get address (): string {
    return this.#key.address
  }

  sign (coins: Coin[], terms: PayoutTerms, feeRateSatPerKb: number, nTimeS: number): SignedPayout {
    try {
      const built = buildPayment(this.#key, { coins, outputs: [{ address: terms.to, amountSat: terms.amountSat }], memo: terms.memo, feeRateSatPerKb, nTime: nTimeS })
      return { hex: built.hex, txid: built.txid, feeSat: built.feeSat, spent: built.spent }
    } catch (err) {
      if (err instanceof WalletError && err.code === 'WALLET_ERR_FUNDS') throw new PayoutError('PAYOUT_ERR_INSUFFICIENT_FUNDS', err.message)
      throw err
    }
  }
}
