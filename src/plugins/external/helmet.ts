/**
 * Security headers. The CSP fits the demo page (its own scripts and styles, avatars and post
 * images from any https host); the docs page sets its own CSP (@fastify/swagger-ui staticCSP).
 */
import helmet from '@fastify/helmet'
import fp from 'fastify-plugin'

export default fp(async (app) => {
  await app.register(helmet, {
    contentSecurityPolicy: {
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:', 'https:'],
        connectSrc: ["'self'"],
        frameAncestors: ['*'],
        // The service often runs on plain http behind a proxy, or on localhost: no forced upgrade.
        upgradeInsecureRequests: null,
      },
    },
    // Mini-apps run inside Bastyon's iframe.
    frameguard: false,
    crossOriginResourcePolicy: { policy: 'cross-origin' },
  })
}, { name: 'helmet' })
