import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import bs58check from 'bs58check'
import { walletKeyFromWif, WIF_VERSION } from '../../../packages/pocketnet-client/index.js'
import { ALICE } from './vectors.js'

function wifOf (version: number, secret: Uint8Array, compressed = true): string {
  return bs58check.encode(Uint8Array.of(version, ...secret, ...(compressed ? [1] : [])))
}

describe('walletKeyFromWif', () => {
  it('reads a regtest key of the dataset: its address is the one the node lists', () => {
    const key = walletKeyFromWif(ALICE.wif, 'regtest')
    assert.equal(key.address, ALICE.address)
    assert.equal(key.publicKey.length, 33)
    assert.equal(key.privateKey.length, 32)
  })

  it('keeps the secret out of JSON, logs and spreads', async () => {
    const key = walletKeyFromWif(ALICE.wif, 'regtest')
    const secretHex = Buffer.from(key.privateKey).toString('hex')
    const { inspect } = await import('node:util')
    for (const shown of [JSON.stringify(key), inspect(key), JSON.stringify({ ...key })]) {
      assert.ok(!shown.includes(secretHex) && !shown.includes('privateKey'), shown)
    }
    assert.equal(JSON.stringify(key).includes(ALICE.address), true)
  })

  it('gives the same secret the mainnet and testnet address of their own version bytes', () => {
    const secret = bs58check.decode(ALICE.wif).subarray(1, 33)
    assert.match(walletKeyFromWif(wifOf(WIF_VERSION.main, secret), 'main').address, /^P/)
    assert.match(walletKeyFromWif(wifOf(WIF_VERSION.test, secret), 'test').address, /^T/)
  })

  it('refuses another network\'s key, naming it, never quoting the key', () => {
    assert.throws(() => walletKeyFromWif(ALICE.wif, 'main'), (err: Error & { code: string }) => {
      assert.equal(err.code, 'WALLET_ERR_KEY')
      assert.match(err.message, /a regtest key, not a mainnet key \(version byte 33\)/)
      assert.ok(!err.message.includes(ALICE.wif))
      return true
    })
  })

  it('refuses a bad checksum, an uncompressed key, a zero or too large scalar, and a wrong length', () => {
    const last = ALICE.wif.at(-1) === 'j' ? 'k' : 'j'
    assert.throws(() => walletKeyFromWif(`${ALICE.wif.slice(0, -1)}${last}`, 'regtest'), { code: 'WALLET_ERR_KEY', message: /checksum/ })
    const secret = bs58check.decode(ALICE.wif).subarray(1, 33)
    assert.throws(() => walletKeyFromWif(wifOf(239, secret, false), 'regtest'), { code: 'WALLET_ERR_KEY', message: /uncompressed/ })
    assert.throws(() => walletKeyFromWif(wifOf(239, new Uint8Array(32)), 'regtest'), { code: 'WALLET_ERR_KEY', message: /zero or not below/ })
    assert.throws(() => walletKeyFromWif(wifOf(239, new Uint8Array(32).fill(0xff)), 'regtest'), { code: 'WALLET_ERR_KEY', message: /zero or not below/ })
    assert.throws(() => walletKeyFromWif(bs58check.encode(Uint8Array.of(239, ...secret, 1, 1)), 'regtest'), { code: 'WALLET_ERR_KEY', message: /35 bytes/ })
    assert.throws(() => walletKeyFromWif(42 as unknown as string, 'regtest'), { code: 'WALLET_ERR_KEY' })
  })
})
