/**
 * `testSigner()`: a user's key, made up, that signs as the Bastyon host signs for a mini-app
 * (devnode/bastyon-host.ts), so that a test can sign in to the service without Bastyon.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { addressOf, hostSignature, sdkSign, testKey, type SignatureObject } from '../../../devnode/bastyon-host.js'

/** What the host's `sdk.sign(text)` gives a mini-app, and what `POST /api/auth/session` takes as `signature`. */
export type HostSignature = SignatureObject

export type SignerNetwork = 'main' | 'test' | 'regtest'

/** The address version of each network: `P…` on mainnet (the devnode's), `T…` on testnet, `m…`/`n…` on regtest. */
const ADDRESS_VERSION: Record<SignerNetwork, number> = { main: 0x37, test: 0x41, regtest: 111 }

export interface TestSignerOptions {
  /** Whose addresses to sign as (POCKETNET_NETWORK). Default `main`, the devnode's. */
  network?: SignerNetwork
  /** The signer's clock, ms since the epoch, which dates each signature. Default Date.now. */
  now?: () => number
}

export interface SignOptions {
  /** When the signature was made, ms since the epoch. Default: the signer's clock. */
  issued?: number
  /** Its lifetime in seconds. Default 360, as `sdk.sign`. */
  exp?: number
}

export interface TestSigner {
  /** The user's address. */
  readonly address: string
  /** The compressed public key, hex. */
  readonly publicKey: string
  /**
   * What the host's `sdk.sign(text)` gives the mini-app whose id is `appId` (BASTYON_APP_ID):
   * the session `<text>/<appId>` signed, `{ nonce, signature, pubkey, address, v }`.
   */
  sign (text: string, appId: string, options?: SignOptions): HostSignature
  /**
   * The host's own signature of a session that is not a mini-app's: what it sends a Bastyon
   * proxy (session `pocketnetproxy`) with `miniapp/addToken` when the app registers for notifications.
   */
  signSession (session: string, options?: SignOptions): HostSignature
}

/** The seed of the signer made without one. */
const DEFAULT_SEED = 'bastyon-miniapp-testkit user'

function keyOf (seedOrKey: string | Uint8Array): Uint8Array {
  if (typeof seedOrKey === 'string') return testKey(seedOrKey)
  if (!(seedOrKey instanceof Uint8Array) || !secp256k1.utils.isValidSecretKey(seedOrKey)) {
    throw new TypeError('testSigner() takes a seed (any text) or a secp256k1 private key of 32 bytes')
  }
  return seedOrKey
}

/**
 * A signer with the key `seedOrKey` stands for: a text is a seed (the same seed, the same key and
 * address on every run; different seeds, different users), a Uint8Array a private key itself.
 * Keys made from seeds are public knowledge: for test chains only.
 */
export function testSigner (seedOrKey: string | Uint8Array = DEFAULT_SEED, options: TestSignerOptions = {}): TestSigner {
  const key = keyOf(seedOrKey)
  const network = options.network ?? 'main'
  if (!Object.hasOwn(ADDRESS_VERSION, network)) throw new TypeError(`network must be main, test or regtest, not ${JSON.stringify(network)}`)
  const version = ADDRESS_VERSION[network]
  const now = options.now ?? Date.now
  return {
    address: addressOf(key, version),
    publicKey: Buffer.from(secp256k1.getPublicKey(key, true)).toString('hex'),
    sign (text, appId, signOptions = {}) {
      return sdkSign(text, appId, { key, version, issued: signOptions.issued ?? now(), ...(signOptions.exp === undefined ? {} : { exp: signOptions.exp }) })
    },
    signSession (session, signOptions = {}) {
      return hostSignature(session, { key, version, issued: signOptions.issued ?? now(), ...(signOptions.exp === undefined ? {} : { exp: signOptions.exp }) })
    },
  }
}
