/**
 * The HTTP server's cap on open connections (Node's `server.maxConnections`): past it a new
 * connection is closed as soon as it is accepted, so that a flood of idle sockets, half-sent
 * requests or long-polls is refused while the process still has file descriptors for everything
 * else it opens (the nodes' sockets, the database, Redis, webhooks, files). Without it the flood
 * took them all, and the next thing to open one failed with EMFILE (issue #39).
 *
 * MAX_CONNECTIONS sets the cap; 0 (the default) derives it from the process's open-file limit
 * (RLIMIT_NOFILE, soft) less a reserve: an eighth of the limit, at least 64, plus the node pool's
 * sockets. Refusals, and accept() failures for lack of descriptors, are logged once as they begin
 * and once when they end, never per connection, and never stop the process.
 */
import { readFileSync } from 'node:fs'
import type { RequestListener, Server } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyBaseLogger } from 'fastify'
import { parseNodeList } from 'pocketnet-client'
import type { AppConfig } from '../config.js'

const MIN_RESERVE = 64

export interface ConnectionCap {
  /** The cap, or Infinity for none (no open-file limit, and MAX_CONNECTIONS 0). */
  maxConnections: number
  /** The process's open-file limit (Infinity when unlimited or unknown). */
  openFiles: number
  /** Descriptors kept for everything but the server's connections. */
  reserve: number
  /** Whether MAX_CONNECTIONS set it. */
  configured: boolean
}

/** The soft limit on open files of this process: /proc on Linux, else Node's diagnostic report. */
export function openFileLimit (): number {
  let soft: string | number | undefined
  try {
    soft = /^Max open files\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1]
  } catch {
    const report = process.report?.getReport() as { userLimits?: { open_files?: { soft?: string | number } } } | undefined
    soft = report?.userLimits?.open_files?.soft
  }
  const limit = Number(soft)
  return Number.isSafeInteger(limit) && limit > 0 ? limit : Infinity
}

export function connectionCap (config: AppConfig, openFiles = openFileLimit()): ConnectionCap {
  const nodeSockets = (config.POCKETNET_CONNECTIONS_PER_NODE + 1) * parseNodeList(config.POCKETNET_NODES).length
  const reserve = Math.max(MIN_RESERVE, Math.ceil(openFiles / 8)) + nodeSockets
  if (config.MAX_CONNECTIONS > 0) return { maxConnections: config.MAX_CONNECTIONS, openFiles, reserve, configured: true }
  return { maxConnections: Math.max(1, openFiles - reserve), openFiles, reserve, configured: false }
}

type ServerFactory = (handler: RequestListener, options: Record<string, unknown>) => Server

/** Wraps Fastify's `serverFactory`: the server it makes refuses connections past `cap`, and logs why. */
export function withConnectionCap (factory: ServerFactory, cap: ConnectionCap): ServerFactory {
  return (handler, options) => {
    const server = factory(handler, options)
    // Fastify hands the factory its options with the logger it made from them.
    capConnections(server, cap, options.logger as FastifyBaseLogger)
    return server
  }
}

export function capConnections (server: Server, cap: ConnectionCap, log: FastifyBaseLogger): void {
  const { maxConnections, openFiles, reserve, configured } = cap
  if (Number.isFinite(maxConnections)) server.maxConnections = maxConnections
  if (configured && maxConnections > openFiles - reserve) {
    log.warn({ maxConnections, openFiles, reserve }, `MAX_CONNECTIONS (${maxConnections}) leaves fewer than ${reserve} of the ${openFiles} file descriptors this process may open for the nodes, the database and files: a flood of connections can exhaust them (raise the limit, ulimit -n, or lower MAX_CONNECTIONS)`)
  } else {
    log.info({ maxConnections, openFiles, reserve }, `Connections capped at ${maxConnections} (open-file limit ${openFiles}, ${reserve} kept for the nodes, the database and files)`)
  }
  let open = 0
  /** Set while connections are being refused: the open count when it began, and how many since. */
  let refusing: { openAtStart: number, refused: number } | undefined
  const refused = (): void => {
    if (refusing !== undefined) refusing.refused++
    else refusing = { openAtStart: open, refused: 1 }
  }
  server.on('connection', (socket: Socket) => {
    open++
    socket.once('close', () => {
      open--
      // Over once half the connections that filled the server have gone: one line per flood,
      // however much it churns at the cap.
      if (refusing !== undefined && open <= refusing.openAtStart / 2) {
        log.info({ refused: refusing.refused, open }, `Accepting connections again: ${refusing.refused} refused meanwhile`)
        refusing = undefined
      }
    })
  })
  server.on('drop', () => {
    if (refusing === undefined) {
      log.warn({ maxConnections, open }, `Refusing connections: ${open} are open, the cap (MAX_CONNECTIONS, ${maxConnections}); logged again when they are accepted again`)
    }
    refused()
  })
  server.on('error', (err: NodeJS.ErrnoException) => {
    // After listen, net.Server emits only accept() failures; before, Fastify's own listener
    // takes the listen error (EADDRINUSE...). An error emitted with no other listener would
    // have stopped the process: so it still does, unless it is accept()'s.
    if (err.syscall !== 'accept') {
      if (server.listenerCount('error') === 1) throw err
      return
    }
    if (refusing === undefined) {
      log.error({ err, open }, `Could not accept a connection (${err.code ?? err.message}): ${open} are open; the process is out of file descriptors or the system of files (lower MAX_CONNECTIONS or raise ulimit -n); logged again when they are accepted again`)
    }
    refused()
  })
}
