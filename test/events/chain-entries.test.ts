/**
 * Chain events through the shared log's entries (no server, no Redis): what the ingesting
 * instance puts on its topics turns back into the same chain event on another instance, and
 * each instance's listeners hear each chain event once however many ways it comes.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ChainEvent } from 'pocketnet-client'
import { ChainEntries, chainEventOfEntry } from '../../src/events/chain-entries.js'
import type { StreamEvent } from '../../src/events/event-log.js'
import { EventHub } from '../../src/events/hub.js'

const HASH = 'a'.repeat(64)
const OTHER = 'b'.repeat(64)
const POST = 'c'.repeat(64)
const TX = 'd'.repeat(64)
const ALICE = 'PAliceAddressXXXXXXXXXXXXXXXXXXXXX'

const EVENTS: ChainEvent[] = [
  { kind: 'block', height: 10, blockHash: HASH, time: 1 },
  { kind: 'reorg', height: 10, oldBlockHash: HASH, newBlockHash: OTHER },
  { kind: 'reorg', height: 9, oldBlockHash: OTHER },
  { kind: 'transaction', address: ALICE, txid: TX, nout: 1, amount: 150_000_000, height: 11, blockHash: OTHER, time: 2 },
  { kind: 'transaction', address: ALICE, txid: TX, nout: 2, amount: 1, height: 11, blockHash: OTHER, time: 2, type: 'share' },
  { kind: 'notification', address: ALICE, type: 'comment', txid: TX, height: 11, blockHash: OTHER, time: 2, data: { category: 'comment', posttxid: POST, addrFrom: 'PBob', donation: true, amount: 5 } },
]

function hub () {
  return new EventHub({ maxEvents: 100, maxAgeMs: 60_000, now: () => 1_764_000_000_000 })
}

/** Every event the hub delivers, on every topic the events above reach. */
function everything (events: EventHub): StreamEvent[] {
  const delivered: StreamEvent[] = []
  events.subscribe(new Set(['blocks', `address:${ALICE}`, `user:${ALICE}`, `content:${POST}`, 'app:room']), event => delivered.push(event))
  return delivered
}

const entry = (event: StreamEvent) => ({ id: event.id, prev: '', topic: event.topic, type: event.type, data: event.data })

describe('chain events through shared entries', () => {
  it('turns each entry the ingest made back into the chain event, and nothing else into one', async () => {
    const ingesting = hub()
    const delivered = everything(ingesting)
    for (const event of EVENTS) ingesting.ingest(event)
    await ingesting.publish('room', { n: 1 })
    const back = delivered.map(event => chainEventOfEntry(event.topic, event.type, event.data))
    assert.deepEqual(back.filter(event => event !== undefined), EVENTS)
    // The post's copy of the notification, and the app's event, carry none.
    assert.deepEqual(delivered.filter((_, i) => back[i] === undefined).map(event => event.topic), [`content:${POST}`, 'app:room'])
    assert.equal(chainEventOfEntry('blocks', 'block', { height: '10', hash: HASH, time: 1 }), undefined, 'a malformed entry is none')
  })

  it('puts a notification on its post\'s topic once per block, however often the ingest reports it, and on the user\'s each time', () => {
    const entries = new ChainEntries()
    const notification = EVENTS[5] as ChainEvent
    const topics = (): string[] => entries.entriesOf(notification).map(made => made.topic)
    assert.deepEqual(topics(), [`user:${ALICE}`, `content:${POST}`])
    assert.deepEqual(topics(), [`user:${ALICE}`], 'reported again in the same block (for another followed address, or for the post)')
    entries.entriesOf(EVENTS[0] as ChainEvent)
    assert.deepEqual(topics(), [`user:${ALICE}`, `content:${POST}`], 'a new block starts afresh')
  })

  it('lets another instance\'s listeners hear each event once, whether it came from the shared log, its own ingest, or both', async () => {
    const ingesting = hub()
    const delivered = everything(ingesting)
    for (const event of EVENTS) ingesting.ingest(event)
    const other = hub()
    const heard: ChainEvent[] = []
    other.onChainEvent(event => heard.push(event))
    // The block arrives by its own ingest first (both ingested the chain for a while), then from the shared log.
    other.ingest(EVENTS[0] as ChainEvent)
    for (const event of delivered) other.deliverShared(entry(event))
    assert.deepEqual(heard, EVENTS, 'each once, in order')
    assert.deepEqual(other.lastBlock, { height: 10, blockHash: HASH })
  })

  it('hears a block again after a re-org replaced it and another undid that', () => {
    const events = hub()
    const heard: string[] = []
    events.onChainEvent(event => heard.push(`${event.kind}:${event.height}`))
    const block = { kind: 'block', height: 10, blockHash: HASH, time: 1 } as const
    events.ingest(block)
    events.ingest({ kind: 'reorg', height: 10, oldBlockHash: HASH, newBlockHash: OTHER })
    events.ingest({ ...block, blockHash: OTHER })
    events.ingest({ kind: 'reorg', height: 10, oldBlockHash: OTHER, newBlockHash: HASH })
    events.ingest(block)
    events.ingest(block)
    assert.deepEqual(heard, ['block:10', 'reorg:10', 'block:10', 'reorg:10', 'block:10'])
  })

  it('keeps a listener that throws from stopping the others', () => {
    const errors: unknown[] = []
    const events = new EventHub({ maxEvents: 10, maxAgeMs: 60_000, now: () => 0 }, err => errors.push(err))
    const heard: number[] = []
    events.onChainEvent(() => { throw new Error('listener failed') })
    events.onChainEvent(event => heard.push(event.kind === 'block' ? event.height : 0))
    events.ingest({ kind: 'block', height: 3, blockHash: HASH, time: 1 })
    assert.deepEqual(heard, [3])
    assert.equal((errors[0] as Error).message, 'listener failed')
  })
})
