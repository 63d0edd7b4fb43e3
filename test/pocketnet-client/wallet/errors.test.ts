import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { describe, it } from 'node:test'
import * as lib from '../../../packages/pocketnet-client/index.js'

const libReadme = await readFile(new URL('../../../packages/pocketnet-client/README.md', import.meta.url), 'utf8')

/** The README's rows of codes starting with `prefix`: [code, meaning]. */
function rows (prefix: string): string[][] {
  return libReadme.split('\n').filter(line => line.startsWith(`| \`${prefix}`)).map(row => row.split('|').map(cell => cell.trim().replaceAll('`', '')).slice(1, 3))
}

describe('the wallet\'s error codes', () => {
  it('are listed in the pocketnet-client README with their meaning', () => {
    assert.deepEqual(rows('WALLET_ERR'), Object.entries(lib.WALLET_ERROR_CODES).map(([code, meaning]) => [code, meaning.replaceAll('`', '')]))
    assert.deepEqual(rows('BROADCAST_ERR'), Object.entries(lib.BROADCAST_ERROR_CODES))
  })

  it('are Error instances carrying their code', () => {
    const err = new lib.WalletError('WALLET_ERR_FUNDS', 'no')
    assert.ok(err instanceof Error)
    assert.deepEqual([err.name, err.code, err.message], ['WalletError', 'WALLET_ERR_FUNDS', 'no'])
    const broadcast = new lib.BroadcastError('BROADCAST_ERR_CONFLICT', 'ab'.repeat(32), { rpcCode: -26, rpcMessage: 'txn-mempool-conflict' })
    assert.deepEqual([broadcast.name, broadcast.code, broadcast.rpcCode], ['BroadcastError', 'BROADCAST_ERR_CONFLICT', -26])
    assert.match(broadcast.message, /^transaction abab.* was not taken: Another transaction .* \(RPC error -26\)$/)
  })
})
