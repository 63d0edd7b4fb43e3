import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ReportedChain, type BlockRef } from '../../../packages/pocketnet-client/events/reported-chain.js'

const hash = (height: number, fork = 0): string => `${fork}`.padStart(4, '0') + String(height).padStart(60, '0')
const block = (height: number, fork = 0): BlockRef => ({ height, blockHash: hash(height, fork), time: 1000 + height })
const range = (from: number, to: number, fork = 0, forkFrom = Infinity): BlockRef[] =>
  Array.from({ length: to - from + 1 }, (_, i) => block(from + i, from + i >= forkFrom ? fork : 0))

function followed (from: number, to: number, capacity = 10): ReportedChain {
  const chain = new ReportedChain(capacity)
  for (const each of range(from, to)) chain.record(each)
  return chain
}

describe('the chain as reported', () => {
  it('finds the new blocks above the last one reported when the node\'s chain goes through it', () => {
    const chain = followed(100, 105)
    assert.deepEqual(chain.compare(range(104, 108)), { kind: 'linked', fresh: range(106, 108) })
    assert.deepEqual(chain.compare(range(103, 105)), { kind: 'linked', fresh: [] })
  })

  it('says the node is behind when it has not reached the last height reported', () => {
    assert.deepEqual(followed(100, 105).compare(range(101, 103)), { kind: 'behind' })
    assert.deepEqual(followed(100, 105).compare([]), { kind: 'behind' })
  })

  it('asks for more when the answer does not reach down to the last height reported', () => {
    assert.deepEqual(followed(100, 105).compare(range(106, 108)), { kind: 'unreached', nodeTip: 108 })
    assert.deepEqual(followed(100, 105).compare(range(107, 108)), { kind: 'unreached', nodeTip: 108 })
  })

  it('finds the lowest height whose hash changed within the answer', () => {
    const chain = followed(100, 105)
    assert.deepEqual(chain.compare(range(103, 106, 1, 105)), { kind: 'forked', height: 105, oldBlockHash: hash(105), newBlockHash: hash(105, 1) })
    assert.deepEqual(chain.compare(range(104, 106, 1, 104)), { kind: 'forked', height: 104, oldBlockHash: hash(104), newBlockHash: hash(104, 1) })
    // Below what is remembered nothing can be compared: the lowest remembered height is the answer.
    assert.deepEqual(followed(100, 105).compare(range(98, 106, 1, 98)), { kind: 'forked', height: 100, oldBlockHash: hash(100), newBlockHash: hash(100, 1) })
  })

  it('forgets a height and what is above, going back to the block below', () => {
    const chain = followed(100, 105)
    const changes = chain.changes
    chain.truncate(104)
    assert.equal(chain.changes, changes + 1, 'a node\'s word given before is about another tip')
    assert.deepEqual(chain.tip, { height: 103, blockHash: hash(103) })
    assert.equal(chain.hashAt(104), undefined)
    assert.deepEqual(chain.compare(range(103, 106, 1, 104)), { kind: 'linked', fresh: range(104, 106, 1, 104) })
  })

  it('remembers only the most recent heights', () => {
    const chain = followed(100, 120, 5)
    assert.equal(chain.lowest, 116)
    assert.equal(chain.hashAt(115), undefined)
    assert.equal(chain.hashAt(116), hash(116))
  })

  it('takes the first blocks after a skip as they come, the hash of the height skipped to being unknown', () => {
    const chain = new ReportedChain(10)
    chain.reset({ height: 200, blockHash: undefined })
    assert.deepEqual(chain.compare(range(201, 203)), { kind: 'linked', fresh: range(201, 203) })
    assert.deepEqual(chain.compare(range(202, 203)), { kind: 'unreached', nodeTip: 203 })
  })

  it('refuses an answer that skips or repeats a height', () => {
    assert.throws(() => followed(100, 105).compare([block(104), block(106)]), { code: 'EVENTS_ERR_BAD_MESSAGE' })
    assert.throws(() => followed(100, 105).compare([block(104), block(104)]), { code: 'EVENTS_ERR_BAD_MESSAGE' })
    assert.throws(() => followed(100, 105).record(block(107)), RangeError)
  })
})
