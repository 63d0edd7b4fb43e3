/** Serves the demo mini-app page (public/) at `/`. */
import fastifyStatic from '@fastify/static'
import fp from 'fastify-plugin'
import { PUBLIC_DIR } from '../../paths.js'

export default fp(async (app) => {
  await app.register(fastifyStatic, {
    root: PUBLIC_DIR,
    prefix: '/',
    index: 'index.html',
    // Only files that exist are served; everything else falls through to the JSON 404.
    wildcard: false,
  })
}, { name: 'static' })
