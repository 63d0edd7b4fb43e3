/**
 * The only place that turns errors into responses, all in the `{message, error}` envelope:
 * - 400 for input that breaks a schema, and for a call the client refused before the wire
 *   (`RPC_ERR_INVALID_PARAMS`: the request is to blame, not the network);
 * - the status of a deliberate HttpError (401 with a stable `code`, 404 no such account, 429 rate
 *   limit, ...), with its headers, and of
 *   Fastify's own 4xx (415, 413, malformed JSON);
 * - 503 `Service unavailable` with `Retry-After` for overload, the one place that writes it: a
 *   ServiceUnavailableError (the event loop is delayed, http/under-pressure.ts), and a call the
 *   client shed because every node is at capacity (`RPC_ERR_OVERLOADED`, its `retryAfterMs`
 *   rounded up to whole seconds). Load, not a fault: logged at info, not warn;
 * - 500 with the route's `failureMessage` (route-policy.ts) for any other failure of a route
 *   that has one, the error's own text in `error`, as the spec says; when no node could be
 *   reached or none answered in time, also `Retry-After` and the error's `code`;
 * - 500 `Internal server error` for the rest, with the detail only when NODE_ENV=development.
 * Node URLs never reach a client: pocketnet-client's messages name nodes by position, and the log
 * has the detail.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { addressRule } from 'pocketnet-client'
import { PARAMETER_RULES } from '../schemas/common.js'
import { HttpError, ServiceUnavailableError } from './errors.js'
import './route-policy.js'

interface ValidationIssue {
  keyword: string
  instancePath: string
  params: Record<string, unknown>
  message?: string
  data?: unknown
}

const LOCATIONS: Record<string, string> = {
  querystring: 'query parameter',
  params: 'path parameter',
  body: 'body field',
  headers: 'header',
}

const STATUS_TITLES: Record<number, string> = {
  400: 'Bad request',
  404: 'Not found',
  405: 'Method not allowed',
  406: 'Not acceptable',
  413: 'Payload too large',
  414: 'URI too long',
  415: 'Unsupported media type',
  429: 'Too many requests',
  431: 'Request header fields too large',
}

/**
 * Failures that say nothing about the request, only that no node could be reached or none
 * answered in time: worth trying again. Not RPC_ERR_NODE, a node's answer about the request
 * itself (the same request fails again), nor RPC_ERR_CLOSED (the client closed: the service is
 * shutting down). The list and the wait are in packages/pocketnet-client/README.md's error table.
 */
const TEMPORARY = new Set(['RPC_ERR_UNAVAILABLE', 'RPC_ERR_TIMEOUT', 'RPC_ERR_TRANSPORT'])
/**
 * A node that failed takes no calls for 1 s (pocketnet-client's first circuit cooldown, doubling
 * while it keeps failing); then one probe decides whether it is back. Two seconds covers both.
 */
const TEMPORARY_RETRY_AFTER_S = 2

/** The 404 for a request no route answers. */
export function notFound (request: FastifyRequest): HttpError {
  const path = request.url.length > 200 ? `${request.url.slice(0, 200)}…` : request.url
  return new HttpError(404, 'Not found', `No route answers ${request.method} ${path}`)
}

/** The spec's rule for the `error` field. */
export function errorText (err: unknown): string {
  return err instanceof Error ? err.message : 'Unknown error'
}

function describeValidation (issues: ValidationIssue[], context: string | undefined, rules: Record<string, string>): { title: string, detail: string } {
  const issue = issues[0] as ValidationIssue
  const location = LOCATIONS[context ?? ''] ?? 'parameter'
  const missing = issue.keyword === 'required' ? String(issue.params.missingProperty) : undefined
  const field = missing ?? (issue.instancePath.split('/').filter(Boolean).join('.') || context || 'request')
  const rule = rules[field]
  if (missing !== undefined) {
    return { title: `Missing ${location}: ${field}`, detail: rule ? `${field} is required: ${rule}` : `${field} is required` }
  }
  const got = issue.data === undefined ? '' : ` (got ${JSON.stringify(issue.data)})`
  return { title: `Invalid ${location}: ${field}`, detail: `${field} ${rule ? `must be ${rule}` : issue.message ?? 'is invalid'}${got}` }
}

function send (reply: FastifyReply, status: number, message: string, error: string, code?: string): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send(code === undefined ? { message, error } : { message, error, code })
}

