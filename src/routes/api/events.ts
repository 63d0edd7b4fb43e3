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
import { startEventStream } from '../../events/event-stream.js'
import { pollEvents } from '../../events/long-poll.js'
import { parseTopics, userTopic, type Topic } from '../../events/topics.js'
import { HttpError, ParameterError } from '../../http/errors.js'
import { EventPollSchema, EventStreamSchema, EventTicketSchema } from '../../schemas/events.js'

/** What a client that reconnects waits before trying, in milliseconds (the SSE `retry:` hint). */
const RETRY_MS = 3000

const eventRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { events, eventStreams } = app
  const network = app.miniAppConfig.POCKETNET_NETWORK

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
    const stream = await startEventStream(eventStreams, events, { client: app.clientKey(request.raw), topics, since: lastSeen(request, request.query.since), retryMs: RETRY_MS })
    return reply
      .header('content-type', 'text/event-stream; charset=utf-8')
      .header('cache-control', 'no-store')
      // Proxies (nginx) would otherwise buffer the stream.
      .header('x-accel-buffering', 'no')
      // Once a stream ends (shutdown, a slow reader dropped), its connection closes: kept alive, a
      // client that stopped reading without closing it would hold the server's close for the
      // whole keep-alive timeout.
      .header('connection', 'close')
      .send(stream.body)
  })

  app.get('/events/poll', { schema: EventPollSchema }, async (request, reply) => {
    const topics = topicsOf(request.query.topics)
    const polled = await pollEvents(eventStreams, events, {
      client: app.clientKey(request.raw),
      topics,
      since: lastSeen(request, request.query.since),
      waitMs: app.miniAppConfig.EVENTS_POLL_WAIT_MS,
      connection: reply.raw,
    })
    return {
      message: 'Events retrieved successfully',
      data: {
        events: polled.events.map(event => ({ id: event.id, event: event.type, data: { topic: event.topic, ...event.data } })),
        lastEventId: polled.lastEventId,
        resync: polled.resync,
      },
    }
  })

  if (app.signIn !== undefined) {
    const signIn = app.signIn as SignIn
    const ttlMs = app.miniAppConfig.EVENTS_TICKET_TTL_S * 1000
    app.post('/events/ticket', { schema: EventTicketSchema, config: { auth: true } }, async (request, reply) => {
      const { ticket, expiresAt } = await signIn.issueTicket(signedInUser(request), ttlMs)
      reply.header('cache-control', 'no-store')
      return { message: 'Stream ticket issued', data: { ticket, expiresAt: expiresAt.toISOString() } }
    })
  }
}

export default eventRoutes
