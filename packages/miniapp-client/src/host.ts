/**
 * The Bastyon host, as a mini-app sees it: inside Bastyon a mini-app runs in an iframe, and the
 * host page's SDK (the global `BastyonSdk`: `new BastyonSdk()`, `init()`, `emit('loaded')`,
 * `sign(text)`, `payment(request)`, `registerForNotifications()`) is how it asks the user to sign,
 * to pay, or to be notified.
 */
export interface HostPaymentRequest {
  /** The host's own spelling. Amounts in PKOIN, as the host takes them. */
  recievers: Array<{ address: string, amount: number }>
  feemode: string
  /** The memo the payment carries: the invoice's. */
  message: string
}

/** What the client needs of the host: `sign` to sign in, `payment` to pay, `registerForNotifications` to opt in. A stand-in for tests and plain browsers has the same shape. */
export interface Host {
  /** The host's signature object for `text` ({nonce, signature, pubkey, address, v}). */
  sign (text: string): Promise<unknown>
  /** Pays from the user's wallet; resolves with the txid, or an object naming it (`transaction` or `txid`). */
  payment? (request: HostPaymentRequest): Promise<unknown>
  /**
   * Registers the user for this app's notifications at one of their Bastyon proxies (the host may
   * ask the user first); resolves with the proxy's token row, which does not name the proxy.
   */
  registerForNotifications? (): Promise<unknown>
}

interface BastyonSdkLike extends Host {
  init (): Promise<unknown>
  emit? (event: string): void
}

/** The host's SDK, started and told the app has loaded; undefined outside Bastyon (no `BastyonSdk`) or when it does not start. */
export async function connectHost (): Promise<Host | undefined> {
  const Sdk = (globalThis as { BastyonSdk?: new () => BastyonSdkLike }).BastyonSdk
  if (typeof Sdk !== 'function') return undefined
  try {
    const sdk = new Sdk()
    await sdk.init()
    sdk.emit?.('loaded')
    return sdk
  } catch {
    return undefined
  }
}

const TXID = /^[0-9a-f]{64}$/i

/** The txid in what the host's payment resolved with: the txid itself, or an object naming it; '' when none. */
export function txidOf (result: unknown): string {
  const named = result as { transaction?: unknown, txid?: unknown } | null
  const candidate = typeof result === 'string' ? result : (named?.transaction ?? named?.txid)
  return typeof candidate === 'string' && TXID.test(candidate) ? candidate.toLowerCase() : ''
}
