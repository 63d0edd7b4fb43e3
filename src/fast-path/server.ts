/**
 * Fastify's `serverFactory`: the HTTP/1 server Fastify would make (same options and timeouts),
 * whose requests try the fast path (fast-path.ts) before Fastify.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerOptions, type ServerResponse } from 'node:http'
import type { FastPath } from './fast-path.js'

/**
 * Answers from the fast path, or hands the request to Fastify (`fallback`), now or once the
 * fast path has decided. The fast path must never take the process down: on a failure Fastify
 * answers, or the connection ends.
 */
function serveSafely (fastPath: FastPath, request: IncomingMessage, response: ServerResponse, fallback: RequestListener): void {
  const failed = (err: unknown): void => {
    fastPath.onError(err)
    if (response.headersSent) response.destroy()
    else fallback(request, response)
  }
  let served: boolean | Promise<boolean>
  try {
    served = fastPath.serve(request, response)
  } catch (err) {
    return failed(err)
  }
  if (served === false) fallback(request, response)
  else if (served !== true) served.then(done => { if (!done) fallback(request, response) }, failed)
}

interface ServerSettings {
  http?: ServerOptions
  keepAliveTimeout: number
  requestTimeout: number
  connectionTimeout: number
  maxRequestsPerSocket?: number
}

export function serverWithFastPath (fastPath: FastPath) {
  return (fastify: RequestListener, options: Record<string, unknown>): Server => {
    const settings = options as unknown as ServerSettings
    // requestTimeout goes to the constructor: Node sets headersTimeout from it there (60 s when
    // not given) and bounds a request by the larger of the two, so a requestTimeout set later,
    // below 60 s, would leave a slow body 60 s (issue #24).
    const server = createServer({ ...settings.http, requestTimeout: settings.requestTimeout }, (request, response) => {
      // While shutting down, Fastify answers everything: its answers close keep-alive connections.
      if (!server.listening) fastify(request, response)
      else serveSafely(fastPath, request, response, fastify)
    })
    server.keepAliveTimeout = settings.keepAliveTimeout
    server.setTimeout(settings.connectionTimeout)
    if ((settings.maxRequestsPerSocket ?? 0) > 0) server.maxRequestsPerSocket = settings.maxRequestsPerSocket as number
    return server
  }
}
