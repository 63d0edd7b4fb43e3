/** Serves a folder at `/`: the service's demo page (public/), or a mini-app's own page. */
import fastifyStatic from '@fastify/static'
import fp from 'fastify-plugin'

export default fp<{ root: string }>(async (app, { root }) => {
  await app.register(fastifyStatic, {
    root,
    // reply.sendFile is not ours to take: a developer's app may register @fastify/static itself.
    decorateReply: false,
    prefix: '/',
    index: 'index.html',
    // Only files that exist are served; everything else falls through to the JSON 404.
    wildcard: false,
  })
}, { name: 'static' })
