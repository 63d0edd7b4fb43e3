/**
 * Errors the HTTP layer throws. They carry what the envelope needs; http/error-handler.ts is the
 * only place that turns errors into responses.
 */

/**
 * A deliberate answer (4xx, or 503): `title` becomes the envelope's `message`, the error's
 * message its `error`; `code`, when set, a stable `code` beside them for programs to test, and
 * `headers` go with the answer (e.g. `WWW-Authenticate` on a 401).
 */
export class HttpError extends Error {
  code?: string
  headers?: Record<string, string>

  constructor (readonly statusCode: number, readonly title: string, detail: string) {
    super(detail)
    this.name = 'HttpError'
  }
}

/** A request parameter broke a rule that the schema cannot express (e.g. across two fields). */
export class ParameterError extends HttpError {
  constructor (location: string, field: string, rule: string) {
    super(400, `Invalid ${location}: ${field}`, `${field} ${rule}`)
  }
}

/**
 * 503: the service is overloaded and refuses the request before doing any work; the error
 * handler adds `Retry-After: retryAfterSeconds`.
 */
export class ServiceUnavailableError extends HttpError {
  constructor (detail: string, readonly retryAfterSeconds: number) {
    super(503, 'Service unavailable', detail)
    this.name = 'ServiceUnavailableError'
  }
}
