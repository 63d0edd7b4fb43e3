/**
 * What the payouts' tests need of a hot wallet: a new throwaway key of a network in WIF, written to
 * a file only its owner may read (PAYOUT_KEY_FILE), and a seeded random for the moments a test
 * kills the service at, the same on every run.
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import bs58check from 'bs58check'
import { walletKeyFromWif, WIF_VERSION, type PocketnetNetwork } from 'pocketnet-client'

type WithAfter = { after (fn: () => unknown): void }

export interface KeyFile {
  path: string
  wif: string
  address: string
}

/** A new compressed key of `network`, in a file of mode 600 removed when the test ends. */
export function hotWalletKeyFile (t: WithAfter, network: PocketnetNetwork = 'main', mode = 0o600): KeyFile {
  const wif = bs58check.encode(Uint8Array.from([WIF_VERSION[network], ...randomBytes(32), 0x01]))
  const dir = mkdtempSync(join(tmpdir(), 'payout-key-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const path = join(dir, 'wallet.wif')
  writeFileSync(path, `${wif}\n`, { mode })
  return { path, wif, address: walletKeyFromWif(wif, network).address }
}

/** A seeded random in [0, 1): the emulator's own (mulberry32). */
export { seeded as seededRandom } from '../../devnode/data/generate.js'
