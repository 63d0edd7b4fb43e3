/** Schemas of the live event stream (/api/events...): docs/live-events.md. */
import { Type } from 'typebox'
import { Unauthorized, BEARER_SCHEME } from './auth.js'
import { ErrorResponses, SuccessEnvelope } from './envelope.js'

const { 400: badRequest, 429: tooManyRequests, 503: unavailable } = ErrorResponses

const Topics = Type.String({
  maxLength: 2000,
  description: 'Comma-separated, at most 20: `blocks`, `address:<address>` (payments to it), `content:<hash>` (comments and scores on a post), `app:<channel>` (the mini-app\'s own events), `payment:<invoice id>` (the invoice\'s transitions)',
  examples: ['blocks,content:0fb6bacd6aa8a8bc5d83346ef7bcb4f4f7a6004cb307557539c10a5f6b79b94b'],
})
const EventId = Type.String({ maxLength: 64, description: 'The id of the last event seen: what was missed after it is sent first (else a `resync` event when it is no longer kept)' })

export const EventStreamSchema = {
  tags: ['events'],
  summary: 'Live events as Server-Sent Events',
  description: 'A `text/event-stream`: each event has an `id`, an `event` name (block, reorg, transaction, notification, app, resync, shutdown) and JSON `data` with its `topic`. Reconnecting with `Last-Event-ID` (EventSource does it) or `?since=` replays what was missed. With `?ticket=` from `POST /api/events/ticket`, the signed-in user\'s own notifications come too. Keep-alive comments keep proxies from closing it.',
  querystring: Type.Object({
    topics: Topics,
    since: Type.Optional(EventId),
    ticket: Type.Optional(Type.String({ maxLength: 64, description: 'A stream ticket, used once' })),
  }),
  response: {
    200: Type.Any({ description: 'text/event-stream: see the description' }),
    400: badRequest,
    401: Unauthorized,
    429: tooManyRequests,
    503: unavailable,
  },
}

const PolledEvent = Type.Object({ id: Type.String(), event: Type.String(), data: Type.Object({}, { additionalProperties: true }) })

export const EventPollSchema = {
  tags: ['events'],
  summary: 'Live events by long-polling',
  description: 'For transports that buffer whole answers: answers at once with the events after `since`, or waits for the next ones (at most EVENTS_POLL_WAIT_MS) and answers what came, possibly nothing. Ask again with `lastEventId`. `resync: true` says some events were no longer kept. A poll that would wait past the client\'s share of waiting polls is a 429, past the server\'s a 503, each with Retry-After.',
  querystring: Type.Object({ topics: Topics, since: Type.Optional(EventId) }),
  response: {
    200: SuccessEnvelope(Type.Object({ events: Type.Array(PolledEvent), lastEventId: Type.String(), resync: Type.Boolean() }), {
      message: 'Events retrieved successfully',
      data: { events: [{ id: '1764000000000-42', event: 'block', data: { topic: 'blocks', height: 3100001, hash: '9f…', time: 1764000060 } }], lastEventId: '1764000000000-42', resync: false },
    }),
    400: badRequest,
    429: tooManyRequests,
    503: unavailable,
  },
}

export const EventTicketSchema = {
  tags: ['events'],
  summary: 'A single-use ticket for the signed-in user\'s own notifications on a stream',
  description: 'An EventSource cannot send an Authorization header: put this ticket in its URL (`?ticket=`) instead of the token. Short-lived, used once, worth only this user\'s notifications.',
  security: [{ [BEARER_SCHEME]: [] }],
  response: {
    200: SuccessEnvelope(Type.Object({ ticket: Type.String(), expiresAt: Type.String({ format: 'date-time' }) }), {
      message: 'Stream ticket issued',
      data: { ticket: 'q3vX0dPz6Qk1b8hNw2YtLr5sJm9cFa4E', expiresAt: '2026-11-24T10:01:00.000Z' },
    }),
    401: Unauthorized,
    503: unavailable,
  },
}
