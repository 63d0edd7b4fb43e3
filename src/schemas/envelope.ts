/** The JSON envelope every route answers with: `{message, data}` on success, `{message, error}` otherwise. */
import { Type, type TSchema } from 'typebox'

export const ErrorEnvelope = Type.Object({
  message: Type.String({ description: 'Fixed text per route and outcome' }),
  error: Type.String({ description: "The error's own text, or `Unknown error`" }),
}, { description: 'Failure envelope' })

/** A pass-through object from the node: any fields, serialized as they come. */
export const PassThroughObject = Type.Object({}, { additionalProperties: true })

export function SuccessEnvelope<Data extends TSchema> (data: Data) {
  return Type.Object({
    message: Type.String({ description: 'Fixed text per route' }),
    data,
  }, { description: 'Success envelope' })
}

/** The error statuses every /api route can answer. */
export const ErrorResponses = {
  400: ErrorEnvelope,
  404: ErrorEnvelope,
  500: ErrorEnvelope,
}
