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
  // The events plugin's timers: tests move them by hand.
  const { timers } = eventStreams
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
    const stream = eventStreams.open(app.clientKey(request.raw))
    stream.write(`retry: ${RETRY_MS}\n\n`)
    // What was missed first (or a resync event), then the live events, each once: the stream
    // holds them back until the replay is known, then writes them as the client reads.
    const following = await events.follow(topics, lastSeen(request, request.query.since), event => stream.send(event))
    stream.goLive(following.replayed)
    if (stream.closed) following.close()
    else stream.body.once('close', () => following.close())
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
    const since = lastSeen(request, request.query.since)
    const startId = events.lastId
    const caught: StreamEvent[] = []
    let wake: (() => void) | undefined
    const following = await events.follow(topics, since, event => {
      // The first event answers the poll, with the others of the same turn of the event loop.
      if (caught.push(event) === 1) wake?.()
    })
    const waitMs = app.miniAppConfig.EVENTS_POLL_WAIT_MS
    try {
      if (caught.length === 0 && waitMs > 0 && !reply.raw.destroyed) {
        await new Promise<void>((resolve, reject) => {
          const done = (): void => {
            timers.clearTimeout(timer)
            reply.raw.off('close', done)
            notWaiting()
            resolve()
          }
          let notWaiting: () => void
          try {
            // Counted against the caps only while it waits: a poll answered at once holds nothing.
            notWaiting = eventStreams.waiting(app.clientKey(request.raw), done)
          } catch (refusal) {
            reject(refusal)
            return
          }
          wake = () => setImmediate(done)
          const timer = timers.setTimeout(done, waitMs)
          reply.raw.once('close', done)
        })
      }
    } finally {
      following.close()
    }
    const found = caught.filter(event => event.type !== 'resync')
    if (found.length < caught.length) eventStreams.counts.resyncs++
    eventStreams.counts.replayed += following.replayed
    return {
      message: 'Events retrieved successfully',
      data: {
        events: found.map(event => ({ id: event.id, event: event.type, data: { topic: event.topic, ...event.data } })),
        lastEventId: caught.at(-1)?.id ?? since ?? startId,
        resync: following.resynced,
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
