/**
 * What one client, and everyone, may hold open (issue #39): streams and waiting long-polls, each
 * capped per client and in all, an IPv6 client counted by its /48 as sign-in counts it. Clients
 * come through a trusted proxy (TRUST_PROXY=127.0.0.1) with X-Forwarded-For; the long-polls'
 * waits are on the test's clock.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { startApp, type TestAppOptions } from '../helpers/build-app.js'
import { manualClock } from '../helpers/manual-clock.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { waitFor } from '../helpers/wait-for.js'
import { openStream } from './sse-client.js'

type WithAfter = { after (fn: () => unknown): void }

async function service (t: WithAfter, env: Record<string, string>, overrides: Partial<TestAppOptions> = {}) {
  const node = await startEmulator(t)
  return startApp(t, { ...overrides, nodes: [node.url], env: { EVENTS_INGEST: 'false', TRUST_PROXY: '127.0.0.1', ...env } })
}

describe('caps per client', () => {
  it('counts an IPv6 client\'s streams by its /48, an IPv4 client\'s by its address', async (t) => {
    const app = await service(t, { EVENTS_MAX_STREAMS_PER_CLIENT: '2' })
    const open = (client: string) => openStream(t, `${app.url}/api/events?topics=blocks`, { 'x-forwarded-for': client })
    assert.deepEqual([(await open('2001:db8:1:1::1')).status, (await open('2001:db8:1:2::1')).status], [200, 200])
    const refused = await open('2001:db8:1:ffff::1')
    assert.equal(refused.status, 503, 'a third /64 of the same /48')
    assert.equal(refused.headers.get('retry-after'), '5')
    assert.equal((await open('2001:db8:2:1::1')).status, 200, 'another /48')
    assert.deepEqual([(await open('203.0.113.1')).status, (await open('203.0.113.1')).status, (await open('203.0.113.2')).status], [200, 200, 200])
    assert.equal((await open('203.0.113.1')).status, 503)
  })

  it('caps waiting long-polls per client with 429 and in all with 503, each with Retry-After, in the envelope', async (t) => {
    const clock = manualClock()
    const app = await service(t, { EVENTS_MAX_POLLS: '3', EVENTS_MAX_POLLS_PER_CLIENT: '2', EVENTS_POLL_WAIT_MS: '25000' }, { eventTimers: clock.timers })
    const poll = (client: string, query = '', topics = 'app:room') => app.get(`/api/events/poll?topics=${topics}${query}`, { headers: { 'x-forwarded-for': client } })
    // One timer pending: the keep-alives'. Each poll that waits adds its own.
    const waiting = (polls: number) => () => clock.pendingTimers === 1 + polls
    const since = encodeURIComponent(app.app.events.lastId)
    await app.app.events.publish('other', { n: 0 })
    const held = [poll('2001:db8:1:1::1'), poll('2001:db8:1:2::1')]
    await waitFor('two polls to wait', waiting(2))
    const perClient = await poll('2001:db8:1:3::1')
    assert.equal(perClient.status, 429, 'a third poll from the same /48')
    assert.equal(perClient.headers.get('retry-after'), '5')
    assert.equal(perClient.body.message, 'Too many requests')
    assert.match(perClient.body.error, /2 long-polls waiting/)
    // A poll that has events to answer does not wait, and is not refused.
    const answered = await poll('2001:db8:1:1::1', `&since=${since}`, 'app:other')
    assert.deepEqual([answered.status, answered.body.data.events.length], [200, 1])
    await app.app.events.publish('room', { n: 1 })
    assert.deepEqual((await Promise.all(held)).map(answer => answer.body.data.events.length), [1, 1])

    held.splice(0, 2, poll('203.0.113.1'), poll('203.0.113.1'), poll('203.0.113.2'))
    await waitFor('three polls to wait', waiting(3))
    const full = await poll('203.0.113.3')
    assert.equal(full.status, 503)
    assert.equal(full.headers.get('retry-after'), '5')
    assert.match(full.body.error, /long-polls waiting/)
    clock.advance(25_000)
    assert.deepEqual((await Promise.all(held)).map(answer => answer.status), [200, 200, 200])
    // Counted no more once answered.
    const again = poll('203.0.113.3')
    await waitFor('a new poll to wait', waiting(1))
    clock.advance(25_000)
    assert.equal((await again).status, 200)
  })
})
