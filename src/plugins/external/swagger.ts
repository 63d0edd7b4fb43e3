/**
 * OpenAPI 3.1 from the route schemas at `GET /openapi.json`, and an interactive reference at
 * `GET /docs` served from the installed package (no CDN: works offline).
 */
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import fp from 'fastify-plugin'
import { BEARER_SCHEME } from '../../schemas/auth.js'
import { ADMIN_SCHEME } from '../../schemas/notifications.js'
import { forNetwork } from '../../schemas/network-examples.js'

/** What the document says of the API it describes: a mini-app's own, in a developer's app. */
export interface OpenApiInfo {
  title: string
  version: string
  description?: string
}

const SERVICE_INFO: OpenApiInfo = {
  title: 'bastyon-miniapp-backend',
  description: 'Node information, user profiles and content search from the Pocketnet network, for Bastyon mini-apps. Every answer is `{message, data}` (200) or `{message, error}`.',
  version: '0.1.0',
}

export default fp<{ info?: OpenApiInfo | undefined }>(async (app, { info = SERVICE_INFO }) => {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info,
      tags: [
        { name: 'pocketnet', description: 'The mini-app API' },
        { name: 'auth', description: 'Sign in with Bastyon (when BASTYON_APP_ID is set)' },
        { name: 'storage', description: 'Per-user storage and the app\'s collections (with sign-in, unless STORAGE=false)' },
        { name: 'notifications', description: 'Notifications through the users\' Bastyon proxies (with sign-in, unless NOTIFICATIONS=false)' },
        { name: 'payouts', description: 'Payouts and refunds from the app\'s hot wallet, for operators (with PAYOUT_KEY_FILE and ADMIN_TOKEN)' },
        { name: 'operations', description: 'Liveness and readiness' },
      ],
      components: {
        securitySchemes: {
          [BEARER_SCHEME]: { type: 'http', scheme: 'bearer', description: 'The token from POST /api/auth/session' },
          [ADMIN_SCHEME]: { type: 'http', scheme: 'bearer', description: 'The service\'s ADMIN_TOKEN (operators\' routes)' },
        },
      },
    },
    // Only tagged routes: the demo page's static files and /metrics stay out.
    hideUntagged: true,
    // Built once and cached by the plugin.
    transformObject: (document) => forNetwork('openapiObject' in document ? document.openapiObject : document.swaggerObject, app.miniAppConfig.POCKETNET_NETWORK),
  })
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
}, { name: 'swagger' })
