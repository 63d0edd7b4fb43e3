/** Builds the real app, listening on a loopback port, and closes it when the test ends. */
import type { FastifyInstance } from 'fastify'
import { buildApp, type AppOverrides } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { sharedCompilers } from './schema-compilers.js'

/** Turns the answer cache off, for tests that change a node's behaviour between two identical calls. */
export const NO_CACHE = { CACHE_TTL_NODEINFO_MS: '0', CACHE_TTL_PROFILE_MS: '0', CACHE_TTL_SEARCH_MS: '0' }

export interface TestApp {
  app: FastifyInstance
  /** e.g. http://127.0.0.1:40123 */
  url: string
  get (path: string, init?: RequestInit): Promise<{ status: number, body: any, headers: Headers }>
}

export interface TestAppOptions extends AppOverrides {
  /** Node base URLs; required so that a test can never fall back to the public node list. */
  nodes: string[]
  env?: Record<string, string>
  /** Adds routes or hooks of the test's own before the app starts. */
  extend?: (app: FastifyInstance) => unknown
}

export async function startApp (t: { after (fn: () => unknown): void }, options: TestAppOptions): Promise<TestApp> {
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    NODE_ENV: 'test',
    // No node WebSocket unless the test is about live events: the others count the node's calls.
    EVENTS_INGEST: 'false',
    // No load shedding on event-loop delay unless the test is about it: a machine busy with other
    // test lanes can delay a loop past the default and turn an unrelated answer into a 503.
    MAX_EVENT_LOOP_DELAY_MS: '0',
    RPC_TIMEOUT_MS: '2000',
    ...options.env,
    POCKETNET_NODES: options.nodes.join(','),
  })
  const app = await buildApp(config, { compilers: sharedCompilers(config.POCKETNET_NETWORK), ...options })
  t.after(() => app.close())
  await options.extend?.(app)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const url = `http://127.0.0.1:${port}`
  return { app, url, get: jsonGetter(url) }
}

/** A request to `url` + path, its body parsed when it is JSON: a TestApp's `get`, for a service in a process too. */
export function jsonGetter (url: string): TestApp['get'] {
  return async (path, init) => {
    const response = await fetch(url + path, init)
    const text = await response.text()
    let body: unknown = text
    try { body = JSON.parse(text) } catch {}
    return { status: response.status, body, headers: response.headers }
  }
}
