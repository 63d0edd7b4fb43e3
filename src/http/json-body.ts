/**
 * JSON bodies, guarded: no body is larger than the route's limit (MAX_BODY_BYTES unless the route
 * says less), and none nests deeper than MAX_JSON_DEPTH. Parsing a deeply nested array costs
 * the event loop far more per byte than a flat one, so the depth is checked first, in one pass
 * over the text, before JSON.parse runs; Fastify's own parser (which also refuses
 * `__proto__` and `constructor.prototype` keys) does the rest.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { HttpError } from './errors.js'

/** Deeper than any body the API takes (a signature object is two levels). */
export const MAX_JSON_DEPTH = 16

const OPEN_BRACE = 0x7b
const OPEN_BRACKET = 0x5b
const CLOSE_BRACE = 0x7d
const CLOSE_BRACKET = 0x5d
const QUOTE = 0x22
const BACKSLASH = 0x5c

/** Whether `text` nests objects and arrays deeper than `limit` (strings are skipped). */
export function nestsDeeperThan (text: string, limit: number): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (inString) {
      if (code === BACKSLASH) i++
      else if (code === QUOTE) inString = false
    } else if (code === QUOTE) {
      inString = true
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (++depth > limit) return true
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth--
    }
  }
  return false
}

export default fp(async (app: FastifyInstance) => {
  const parse = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (nestsDeeperThan(body as string, MAX_JSON_DEPTH)) {
      done(new HttpError(400, 'Bad request', `The JSON body nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels`), undefined)
      return
    }
    parse(request, body as string, done)
  })
}, { name: 'json-body' })
