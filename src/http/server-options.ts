/**
 * Fastify's own options for this service: logger, request ids, proxies, limits and timeouts, the
 * JSON envelope for requests Node's parser rejects, and the HTTP server with the fast path in
 * front (fast-path/server.ts) and its cap on connections (connection-limit.ts).
 */
import { createRequire } from 'node:module'
import type { Server } from 'node:http'
import { LogController, type FastifyHttpOptions, type FastifyServerOptions } from 'fastify'
import { isPocketnetAddress } from 'pocketnet-client'
import type { AppConfig } from '../config.js'
import type { FastPath } from '../fast-path/fast-path.js'
import { serverWithFastPath } from '../fast-path/server.js'
import { ADDRESS_FORMAT } from '../schemas/common.js'
import { parseTrustProxy } from './client-address.js'
import { connectionCap, withConnectionCap } from './connection-limit.js'
import { answerFrameworkError } from './framework-errors.js'
import { writeParserError } from './parser-errors.js'
import { requestIdOf } from './request-id.js'

/** Human-readable logs in development when pino-pretty (a dev dependency) is installed. */
function prettyTransport (nodeEnv: string): { target: string } | undefined {
  if (nodeEnv !== 'development') return undefined
  try {
    createRequire(import.meta.url).resolve('pino-pretty')
    return { target: 'pino-pretty' }
  } catch {
    return undefined
  }
}

/** Fastify's validator and serializer factories (its `schemaController.compilersFactory`). */
export type SchemaCompilers = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>

export function serverOptions (config: AppConfig, fastPath: FastPath, { logStream, compilers }: { logStream?: { write (line: string): void }, compilers?: SchemaCompilers } = {}): FastifyHttpOptions<Server> {
  const transport = logStream ? undefined : prettyTransport(config.NODE_ENV)
  return {
    ...(compilers ? { schemaController: { compilersFactory: compilers } } : {}),
    serverFactory: withConnectionCap(serverWithFastPath(fastPath), connectionCap(config)),
    logger: {
      level: config.LOG_LEVEL,
      ...(logStream ? { stream: logStream } : {}),
      ...(transport ? { transport } : {}),
    },
    // One line per request is logged by access-log.ts, at a level that keeps successes out of default logs.
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: requestIdOf,
    trustProxy: parseTrustProxy(config.TRUST_PROXY),
    // Headers and body alike (fast-path/server.ts gives it to the server as it is made).
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    // The API takes small JSON bodies at most (a signature is about 400 bytes).
    bodyLimit: config.MAX_BODY_BYTES,
    http: {
      maxHeaderSize: config.MAX_HEADER_BYTES,
      // How often Node checks for requests past requestTimeout.
      connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.floor(config.REQUEST_TIMEOUT_MS / 4))),
      // A request without Host reaches the app, which answers it in the envelope (unrouted.ts).
      requireHostHeader: false,
    },
    clientErrorHandler: writeParserError,
    // A URL the router cannot route (bad percent-encoding): counted and answered like any request.
    frameworkErrors: answerFrameworkError,
    // Long enough for any address, so a too-long one gets a 400 rather than a 404.
    routerOptions: { maxParamLength: 200 },
    // verbose: validation errors carry the rejected value, which 400 answers quote.
    ajv: { customOptions: { verbose: true, formats: { [ADDRESS_FORMAT]: (value: string) => isPocketnetAddress(value, config.POCKETNET_NETWORK) } } },
  }
}
