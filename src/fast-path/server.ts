/**
 * Fastify's `serverFactory`: the HTTP/1 server Fastify would make (same options and timeouts),
 * whose requests try the fast path (fast-path.ts) before Fastify.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerOptions, type ServerResponse } from 'node:http'
import type { FastPath } from './fast-path.js'

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
