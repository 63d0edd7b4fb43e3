import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { describe, it } from 'node:test'
import * as lib from '../../../packages/pocketnet-client/index.js'

const libReadme = await readFile(new URL('../../../packages/pocketnet-client/README.md', import.meta.url), 'utf8')

describe('the node event source\'s error codes', () => {
  it('are listed in the pocketnet-client README with their meaning', () => {
    const rows = libReadme.split('\n').filter(line => line.startsWith('| `EVENTS_ERR')).map(row => row.split('|').map(cell => cell.trim()))
    assert.deepEqual(rows.map(cells => cells[1]?.replaceAll('`', '')), Object.keys(lib.EVENT_ERROR_CODES))
    for (const cells of rows) assert.equal(cells[2], lib.EVENT_ERROR_CODES[cells[1]?.replaceAll('`', '') as lib.EventErrorCode])
  })

  it('are Error instances carrying their code, the node and the heights skipped', () => {
    const err = new lib.NodeEventError('EVENTS_ERR_GAP', 'skipped', { node: 'node 2', skipped: { fromHeight: 1, toHeight: 2 } })
    assert.ok(err instanceof Error)
    assert.equal(err.name, 'NodeEventError')
    assert.deepEqual([err.code, err.node, err.skipped], ['EVENTS_ERR_GAP', 'node 2', { fromHeight: 1, toHeight: 2 }])
  })

  it('documents every option and its default as EVENT_SOURCE_RANGES holds them', () => {
    for (const [name, range] of Object.entries(lib.EVENT_SOURCE_RANGES)) {
      const row = libReadme.split('\n').find(line => line.startsWith('| `') && line.includes(`\`${name}\``))
      assert.ok(row, `${name} has a row`)
      assert.ok(row.includes(String(range.default)), `${name}'s row says ${range.default}`)
    }
  })
})
