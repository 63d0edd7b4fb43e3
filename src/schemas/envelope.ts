/** The JSON envelope every route answers with: `{message, data}` on success, `{message, error}` otherwise. */
import { Type, type TSchema } from 'typebox'

export const ErrorEnvelope = Type.Object({
  message: Type.String({ description: 'Fixed text per route and outcome' }),
  error: Type.String({ description: "The error's own text, or `Unknown error`" }),
}, { description: 'Failure envelope' })

/** A pass-through object from the node: any fields, serialized as they come. */
export const PassThroughObject = Type.Object({}, { additionalProperties: true })

/** One page of pass-through items, as the paged routes answer it. */
export function PagedResults (items: string, total: string) {
  return Type.Object({
    results: Type.Array(PassThroughObject, { description: items }),
    total: Type.Integer({ description: total }),
    hasMore: Type.Boolean({ description: 'Whether another page exists' }),
  })
}

export function SuccessEnvelope<Data extends TSchema> (data: Data, example: { message: string, data: unknown }) {
  return Type.Object({
    message: Type.String({ description: 'Fixed text per route' }),
    data,
  }, { description: 'Success envelope', examples: [example] })
}

function errorEnvelope (description: string, example: { message: string, error: string, code?: string }) {
  return Type.Object({
    message: Type.String(),
    error: Type.String(),
    code: Type.Optional(Type.String({ description: 'A stable reason for programs, where there is one: on a 500, RPC_ERR_UNAVAILABLE, RPC_ERR_TIMEOUT or RPC_ERR_TRANSPORT when no node could be reached or none answered in time, worth retrying after Retry-After' })),
  }, { description, examples: [example] })
}

/** The error statuses every /api route can answer, with what each means. */
export const ErrorResponses = {
  400: errorEnvelope('A parameter breaks its rule; nothing was sent to the network', { message: 'Invalid query parameter: pageSize', error: 'pageSize must be a whole number from 1 to 100 (got 500)' }),
  404: errorEnvelope('Not found: no such route, or no such account', { message: 'User profile not found', error: 'No Pocketnet account has the address P8bbRWJknHBXJRBTDSS88uQJSFvX67iN88' }),
  429: errorEnvelope('Too many requests from this client IP; see Retry-After', { message: 'Too many requests', error: 'Rate limit of 300 requests exceeded: retry in 42 s' }),
  500: errorEnvelope('The Pocketnet network or the service failed; message is fixed per route. When no node could be reached or none answered in time, `code` says so and Retry-After says when to try again', { message: 'Search operation failed', error: 'No Pocketnet node could answer search: node 1 failed: connection refused', code: 'RPC_ERR_UNAVAILABLE' }),
  503: errorEnvelope('Overloaded, nothing was done: the event loop is delayed, or every Pocketnet node is at capacity; see Retry-After', { message: 'Service unavailable', error: 'The server is overloaded: its event loop is delayed 1250 ms (limit 1000 ms); retry after 1 s' }),
}
