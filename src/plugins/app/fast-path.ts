/**
 * The fast path's two ends in Fastify (fast-path.ts): the server that asks it first, and the
 * plugin that, after Fastify sent a replayable success, records it — body, and every header that
 * does not change per request — for the URL it answered.
 *
 * An answer is recorded the second time Fastify sends it, not the first: most answers of a long
 * tail (each search asked once) are never asked again, and recording them cost CPU and memory
 * for nothing. A repeat then takes Fastify once more, and the fast path from the third time.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerOptions, type ServerResponse } from 'node:http'
import fp from 'fastify-plugin'
import { PER_REQUEST_HEADERS, type FastPath, type Recording } from '../../fast-path.js'

export interface FastPathPluginOptions {
  fastPath: FastPath
  /** What counts the fast path's answers of a route in the metrics. */
  counterOf: (route: string) => Recording['count']
}

export default fp<FastPathPluginOptions>(async (app, { fastPath, counterOf }) => {
  app.decorateReply('replayable', null)
  // Answers Fastify sent once; an answer leaves with the cache entry that holds it.
  const sentOnce = new WeakSet<object>()
  const counters = new Map<string, Recording['count']>()
  const counterFor = (route: string): Recording['count'] => {
    let counter = counters.get(route)
    if (counter === undefined) counters.set(route, counter = counterOf(route))
    return counter
  }
  app.addHook('onResponse', (request, reply, done) => {
    const replayable = reply.replayable
    if (replayable === null || !fastPath.enabled || reply.statusCode !== 200 || request.method !== 'GET') {
      done()
      return
    }
    if (!sentOnce.has(replayable.answer)) {
      sentOnce.add(replayable.answer)
      done()
      return
    }
    const headers: string[] = []
    let replay = true
    for (const [name, value] of Object.entries(reply.getHeaders())) {
      if (value === undefined || PER_REQUEST_HEADERS.has(name)) continue
      if (name === 'set-cookie') replay = false
      headers.push(name, String(value))
    }
    const varyNames = String(reply.getHeader('vary') ?? '').split(',').map(name => name.trim().toLowerCase()).filter(Boolean)
    if (varyNames.includes('*')) replay = false
    if (replay) {
      fastPath.record(request.url, {
        count: counterFor(request.routeOptions.url ?? 'unmatched'),
        answer: new WeakRef(replayable.answer),
        body: replayable.body,
        etag: replayable.etag,
        headers,
        vary: varyNames.map(name => [name, request.headers[name]]),
      })
    }
    done()
  })
}, { name: 'fast-path' })

/** The fast path must never take the process down: on a failure Fastify answers, or the connection ends. */
function serveSafely (fastPath: FastPath, request: IncomingMessage, response: ServerResponse): boolean {
  try {
    return fastPath.serve(request, response)
  } catch (err) {
    fastPath.onError(err)
    if (!response.headersSent) return false
    response.destroy()
    return true
  }
}

interface ServerSettings {
  http?: ServerOptions
  keepAliveTimeout: number
  requestTimeout: number
  connectionTimeout: number
  maxRequestsPerSocket?: number
}

/**
 * Fastify's `serverFactory`: the HTTP/1 server Fastify would make (same options and timeouts),
 * whose requests try the fast path before Fastify.
 */
export function serverWithFastPath (fastPath: FastPath) {
  return (fastify: RequestListener, options: Record<string, unknown>): Server => {
    const settings = options as unknown as ServerSettings
    const server = createServer(settings.http ?? {}, (request, response) => {
      // While shutting down, Fastify answers everything: its answers close keep-alive connections.
      if (!server.listening || !serveSafely(fastPath, request, response)) fastify(request, response)
    })
    server.keepAliveTimeout = settings.keepAliveTimeout
    server.requestTimeout = settings.requestTimeout
    server.setTimeout(settings.connectionTimeout)
    if ((settings.maxRequestsPerSocket ?? 0) > 0) server.maxRequestsPerSocket = settings.maxRequestsPerSocket as number
    return server
  }
}
