/**
 * The hot wallet's key file (PAYOUT_KEY_FILE): refused at start when others may read it, when it
 * holds no key or a key of another network, the message naming the file and the reason and never
 * the key; a good one gives the wallet's address.
 */
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { HotWalletError, readHotWallet } from '../../src/payouts/hot-wallet.js'
import { hotWalletKeyFile } from '../helpers/hot-wallet.js'

describe('the hot wallet\'s key file', () => {
  it('reads a key of the network from a file only its owner may read', (t) => {
    const key = hotWalletKeyFile(t, 'regtest')
    assert.equal(readHotWallet(key.path, 'regtest').address, key.address)
  })

  it('refuses a file others may read, a missing file, no key, and another network\'s key, never repeating the key', (t) => {
    const shared = hotWalletKeyFile(t, 'main', 0o644)
    assert.throws(() => readHotWallet(shared.path, 'main'), (err: unknown) => err instanceof HotWalletError && /may be read by others \(mode 644\).*chmod 600/.test(err.message) && !err.message.includes(shared.wif))
    assert.throws(() => readHotWallet(`${shared.path}.missing`, 'main'), (err: unknown) => err instanceof HotWalletError && /cannot be read: ENOENT/.test(err.message))
    const other = hotWalletKeyFile(t, 'main')
    assert.throws(() => readHotWallet(other.path, 'regtest'), (err: unknown) => err instanceof HotWalletError && /no private key of the regtest network/.test(err.message) && !err.message.includes(other.wif))
    writeFileSync(other.path, 'not a key at all', { mode: 0o600 })
    assert.throws(() => readHotWallet(other.path, 'main'), (err: unknown) => err instanceof HotWalletError && /WALLET_ERR_KEY/.test(err.message))
  })
})
