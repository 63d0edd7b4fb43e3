/**
 * The live event stream (issue #27) on real servers: the service, an emulator with its WebSocket
 * and chain, and fetch reading the Server-Sent Events. Waits wait for frames to come; they bound
 * nothing.
 */
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { connect } from 'node:net'
import { describe, it } from 'node:test'
import { addressOf, testKey } from '../../devnode/bastyon-host.js'
import { startApp, type TestApp, type TestAppOptions } from '../helpers/build-app.js'
import { manualClock } from '../helpers/manual-clock.js'
import { bearer, postJson, signIn, APP_ID } from '../helpers/sign-in.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { waitFor } from '../helpers/wait-for.js'
import { openStream, type SseFrame } from './sse-client.js'

type WithAfter = { after (fn: () => unknown): void }

const ALICE = testKey('alice streams')
const BOB = testKey('bob streams')
const POST = 'c'.repeat(64)

async function service (t: WithAfter, env: Record<string, string> = {}, ingest = true, overrides: Partial<TestAppOptions> = {}) {
  const node = await startEmulator(t)
  const app = await startApp(t, { ...overrides, nodes: [node.url], env: { EVENTS_INGEST: String(ingest), BASTYON_APP_ID: APP_ID, ...env } })
  return { node, app }
}

const named = (frames: SseFrame[], event: string): SseFrame[] => frames.filter(frame => frame.event === event)

/** The answer to a stream that should be refused; a stream opened instead is closed at once, its body unread. */
async function refusal (app: TestApp, path: string): Promise<{ status: number, body: any }> {
  const controller = new AbortController()
  const answer = await fetch(app.url + path, { signal: controller.signal })
  if (answer.status === 200) {
    controller.abort()
    return { status: 200, body: undefined }
  }
  return { status: answer.status, body: await answer.json() }
}

/** Until the service's event source has reported the emulator's tip (it then follows new blocks). */
async function following (app: TestApp, height: number): Promise<void> {
  const epoch = app.app.events.lastId.split('-')[0] as string
  await waitFor('the event source to report the tip', () => {
    const reported = app.app.events.since(`${epoch}-0`, new Set(['blocks']))
    return reported !== 'gap' && reported.some(event => event.data.height === height)
  })
}

