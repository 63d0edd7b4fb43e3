/**
 * The events hub alone (no server): chain events to topics, who follows what, what the app may
 * publish, and replay from its own log. The clock is a number the test moves.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { StreamEvent } from '../../src/events/event-log.js'
import { EventHub } from '../../src/events/hub.js'

const HASH = 'a'.repeat(64)
const POST = 'c'.repeat(64)
const TX = 'd'.repeat(64)
const ALICE = 'PAliceAddressXXXXXXXXXXXXXXXXXXXXX'

function hub (options: { maxEvents?: number, maxAgeMs?: number } = {}) {
  const clock = { at: 1_764_000_000_000 }
  const events = new EventHub({ maxEvents: options.maxEvents ?? 100, maxAgeMs: options.maxAgeMs ?? 60_000, now: () => clock.at })
  const heard: StreamEvent[] = []
  return { events, heard, clock, listen: (...topics: string[]) => events.subscribe(new Set(topics), event => heard.push(event)) }
}

describe('the events hub', () => {
  it('puts each chain event on its topics: blocks and re-orgs, payments to an address, a post\'s comments once, the user\'s own', () => {
    const { events, heard, listen } = hub()
    listen('blocks', `address:${ALICE}`, `content:${POST}`, `user:${ALICE}`)
    events.ingest({ kind: 'block', height: 10, blockHash: HASH, time: 1 })
    events.ingest({ kind: 'reorg', height: 10, oldBlockHash: HASH })
    events.ingest({ kind: 'transaction', address: ALICE, txid: TX, nout: 1, amount: 150_000_000, height: 11, blockHash: HASH, time: 2 })
    const comment = { kind: 'notification', type: 'comment', txid: TX, height: 11, blockHash: HASH, time: 2, data: { posttxid: POST, addrFrom: 'PBob' } } as const
    events.ingest({ ...comment, address: ALICE })
    // The same comment reported for another address of the block: the post's topic has it once.
    events.ingest({ ...comment, address: 'PCarol' })
    assert.deepEqual(heard.map(event => [event.topic, event.type]), [
      ['blocks', 'block'],
      ['blocks', 'reorg'],
      [`address:${ALICE}`, 'transaction'],
      [`user:${ALICE}`, 'notification'],
      [`content:${POST}`, 'notification'],
    ])
    assert.deepEqual(heard[0]?.data, { height: 10, hash: HASH, time: 1 })
    assert.deepEqual(heard[1]?.data, { height: 10, oldHash: HASH })
    assert.equal(heard[2]?.data.amount, 150_000_000)
    assert.deepEqual(heard[4]?.data, { type: 'comment', txid: TX, height: 11, blockHash: HASH, time: 2, posttxid: POST, addrFrom: 'PBob' })
  })

  it('names the addresses and posts followed now, for the ingest to read only those', () => {
    const { events, listen } = hub()
    const payments = listen(`address:${ALICE}`, 'blocks')
    const own = listen('user:PBob', `content:${POST}`)
    events.interests.add(() => ['PReceiver'])
    assert.deepEqual(events.interests.addresses().sort(), ['PBob', 'PReceiver', ALICE].sort())
    assert.deepEqual(events.interests.contents(), [POST])
    payments.close()
    own.close()
    assert.deepEqual(events.interests.addresses(), ['PReceiver'])
    assert.deepEqual(events.interests.contents(), [])
  })

  it('publishes the app\'s events on app:<channel>, named either way, and refuses a channel it could not follow', async () => {
    const { events, heard, listen } = hub()
    listen('app:room-7')
    const id = await events.publish('room-7', { move: 'e4' })
    await events.publish('app:room-7', { move: 'e5' })
    assert.deepEqual(heard.map(event => [event.id === id, event.type, event.data.move]), [[true, 'app', 'e4'], [false, 'app', 'e5']])
    for (const bad of ['', 'a b', 'app:', 'x'.repeat(65), 'app:a:b']) {
      assert.throws(() => events.publish(bad, {}), TypeError, bad)
    }
  })

  it('replays after an id what it kept on the topics asked, in order; a gap for an id forgotten, unknown or of another process', async () => {
    const { events, clock } = hub({ maxEvents: 3, maxAgeMs: 1000 })
    const start = events.lastId
    const ids = [await events.publish('a', { n: 1 }), await events.publish('b', { n: 2 }), await events.publish('a', { n: 3 })]
    const numbers = (missed: ReturnType<EventHub['since']>): unknown => missed === 'gap' ? 'gap' : missed.map(event => event.data.n)
    assert.deepEqual(numbers(events.since(start, new Set(['app:a']))), [1, 3])
    assert.deepEqual(numbers(events.since(ids[0] as string, new Set(['app:a', 'app:b']))), [2, 3])
    assert.deepEqual(numbers(events.since(ids[2] as string, new Set(['app:a']))), [])
    assert.equal(events.lastId, ids[2])
    await events.publish('a', { n: 4 })
    assert.equal(events.since(start, new Set(['app:a'])), 'gap', 'the first event is forgotten (three kept)')
    assert.deepEqual(numbers(events.since(ids[0] as string, new Set(['app:a']))), [3, 4])
    clock.at += 1001
    assert.equal(events.since(ids[2] as string, new Set(['app:a'])), 'gap', 'all older than a second')
    for (const other of ['1-1', `${start.split('-')[0] as string}-99`, 'nonsense', '']) assert.equal(events.since(other, new Set(['app:a'])), 'gap', other)
  })

  it('follows from an id: what was missed, then live events, or a resync event first', async () => {
    const { events } = hub()
    const start = events.lastId
    await events.publish('a', { n: 1 })
    const heard: StreamEvent[] = []
    const following = await events.follow(new Set(['app:a']), start, event => heard.push(event))
    await events.publish('a', { n: 2 })
    assert.deepEqual([following.replayed, following.resynced, heard.map(event => event.data.n)], [1, false, [1, 2]])
    following.close()
    const lost: StreamEvent[] = []
    const resynced = await events.follow(new Set(['app:a']), '1-1', event => lost.push(event))
    await events.publish('a', { n: 3 })
    assert.deepEqual([resynced.resynced, lost.map(event => event.type)], [true, ['resync', 'app']])
    assert.equal(lost[0]?.id, heard[1]?.id, 'the resync names the last event before it')
  })
})
