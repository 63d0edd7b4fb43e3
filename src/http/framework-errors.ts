/**
 * Requests Fastify's router refuses before routing: a URL whose percent-encoding does not decode
 * (`/api/user/%ff`), or a path parameter longer than the router takes. Fastify would answer them
 * in a shape of its own, outside every hook: no envelope, request id, security headers, rate
 * limit, log line or metric. Instead, the refusal is noted on the request and the request is
 * routed again to a path no route answers, so that it runs the hooks of any unknown URL (counted,
 * logged, measured) and http/unrouted.ts answers it with the noted refusal.
 */
import type { IncomingMessage } from 'node:http'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { HttpError } from './errors.js'

const REFUSAL = Symbol('refused before routing')
type Refused = IncomingMessage & { [REFUSAL]?: HttpError }

/** Plain ASCII that decodes, has no parameter, and that no route or file answers. */
const UNROUTABLE_PATH = '/.refused-before-routing'

/** The refusal noted on a request the router could not route, if it is one. */
export function refusalOf (request: IncomingMessage): HttpError | undefined {
  return (request as Refused)[REFUSAL]
}

function refusalFor (error: Error & { code?: string }): HttpError {
  switch (error.code) {
    case 'FST_ERR_BAD_URL':
      return new HttpError(400, 'Bad request', 'The URL is not valid: a percent-encoded part does not decode')
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new HttpError(400, 'Bad request', 'A path parameter of the URL is too long')
    default:
      return new HttpError(400, 'Bad request', 'The request could not be routed')
  }
}

/** Fastify's `frameworkErrors`. */
export function answerFrameworkError (error: Error & { code?: string }, request: FastifyRequest, reply: FastifyReply): void {
  const raw = request.raw as Refused
  if (raw[REFUSAL] !== undefined) {
    // Cannot happen with UNROUTABLE_PATH; should it, answer rather than route in a loop.
    reply.code(400).type('application/json; charset=utf-8').send({ message: raw[REFUSAL].title, error: raw[REFUSAL].message })
    return
  }
  raw[REFUSAL] = refusalFor(error)
  raw.url = UNROUTABLE_PATH
  request.server.routing(raw, reply.raw)
}
