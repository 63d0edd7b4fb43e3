/**
 * CORS for mini-app front-ends, which run on their own origin inside Bastyon: the origins in
 * CORS_ORIGINS may call the API (`*` for any, meant for development); others get no CORS headers.
 * Registered only when CORS_ORIGINS lists an origin.
 */
import cors from '@fastify/cors'
import fp from 'fastify-plugin'

export default fp<{ origins: string[] }>(async (app, { origins }) => {
  await app.register(cors, {
    origin: origins.includes('*') ? '*' : origins,
    methods: ['GET', 'HEAD'],
    allowedHeaders: ['Content-Type', 'Signature'],
    exposedHeaders: ['ETag', 'X-Request-Id', 'Retry-After'],
    maxAge: 600,
  })
}, { name: 'cors' })
