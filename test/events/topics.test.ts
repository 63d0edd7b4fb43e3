/** Topics taken apart and put together in one module (src/events/topics.ts). */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseTopics, topicOf, topicParts, type TopicParts } from '../../src/events/topics.js'

const ADDRESS = 'PQt1eySVpmRA1Tg6EJDVPmFWfDmJsH1b7A'
const HASH = 'a'.repeat(64)

describe('topics', () => {
  it('put together and taken apart give the same parts back, for every kind', () => {
    const all: TopicParts[] = [
      { kind: 'blocks' },
      { kind: 'address', address: ADDRESS },
      { kind: 'user', address: ADDRESS },
      { kind: 'content', hash: HASH },
      { kind: 'app', channel: 'room-7' },
      { kind: 'payment', invoiceId: 'inv_AAAAAAAAAAAAAAAAAAAAAA' },
    ]
    for (const parts of all) assert.deepEqual(topicParts(topicOf(parts)), parts)
    assert.deepEqual(all.map(topicOf), ['blocks', `address:${ADDRESS}`, `user:${ADDRESS}`, `content:${HASH}`, 'app:room-7', 'payment:inv_AAAAAAAAAAAAAAAAAAAAAA'])
  })

  it('take apart by form only: the value is everything after the first colon; an unknown kind is none', () => {
    assert.deepEqual(topicParts('app:a:b'), { kind: 'app', channel: 'a:b' })
    for (const text of ['nope', 'blocks:x', 'Address:x', '', ':x']) assert.equal(topicParts(text), undefined, text)
  })

  it('refuse a user\'s own topic from a client, and any unknown kind, naming the kinds there are', () => {
    for (const text of [`user:${ADDRESS}`, 'blocks:x', 'nope']) {
      const parsed = parseTopics(text, 'main')
      assert.ok('error' in parsed, text)
      assert.match(parsed.error, /is not a topic: blocks, address:<address>, content:<hash>, app:<channel> or payment:<invoice id>$/)
    }
    assert.deepEqual(parseTopics(` blocks ,app:x,blocks,content:${HASH}`, 'main'), ['blocks', 'app:x', `content:${HASH}`])
  })
})