/** `Retry-After` for pocketnet-client's `retryAfterMs`: whole seconds rounded up, at least 1; 1 when it is no finite number. */
export function retryAfterSeconds (retryAfterMs: unknown): number {
  return typeof retryAfterMs === 'number' && Number.isFinite(retryAfterMs) ? Math.max(1, Math.ceil(retryAfterMs / 1000)) : 1
}

/**
 * Each attempt of a call that failed on every node (pocketnet-client puts them in `cause`), with
 * the node's URL and own words: for the log, whose error serializer does not follow `cause`.
 */
function attemptsOf (err: Error): Array<Record<string, unknown>> | undefined {
  if (!(err.cause instanceof AggregateError)) return undefined
  return err.cause.errors.map((attempt: { code?: unknown, node?: unknown, message?: unknown, rpcCode?: unknown, rpcMessage?: unknown }) => (
    { code: attempt.code, node: attempt.node, message: attempt.message, rpcCode: attempt.rpcCode, rpcMessage: attempt.rpcMessage }
  ))
}

function sendUnavailable (reply: FastifyReply, err: ServiceUnavailableError): FastifyReply {
  reply.header('retry-after', err.retryAfterSeconds)
  return send(reply, 503, err.title, err.message)
}

export default fp(async (app) => {
  const development = app.miniAppConfig.NODE_ENV === 'development'
  // The address rule names the network's prefix (P on mainnet, T on testnet).
  const rules = { ...PARAMETER_RULES, address: addressRule(app.miniAppConfig.POCKETNET_NETWORK) }

  app.setErrorHandler((err: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) => {
    const fastifyError = err as FastifyError
    if (fastifyError.validation) {
      const { title, detail } = describeValidation(fastifyError.validation as unknown as ValidationIssue[], fastifyError.validationContext, rules)
      return send(reply, 400, title, detail)
    }
    if (err instanceof ServiceUnavailableError) return sendUnavailable(reply, err)
    if (err instanceof HttpError) {
      if (err.headers !== undefined) reply.headers(err.headers)
      return send(reply, err.statusCode, err.title, err.message, err.code)
    }
    const { code, method, node, retryAfterMs } = err as { code?: unknown, method?: unknown, node?: unknown, retryAfterMs?: unknown }
    if (code === 'RPC_ERR_INVALID_PARAMS') return send(reply, 400, STATUS_TITLES[400] as string, err.message)
    if (code === 'RPC_ERR_OVERLOADED') {
      // Shed load, not a failure: at warn, a burst of it would flood the log.
      request.log.info({ code, method }, 'Pocketnet nodes at capacity: request shed')
      return sendUnavailable(reply, new ServiceUnavailableError(err.message, retryAfterSeconds(retryAfterMs)))
    }
    const status = fastifyError.statusCode
    if (fastifyError.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      // Which limit: routes differ (a stored value's PUT takes more than sign-in).
      return send(reply, 413, STATUS_TITLES[413] as string, `The request body is larger than the ${request.routeOptions.bodyLimit} bytes this route takes`)
    }
    if (typeof status === 'number' && status >= 400 && status < 500) {
      return send(reply, status, STATUS_TITLES[status] ?? 'Bad request', err.message)
    }
    const failureMessage = request.routeOptions.config?.failureMessage
    if (failureMessage !== undefined) {
      // The node's own words, if any, go to the log only (rpcMessage, and each attempt's when
      // the call failed on every node); the answer has ours.
      request.log.warn({ err, code, method, node, rpcMessage: (err as { rpcMessage?: unknown }).rpcMessage, attempts: attemptsOf(err) }, failureMessage)
      if (typeof code === 'string' && TEMPORARY.has(code)) {
        // Still the spec's 500, with what a client needs to back off rather than hammer.
        reply.header('retry-after', TEMPORARY_RETRY_AFTER_S)
        return send(reply, 500, failureMessage, errorText(err), code)
      }
      return send(reply, 500, failureMessage, errorText(err))
    }
    request.log.error({ err }, 'Internal server error')
    return send(reply, 500, 'Internal server error', development ? errorText(err) : 'Unknown error')
  })

  // unrouted.ts answers first, in an onRequest hook; this stays for what reaches it anyway.
  app.setNotFoundHandler((request) => {
    throw notFound(request)
  })
}, { name: 'error-handler' })
