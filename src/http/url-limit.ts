/** A URL longer than MAX_URL_LENGTH answers 414 in the envelope, before any other work. */
import fp from 'fastify-plugin'
import { mirroredByReplay } from '../fast-path/hook-ledger.js'
import { HttpError } from './errors.js'

export default fp(async (app) => {
  const maxLength = app.miniAppConfig.MAX_URL_LENGTH
  // The fast path replays only URLs Fastify answered, which passed this check.
  app.addHook('onRequest', mirroredByReplay(function limitUrlLength (request, _reply, done) {
    if (request.url.length > maxLength) {
      done(new HttpError(414, 'URI too long', `The URL is ${request.url.length} characters; the limit is ${maxLength}`))
      return
    }
    done()
  }))
}, { name: 'url-limit' })
