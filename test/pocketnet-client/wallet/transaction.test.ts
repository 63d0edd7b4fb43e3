import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { hexToBytes } from '@noble/hashes/utils.js'
import { addressOfScript, decodeTransaction, encodeTransactionHex, signatureHash, transactionId } from '../../../packages/pocketnet-client/index.js'
import { NODE_SIGNED, BOB } from './vectors.js'

describe('Pocketnet transaction bytes', () => {
  it('decodes a transaction the node signed: version, nTime, input, outputs, memo', () => {
    const tx = decodeTransaction(NODE_SIGNED.hex)
    assert.equal(tx.version, 2)
    assert.equal(tx.nTime, NODE_SIGNED.nTime)
    assert.equal(tx.lockTime, 0)
    assert.deepEqual(tx.inputs.map(input => [input.txid, input.vout, input.sequence]), [[NODE_SIGNED.spent.txid, 0, 0xffffffff]])
    assert.deepEqual(tx.outputs.map(output => output.amountSat), [1_500_000, 0, 5_000_000_000 - 1_500_000 - 10_000])
    assert.equal(addressOfScript(tx.outputs[0]!.scriptPubKey, 'regtest'), BOB)
    assert.equal(new TextDecoder().decode(tx.outputs[1]!.scriptPubKey.subarray(2)), 'vector memo')
    assert.equal(addressOfScript(tx.outputs[2]!.scriptPubKey, 'regtest'), NODE_SIGNED.change)
  })

  it('encodes it back to the same bytes, and its txid is the node\'s', () => {
    assert.equal(encodeTransactionHex(decodeTransaction(NODE_SIGNED.hex)), NODE_SIGNED.hex)
    assert.equal(transactionId(NODE_SIGNED.hex), NODE_SIGNED.txid)
    assert.equal(transactionId(hexToBytes(NODE_SIGNED.hex)), NODE_SIGNED.txid)
  })

  it('hashes for signing as the node does: the node\'s own signature verifies against our hash (nTime included)', () => {
    const tx = decodeTransaction(NODE_SIGNED.hex)
    const scriptSig = tx.inputs[0]!.scriptSig
    const signature = scriptSig.subarray(1, 1 + scriptSig[0]! - 1)
    const publicKey = scriptSig.subarray(2 + scriptSig[0]!)
    const digest = signatureHash(tx, 0, hexToBytes(NODE_SIGNED.spent.scriptPubKey))
    assert.equal(secp256k1.verify(signature, digest, publicKey, { prehash: false, format: 'der' }), true)
    // Without nTime in the hash (Bitcoin's serialization), the same signature does not verify.
    const otherTime = signatureHash({ ...tx, nTime: tx.nTime + 1 }, 0, hexToBytes(NODE_SIGNED.spent.scriptPubKey))
    assert.equal(secp256k1.verify(signature, otherTime, publicKey, { prehash: false, format: 'der' }), false)
  })

  it('refuses bytes that are not one whole transaction', () => {
    assert.throws(() => decodeTransaction('00'), { code: 'WALLET_ERR_TRANSACTION' })
    assert.throws(() => decodeTransaction(NODE_SIGNED.hex.slice(0, -2)), { code: 'WALLET_ERR_TRANSACTION' })
    assert.throws(() => decodeTransaction(`${NODE_SIGNED.hex}00`), { code: 'WALLET_ERR_TRANSACTION', message: /1 bytes follow/ })
    assert.throws(() => decodeTransaction('zz'), { code: 'WALLET_ERR_TRANSACTION' })
    // The segwit marker where the input count is: no inputs.
    assert.throws(() => decodeTransaction(`${NODE_SIGNED.hex.slice(0, 16)}0001${NODE_SIGNED.hex.slice(16)}`), { code: 'WALLET_ERR_TRANSACTION' })
    assert.throws(() => transactionId('abc'), { code: 'WALLET_ERR_TRANSACTION' })
  })

  it('writes and reads counts of three bytes, and refuses a count not minimally encoded', () => {
    const tx = decodeTransaction(NODE_SIGNED.hex)
    const many = { ...tx, outputs: Array.from({ length: 253 }, () => tx.outputs[0]!) }
    const hex = encodeTransactionHex(many)
    assert.equal(decodeTransaction(hex).outputs.length, 253)
    // The output count sits after version, nTime, the input count and the one input.
    const at = (4 + 4 + 1 + 32 + 4 + 1 + tx.inputs[0]!.scriptSig.length + 4) * 2
    assert.equal(hex.slice(at, at + 6), 'fdfd00')
    const nonMinimal = `${NODE_SIGNED.hex.slice(0, at)}fd0300${NODE_SIGNED.hex.slice(at + 2)}`
    assert.throws(() => decodeTransaction(nonMinimal), { code: 'WALLET_ERR_TRANSACTION', message: /not minimally encoded/ })
  })

  it('signs only SIGHASH_ALL, and only inputs that exist', () => {
    const tx = decodeTransaction(NODE_SIGNED.hex)
    assert.throws(() => signatureHash(tx, 1, new Uint8Array(0)), { code: 'WALLET_ERR_TRANSACTION', message: /no input 1/ })
    assert.throws(() => signatureHash(tx, 0, new Uint8Array(0), 0x81), { code: 'WALLET_ERR_TRANSACTION', message: /SIGHASH_ALL/ })
  })

  it('refuses to encode fields out of range', () => {
    const tx = decodeTransaction(NODE_SIGNED.hex)
    assert.throws(() => encodeTransactionHex({ ...tx, nTime: 2 ** 32 }), { code: 'WALLET_ERR_TRANSACTION', message: /nTime/ })
    assert.throws(() => encodeTransactionHex({ ...tx, outputs: [{ amountSat: 0.5, scriptPubKey: new Uint8Array() }] }), { code: 'WALLET_ERR_TRANSACTION' })
    assert.throws(() => encodeTransactionHex({ ...tx, inputs: [] }), { code: 'WALLET_ERR_TRANSACTION' })
    assert.throws(() => encodeTransactionHex({ ...tx, inputs: [{ ...tx.inputs[0]!, txid: 'AB'.repeat(32) }] }), { code: 'WALLET_ERR_TRANSACTION' })
  })
})
