/**
 * buildApp(config): the whole HTTP service, ready to `listen` or `inject`. It never listens.
 *
 * The service is the miniApp plugin (mini-app.ts) in a Fastify server of our own, whose options
 * (http/server-options.ts) add what a plugin cannot: the fast path in front of Fastify, the cap
 * on connections, request ids and the envelope for requests Node's parser rejects.
 */
import fastifyStatic from '@fastify/static'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import type { AppConfig } from './config.js'
import { FastPath } from './fast-path/fast-path.js'
import { HookLedger } from './fast-path/hook-ledger.js'
import { serverOptions, type SchemaCompilers } from './http/server-options.js'
import { miniApp, SERVICE, type MiniAppOverrides, type ServiceServer } from './mini-app.js'
import { browserClientDir, PUBLIC_DIR } from './paths.js'

export interface AppOverrides extends MiniAppOverrides {
  /** Where log lines go; default stdout. */
  logStream?: { write (line: string): void }
  /**
   * Schema compilers in place of Fastify's own, which compile each route's schemas anew for every
   * app: for a process that builds many apps (the tests: test/helpers/build-app.ts).
   */
  compilers?: SchemaCompilers
}

export async function buildApp (config: AppConfig, overrides: AppOverrides = {}): Promise<FastifyInstance> {
  const fastPath = new FastPath({ maxEntries: config.CACHE_MAX_ENTRIES, maxBytes: config.CACHE_MAX_BYTES })
  const app = Fastify(serverOptions(config, fastPath, overrides)).withTypeProvider<TypeBoxTypeProvider>()
  // Before anything adds a hook: the fast path must know every hook a route will run.
  const ledger = new HookLedger()
  ledger.install(app)
  const { logStream: _logStream, compilers: _compilers, ...pluginOverrides } = overrides
  const service: ServiceServer = { config, fastPath, ledger }
  await app.register(miniApp, { ...pluginOverrides, staticRoot: PUBLIC_DIR, [SERVICE]: service } as Parameters<typeof miniApp>[1])
  // The demo page runs on the browser client as a mini-app ships it: the package's build.
  const clientDir = browserClientDir()
  if (clientDir === undefined) app.log.warn('bastyon-miniapp-client is not built (npm run build): the demo page at / cannot load /client/index.js')
  else await app.register(fastifyStatic, { root: clientDir, prefix: '/client/', decorateReply: false, wildcard: false })
  return app
}
