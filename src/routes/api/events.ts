/**
 * Live events (events/, docs/live-events.md): the stream as Server-Sent Events, the same by
 * long-polling for transports that buffer whole answers, and a stream ticket for the signed-in
 * user's own notifications. Never cached and never replayed by the fast path (no `replay`, no
 * `maxAgeMs`): every answer here is made for its request.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { signedInUser } from '../../auth/plugin.js'
import type { SignIn } from '../../auth/sign-in.js'
import type { StreamEvent } from '../../events/event-log.js'
import { parseTopics, userTopic, type Topic } from '../../events/topics.js'
import { HttpError, ParameterError } from '../../http/errors.js'
import { EventPollSchema, EventStreamSchema, EventTicketSchema } from '../../schemas/events.js'

/** What a client that reconnects waits before trying, in milliseconds (the SSE `retry:` hint). */
const RETRY_MS = 3000

const eventRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { events, eventStreams } = app
  const network = app.config.POCKETNET_NETWORK

  const topicsOf = (text: string): Set<Topic> => {
    const topics = parseTopics(text, network)
    if ('error' in topics) throw new ParameterError('query parameter', 'topics', topics.error.replace(/^topics /, ''))
    return new Set(topics)
  }
  const lastSeen = (request: FastifyRequest, since: string | undefined): string | undefined => {
    const header = request.headers['last-event-id']
    return since ?? (typeof header === 'string' && header.length <= 64 ? header : undefined)
  }

  app.get('/events', { schema: EventStreamSchema }, async (request, reply) => {
    const topics = topicsOf(request.query.topics)
    if (request.query.ticket !== undefined) {
      const signIn = app.signIn as SignIn | undefined
      if (signIn === undefined) throw new HttpError(400, 'Invalid query parameter: ticket', 'Sign-in is off on this server (BASTYON_APP_ID): there are no tickets')
      topics.add(userTopic(await signIn.redeemTicket(request.query.ticket)))
    }
    const stream = eventStreams.open(app.clientKey(request.raw))
    // Replay and subscription in one turn of the event loop: nothing published in between.
    const since = lastSeen(request, request.query.since)
    const missed = since === undefined ? [] : events.since(since, topics)
    const subscription = events.subscribe(topics, event => stream.send(event))
    stream.body.once('close', () => subscription.close())
    stream.write(`retry: ${RETRY_MS}\n\n`)
    if (missed === 'gap') {
      eventStreams.counts.resyncs++
      stream.write(`id: ${events.lastId}\nevent: resync\ndata: {"reason":"Some events after the last one seen are no longer kept: read the state again, then follow from here"}\n\n`)
    } else {
      eventStreams.counts.replayed += missed.length
      for (const event of missed) stream.send(event)
    }
    return reply
      .header('content-type', 'text/event-stream; charset=utf-8')
      .header('cache-control', 'no-store')
      // Proxies (nginx) would otherwise buffer the stream.
      .header('x-accel-buffering', 'no')
      .send(stream.body)
  })

  app.get('/events/poll', { schema: EventPollSchema }, async (request) => {
    const topics = topicsOf(request.query.topics)
    const since = lastSeen(request, request.query.since) ?? events.lastId
    const missed = events.since(since, topics)
    const answer = (found: StreamEvent[], resync: boolean) => ({
      message: 'Events retrieved successfully',
      data: { events: found.map(event => ({ id: event.id, event: event.type, data: { topic: event.topic, ...event.data } })), lastEventId: found.at(-1)?.id ?? (resync ? events.lastId : since), resync },
    })
    if (missed === 'gap') return answer([], true)
    if (missed.length > 0 || app.config.EVENTS_POLL_WAIT_MS === 0) return answer(missed, false)
    // Nothing yet: the first events to come (all of one turn of the event loop), or none in time.
    const found = await new Promise<StreamEvent[]>(resolve => {
      const caught: StreamEvent[] = []
      const done = (): void => {
        clearTimeout(timer)
        subscription.close()
        request.raw.off('close', done)
        resolve(caught)
      }
      const subscription = events.subscribe(topics, event => {
        if (caught.push(event) === 1) setImmediate(done)
      })
      const timer = setTimeout(done, app.config.EVENTS_POLL_WAIT_MS)
      request.raw.once('close', done)
    })
    return answer(found, false)
  })

  if (app.signIn !== undefined) {
    const signIn = app.signIn as SignIn
    const ttlMs = app.config.EVENTS_TICKET_TTL_S * 1000
    app.post('/events/ticket', { schema: EventTicketSchema, config: { auth: true } }, async (request, reply) => {
      const { ticket, expiresAt } = await signIn.issueTicket(signedInUser(request), ttlMs)
      reply.header('cache-control', 'no-store')
      return { message: 'Stream ticket issued', data: { ticket, expiresAt: expiresAt.toISOString() } }
    })
  }
}

export default eventRoutes
