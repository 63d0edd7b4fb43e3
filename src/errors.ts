/**
 * Errors the HTTP layer throws. They carry what the envelope needs; plugins/app/error-handler.ts
 * is the only place that turns them into responses.
 */

/** A 4xx answer: `title` becomes the envelope's `message`, the error's message its `error`. */
export class HttpError extends Error {
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

/** A route handler failed (client creation or RPC): answered 500 with the route's fixed message. */
export class RouteFailure extends Error {
  constructor (readonly title: string, cause: unknown) {
    super(title, { cause })
    this.name = 'RouteFailure'
  }
}

/**
 * Runs a route's work so that any failure in it answers 500 with `failureMessage`, as the spec
 * says, while deliberate 4xx answers (HttpError) pass through.
 */
export async function withFailureMessage<T> (failureMessage: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (err) {
    if (err instanceof HttpError) throw err
    throw new RouteFailure(failureMessage, err)
  }
}