describe('the event stream', () => {
  it('sends a block the node connects to a client following blocks, with its height and hash', async (t) => {
    const { node, app } = await service(t)
    await following(app, node.height)
    const stream = await openStream(t, `${app.url}/api/events?topics=blocks`)
    assert.equal(stream.status, 200)
    assert.equal(stream.headers.get('content-type'), 'text/event-stream; charset=utf-8')
    assert.equal(stream.headers.get('cache-control'), 'no-store')
    node.mineBlock()
    await stream.until('the block', frames => named(frames, 'block').length === 1)
    const [block] = named(stream.frames, 'block')
    assert.deepEqual(block?.data, { topic: 'blocks', height: node.height, hash: node.chain.tip.hash, time: node.chain.tip.time })
    assert.match(block?.id ?? '', /^\d+-\d+$/)
    // Metrics, read from the counts at the scrape.
    const scraped = await app.app.metrics.scrape()
    const value = (line: string): number => Number(new RegExp(`^${line.replace(/[{}]/g, '\\$&')} (\\d+)$`, 'm').exec(scraped)?.[1])
    assert.equal(value('events_streams_open'), 1)
    assert.equal(value('events_node_socket_open'), 1)
    assert.ok(value('events_sent_total') >= 1)
    assert.ok(value('events_published_total{kind="blocks"}') >= 2)
    assert.ok(value('events_node_calls_total{method="getlastblocks"}') >= 1)
  })

  it('replays exactly what a client missed after Last-Event-ID, in order, then goes on live; past the window it says resync', async (t) => {
    const { app } = await service(t, { EVENTS_RETAIN: '5' }, false)
    const first = await openStream(t, `${app.url}/api/events?topics=app:room,app:other`)
    app.app.events.publish('room', { n: 1 })
    await first.until('the first event', frames => frames.length === 1)
    first.close()
    for (let n = 2; n <= 4; n++) app.app.events.publish('room', { n })
    app.app.events.publish('elsewhere', { n: 0 })
    const again = await openStream(t, `${app.url}/api/events?topics=app:room`, { 'last-event-id': first.frames[0]?.id as string })
    await again.until('the three missed', frames => frames.length === 3)
    app.app.events.publish('room', { n: 5 })
    await again.until('the live one', frames => frames.length === 4)
    assert.deepEqual(again.frames.map(frame => frame.data.n), [2, 3, 4, 5], 'in order, each once, only its topics')
    // Six more: the five kept no longer reach back to the first event.
    for (let n = 6; n <= 11; n++) app.app.events.publish('room', { n })
    const late = await openStream(t, `${app.url}/api/events?topics=app:room&since=${encodeURIComponent(first.frames[0]?.id as string)}`)
    await late.until('the resync', frames => frames.length === 1)
    assert.equal(late.frames[0]?.event, 'resync')
    // An id of another process (before a restart) is a resync too, never a silent gap.
    const other = await openStream(t, `${app.url}/api/events?topics=app:room`, { 'last-event-id': '1-1' })
    await other.until('the resync', frames => frames.length === 1)
    assert.equal(other.frames[0]?.event, 'resync')
    app.app.events.publish('room', { n: 12 })
    await other.until('the live event after it', frames => frames.length === 2)
    assert.equal(other.frames[1]?.data.n, 12)
  })

  it('sends payments to an address and comments on a post, read once per block for every subscriber', async (t) => {
    const { node, app } = await service(t)
    await following(app, node.height)
    const [payer, receiver] = node.dataset.users.map(user => user.address) as [string, string]
    const payments = await openStream(t, `${app.url}/api/events?topics=address:${receiver}`)
    const comments = await openStream(t, `${app.url}/api/events?topics=content:${POST}`)
    const both = await openStream(t, `${app.url}/api/events?topics=address:${receiver},content:${POST}`)
    const paid = node.addTransaction({ inputs: [{ address: payer, amount: 200_000_000 }], outputs: [{ address: receiver, amount: 150_000_000 }] })
    node.addNotification({ address: payer, mesType: 'comment', addrFrom: receiver, posttxid: POST, commentid: 'd'.repeat(64), reason: 'post' } as never)
    node.clearCalls()
    node.mineBlock()
    await payments.until('the payment', frames => frames.length === 1)
    await comments.until('the comment', frames => frames.length === 1)
    await both.until('both', frames => frames.length === 2)
    assert.deepEqual(payments.frames[0]?.data, { topic: `address:${receiver}`, address: receiver, txid: paid.txid, nout: 0, amount: 150_000_000, height: node.height, blockHash: node.chain.tip.hash, time: paid.time })
    assert.equal(comments.frames[0]?.data.posttxid, POST)
    assert.ok(node.calls.length <= 2, `the node saw ${node.calls.map(call => call.method).join(', ')} for the block`)
  })

  it('refuses bad topics with a 400, and streams past the caps with a 503 and Retry-After', async (t) => {
    const { app } = await service(t, { EVENTS_MAX_STREAMS_PER_CLIENT: '2' }, false)
    for (const [topics, error] of [['', /topics is required/], [',,', /topics is required/], [' , ', /topics is required/], ['user:PX', /is not a topic/], ['address:nope', /address of the main network/], ['content:abc', /64 lowercase hex/], ['app:a b', /app:<channel>/], [Array.from({ length: 21 }, (_, i) => `app:c${i}`).join(','), /At most 20 topics/]] as const) {
      const answer = await refusal(app, `/api/events?topics=${encodeURIComponent(topics)}`)
      assert.equal(answer.status, 400, topics)
      assert.equal(answer.body.message, 'Invalid query parameter: topics')
      assert.match(answer.body.error, error)
    }
    const long = await app.get(`/api/events/poll?topics=${'x'.repeat(2001)}`)
    assert.equal(long.status, 400)
    assert.match(long.body.message, /topics/)
    assert.equal(typeof long.body.error, 'string')
    const kept = [await openStream(t, `${app.url}/api/events?topics=blocks`), await openStream(t, `${app.url}/api/events?topics=blocks`)]
    assert.deepEqual(kept.map(stream => stream.status), [200, 200])
    const refused = await app.get('/api/events?topics=blocks')
    assert.equal(refused.status, 503)
    assert.equal(refused.headers.get('retry-after'), '5')
    assert.match(refused.body.error, /2 event streams open/)
  })

  it('drops a client that leaves too much unread, and forgets it', async (t) => {
    const { app } = await service(t, { EVENTS_MAX_BUFFER_BYTES: '2048' }, false)
    // Opened, never read: what is sent piles up in the socket, then in the stream's buffer.
    const stalled = await openStream(t, `${app.url}/api/events?topics=app:big`, {}, false)
    assert.equal(stalled.status, 200)
    const big = { text: 'x'.repeat(16_384) }
    const deadline = performance.now() + 30_000
    while (app.app.eventStreams.counts.droppedSlow === 0) {
      assert.ok(performance.now() < deadline, 'the slow client to be dropped')
      app.app.events.publish('big', big)
      await new Promise(resolve => setTimeout(resolve, 1))
    }
    while (app.app.eventStreams.size > 0) {
      assert.ok(performance.now() < deadline, 'the dropped stream to be forgotten')
      await new Promise(resolve => setTimeout(resolve, 5))
    }
    stalled.close()
  })

  it('adds the signed-in user\'s own notifications with a single-use ticket, and never another user\'s', async (t) => {
    const { node, app } = await service(t)
    await following(app, node.height)
    const alice = await signIn(app, { key: ALICE, issued: Date.now() })
    const bob = await signIn(app, { key: BOB, issued: Date.now() })
    const ticketOf = async (token: string): Promise<string> => {
      const answer = await postJson(app, '/api/events/ticket', undefined, bearer(token).headers)
      assert.equal(answer.status, 200, JSON.stringify(answer.body))
      assert.equal(answer.headers.get('cache-control'), 'no-store')
      return answer.body.data.ticket
    }
    const aliceTicket = await ticketOf(alice.token)
    const stream = await openStream(t, `${app.url}/api/events?topics=blocks&ticket=${aliceTicket}`)
    assert.equal(stream.status, 200)
    const bobStream = await openStream(t, `${app.url}/api/events?topics=blocks&ticket=${await ticketOf(bob.token)}`)
    // Used, forged, missing a sign-in: refused alike.
    for (const ticket of [aliceTicket, 'A'.repeat(32), 'nope']) {
      const refused = await app.get(`/api/events?topics=blocks&ticket=${ticket}`)
      assert.deepEqual([refused.status, refused.body.code], [401, 'AUTH_TICKET_INVALID'], ticket)
    }
    assert.equal((await postJson(app, '/api/events/ticket')).status, 401)
    node.addNotification({ address: addressOf(ALICE), mesType: 'subscribe', addrFrom: addressOf(BOB) } as never)
    node.mineBlock()
    await stream.until('alice\'s notification', frames => named(frames, 'notification').length === 1)
    await bobStream.until('the block', frames => named(frames, 'block').length === 1)
    assert.equal(named(stream.frames, 'notification')[0]?.data.topic, `user:${addressOf(ALICE)}`)
    assert.deepEqual(named(bobStream.frames, 'notification'), [], 'bob never gets alice\'s')
  })

  it('refuses a ticket whose session was signed out since it was issued', async (t) => {
    const { app } = await service(t, {}, false)
    const alice = await signIn(app, { key: ALICE, issued: Date.now() })
    const { ticket } = (await postJson(app, '/api/events/ticket', undefined, bearer(alice.token).headers)).body.data
    assert.equal((await app.get('/api/auth/session', { method: 'DELETE', ...bearer(alice.token) })).status, 200)
    const refused = await refusal(app, `/api/events?topics=blocks&ticket=${ticket}`)
    assert.deepEqual([refused.status, refused.body?.code], [401, 'AUTH_TICKET_INVALID'])
  })

  it('refuses a ticket past EVENTS_TICKET_TTL_S, and a ticket on a server without sign-in', async (t) => {
    const clock = { at: Date.now(), now: () => clock.at }
    const { app } = await service(t, { EVENTS_TICKET_TTL_S: '60' }, false, { now: clock.now })
    const alice = await signIn(app, { key: ALICE, issued: clock.at })
    const issue = async (): Promise<{ ticket: string, expiresAt: string }> => (await postJson(app, '/api/events/ticket', undefined, bearer(alice.token).headers)).body.data
    const late = await issue()
    assert.equal(Date.parse(late.expiresAt), clock.at + 60_000)
    const inTime = await issue()
    clock.at += 59_999
    assert.equal((await openStream(t, `${app.url}/api/events?topics=blocks&ticket=${inTime.ticket}`)).status, 200, 'usable until it expires')
    clock.at += 1
    const refused = await app.get(`/api/events?topics=blocks&ticket=${late.ticket}`)
    assert.deepEqual([refused.status, refused.body.code], [401, 'AUTH_TICKET_INVALID'])
    assert.equal(refused.body.message, 'Authentication required')

    const { app: noSignIn } = await service(t, { BASTYON_APP_ID: '' }, false)
    assert.equal((await postJson(noSignIn, '/api/events/ticket')).status, 404)
    const off = await noSignIn.get(`/api/events?topics=blocks&ticket=${late.ticket}`)
    assert.deepEqual([off.status, off.body.message], [400, 'Invalid query parameter: ticket'])
  })

  it('answers a long-poll at once when events are pending, and after its wait with none', async (t) => {
    const clock = manualClock()
    const { app } = await service(t, { EVENTS_POLL_WAIT_MS: '25000' }, false, { eventTimers: clock.timers })
    // One timer pending: the keep-alives'. A poll that waits adds its own.
    const waits = (): boolean => clock.pendingTimers === 2
    const poll = (query: string) => {
      const answer = { done: false, value: undefined as unknown as Awaited<ReturnType<TestApp['get']>> }
      const promise = app.get(`/api/events/poll?topics=app:room${query}`).then(value => Object.assign(answer, { done: true, value }).value)
      return { answer, promise }
    }
    const first = poll('')
    await waitFor('the poll to wait', waits)
    assert.equal(first.answer.done, false)
    clock.advance(24_999)
    assert.equal(clock.pendingTimers, 2, 'still waiting')
    clock.advance(1)
    const start = await first.promise
    assert.deepEqual([start.status, start.body.data.events, start.body.data.resync], [200, [], false])
    const since = encodeURIComponent(start.body.data.lastEventId)

    await app.app.events.publish('room', { n: 1 })
    await app.app.events.publish('app:room', { n: 2 })
    const pending = poll(`&since=${since}`)
    await waitFor('the answer, or the poll to wait', () => pending.answer.done || waits())
    assert.ok(pending.answer.done, 'answered at once, without waiting')
    assert.deepEqual(pending.answer.value.body.data.events.map((event: { data: { n: number } }) => event.data.n), [1, 2])
    assert.equal(pending.answer.value.headers.get('cache-control'), 'no-store')

    const woken = poll(`&since=${encodeURIComponent(pending.answer.value.body.data.lastEventId)}`)
    await waitFor('the poll to wait', waits)
    await app.app.events.publish('room', { n: 3 })
    const third = await woken.promise
    assert.deepEqual(third.body.data.events.map((event: { data: { n: number } }) => event.data.n), [3])
    assert.equal(third.body.data.lastEventId, third.body.data.events[0].id)
    assert.equal(clock.pendingTimers, 1, 'its timer cleared')

    const empty = poll(`&since=${encodeURIComponent(third.body.data.lastEventId)}`)
    await waitFor('the poll to wait', waits)
    clock.advance(25_000)
    const none = await empty.promise
    assert.deepEqual([none.status, none.body.data.events, none.body.data.lastEventId], [200, [], third.body.data.lastEventId])
    const gone = (await poll('&since=1-1').promise).body.data
    assert.deepEqual([gone.resync, gone.events, gone.lastEventId], [true, [], third.body.data.lastEventId], 'an id not kept: resync, at once, from the last event')
  })

  it('keeps an idle stream open with a comment line every EVENTS_HEARTBEAT_MS, and sends the API\'s CORS headers', async (t) => {
    const clock = manualClock()
    const { app } = await service(t, { EVENTS_HEARTBEAT_MS: '15000', CORS_ORIGINS: 'https://app.example' }, false, { eventTimers: clock.timers })
    const stream = await openStream(t, `${app.url}/api/events?topics=blocks`, { origin: 'https://app.example' })
    assert.equal(stream.headers.get('access-control-allow-origin'), 'https://app.example')
    assert.equal(stream.headers.get('x-accel-buffering'), 'no')
    await waitFor('the retry hint', () => stream.retry !== undefined)
    assert.equal(stream.retry, 3000)
    assert.deepEqual(stream.comments, [])
    clock.advance(15_000)
    await waitFor('the keep-alive', () => stream.comments.length === 1)
    clock.advance(15_000)
    await waitFor('the second keep-alive', () => stream.comments.length === 2)
    assert.deepEqual(stream.comments, ['keep-alive', 'keep-alive'])
    assert.deepEqual(stream.frames, [])
  })

  it('ends every stream with a hint to reconnect when the service shuts down, and answers every waiting long-poll', async (t) => {
    const clock = manualClock()
    const { app } = await service(t, {}, false, { eventTimers: clock.timers })
    const stream = await openStream(t, `${app.url}/api/events?topics=blocks`)
    const poll = app.get('/api/events/poll?topics=blocks')
    await waitFor('the poll to wait', () => clock.pendingTimers === 2)
    await app.app.close()
    await stream.until('the shutdown event', frames => named(frames, 'shutdown').length === 1)
    assert.deepEqual(stream.frames.at(-1)?.data, { reconnect: true })
    await waitFor('the stream to end', () => stream.ended)
    const answered = await poll
    assert.deepEqual([answered.status, answered.body.data.events], [200, []], 'a waiting long-poll is answered at once')
    // Answered while the server still listened: kept alive, its connection would have held the
    // close for the keep-alive timeout (72 s) once idle.
    assert.equal(answered.headers.get('connection'), 'close')
  })

  it('closes a stream\'s connection once the stream ends, even for a client that stopped reading without closing it', { timeout: 30_000 }, async (t) => {
    const { app } = await service(t, {}, false)
    // A client that stops reading and never closes: kept alive after the stream's end, the
    // connection would hold the server's close for the whole keep-alive timeout (72 s).
    const socket = connect(Number(new URL(app.url).port), '127.0.0.1')
    t.after(() => { socket.destroy() })
    await once(socket, 'connect')
    socket.write('GET /api/events?topics=blocks HTTP/1.1\r\nHost: test\r\n\r\n')
    const [head] = await once(socket, 'data') as [Buffer]
    assert.match(head.toString(), /^HTTP\/1\.1 200 [^]*\r\nconnection: close\r\n/i)
    socket.pause()
    const closedByServer = once(socket, 'end')
    await app.app.close()
    socket.resume()
    await closedByServer
  })
})
