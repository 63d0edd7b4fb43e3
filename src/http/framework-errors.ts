/**
 * Requests Fastify refuses before routing (a URL whose percent-encoding does not decode, such as
 * `/api/user/%ff`), which it would answer in a shape of its own, outside every hook: counted in
 * the rate limit and answered through the error handler, so that they carry the envelope, the
 * request id and the security headers like any other answer.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { API_HEADERS } from '../plugins/external/helmet.js'
import { HttpError } from './errors.js'

export function answerFrameworkError (error: Error & { code?: string }, request: FastifyRequest, reply: FastifyReply): void {
  const refusal = error.code === 'FST_ERR_BAD_URL'
    ? new HttpError(400, 'Bad request', 'The URL is not valid: a percent-encoded part does not decode')
    : new HttpError(400, 'Bad request', 'The request could not be routed')
  const counted = request.server.countRequest(request.raw)
  const answer = (decision: { allowed: boolean, limit: number, remaining: number, resetSeconds: number } | undefined): void => {
    // Outside the hooks and the error handler: the headers and the envelope they would add.
    reply.headers({ ...API_HEADERS, 'x-request-id': request.id })
    if (decision !== undefined) reply.headers({ 'x-ratelimit-limit': decision.limit, 'x-ratelimit-remaining': decision.remaining, 'x-ratelimit-reset': decision.resetSeconds })
    reply.type('application/json; charset=utf-8')
    if (decision === undefined || decision.allowed) {
      reply.code(refusal.statusCode).send({ message: refusal.title, error: refusal.message })
      return
    }
    reply.header('retry-after', decision.resetSeconds)
    reply.code(429).send({ message: 'Too many requests', error: `Rate limit of ${decision.limit} requests exceeded: retry in ${decision.resetSeconds} s` })
  }
  if (counted instanceof Promise) counted.then(answer, () => answer(undefined))
  else answer(counted)
}
