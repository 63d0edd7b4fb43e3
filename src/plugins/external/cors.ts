/**
 * CORS for mini-app front-ends, which run on their own origin inside Bastyon: the origins in
 * CORS_ORIGINS may call the API (`*` for any, meant for development); others get no CORS headers.
 * Registered only when CORS_ORIGINS lists an origin: with none, there is nothing to add.
 *
 * Its hook is one the fast path reproduces: the headers it sets depend on the request's Origin
 * alone, and it names Origin in Vary, which the fast path keys on.
 */
import cors from '@fastify/cors'
import fp from 'fastify-plugin'
import { parseNodeList } from 'pocketnet-client'
import type { HookLedger } from '../../fast-path/hook-ledger.js'

export default fp<{ ledger: HookLedger }>(async (app, { ledger }) => {
  const origins = parseNodeList(app.miniAppConfig.CORS_ORIGINS)
  if (origins.length === 0) return
  await ledger.trusting(() => app.register(cors, {
    origin: origins.includes('*') ? '*' : origins,
    // POST and DELETE for sign-in and sign-out; PUT, If-Match and If-None-Match for stored values
    // (the ETag, exposed, is what If-Match sends back); Authorization for the token; Last-Event-ID
    // for an EventSource that reconnects to the event stream from another origin.
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'],
    allowedHeaders: ['Content-Type', 'Authorization', 'Signature', 'Last-Event-ID', 'If-Match', 'If-None-Match'],
    exposedHeaders: ['ETag', 'X-Request-Id', 'Retry-After'],
    maxAge: 600,
  }))
}, { name: 'cors' })
