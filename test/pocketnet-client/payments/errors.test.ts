import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { describe, it } from 'node:test'
import * as lib from '../../../packages/pocketnet-client/index.js'

const libReadme = await readFile(new URL('../../../packages/pocketnet-client/README.md', import.meta.url), 'utf8')

describe('the payment helpers\' error codes', () => {
  it('are listed in the pocketnet-client README with their meaning', () => {
    const rows = libReadme.split('\n').filter(line => line.startsWith('| `PAYMENT_ERR')).map(row => row.split('|').map(cell => cell.trim()))
    assert.deepEqual(rows.map(cells => cells[1]?.replaceAll('`', '')), Object.keys(lib.PAYMENT_ERROR_CODES))
    for (const cells of rows) assert.equal(cells[2], lib.PAYMENT_ERROR_CODES[cells[1]?.replaceAll('`', '') as lib.PaymentErrorCode])
  })

  it('are Error instances carrying their code', () => {
    const err = new lib.PaymentError('PAYMENT_ERR_LINK', 'no')
    assert.ok(err instanceof Error)
    assert.deepEqual([err.name, err.code, err.message], ['PaymentError', 'PAYMENT_ERR_LINK', 'no'])
  })

  it('are what the public surface throws', () => {
    assert.throws(() => lib.pkoinToSatoshi(0.1 + 0.2), { code: 'PAYMENT_ERR_AMOUNT' })
    assert.throws(() => lib.readChainTransaction(null), { code: 'PAYMENT_ERR_MALFORMED_TRANSACTION' })
    assert.throws(() => lib.buildHostCheckout({ address: '' }), { code: 'PAYMENT_ERR_LINK' })
  })
})
