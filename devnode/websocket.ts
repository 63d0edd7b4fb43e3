/**
 * The node's WebSocket, on a port of its own as a real node has it (docs/node-events.md):
 * path `/ws`, keep-alive `0` → `1`, registration of ONE watched address per socket (registering
 * again replaces it), unsubscribe, and the node's replies to anything else. Messages go out only
 * when a block connects, to the sockets registered below its height; a disconnected block sends
 * nothing, as on a real node.
 *
 * Controls for tests: drop every socket, stall (accept and read, answer and push nothing),
 * refuse upgrades.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { Duplex } from 'node:stream'
import { WebSocketServer, type RawData, type WebSocket } from 'ws'
import { addressMessages, newBlockMessage, type NodeMessage } from './block-messages.js'
import type { ChainBlock, ChainHistory } from './chain.js'
import { getInt, getStr } from './methods/common.js'

/** `open`: as a node; `stall`: sockets are accepted and read but get nothing; `refuse`: upgrades are answered 503. */
export type WebSocketMode = 'open' | 'stall' | 'refuse'

export interface WebSocketRegistration {
  address: string
  /** The last height this socket was told about (or registered with). */
  block: number
}

export interface WebSocketControls {
  readonly port: number
  /** `ws://host:port/ws`. */
  readonly url: string
  readonly mode: WebSocketMode
  setMode (mode: WebSocketMode): void
  /** Open sockets, registered or not. */
  readonly connections: number
  /** Upgrades accepted since the start. */
  readonly accepted: number
  /** Frames read from clients since the start, stalled or not. */
  readonly received: number
  registrations (): WebSocketRegistration[]
  /** Cuts every socket at once, as a node restart or a network cut does (no close frame). */
  dropAll (): void
}

export interface NodeWebSocket extends WebSocketControls {
  /** Listens again on the same port. */
  start (): Promise<void>
  /** Stops listening and cuts every socket. */
  stop (): Promise<void>
  close (): Promise<void>
}

export interface NodeWebSocketOptions {
  chain: ChainHistory
  host: string
  /** 0: a free port. */
  port: number
}

const WS_PATH = /^\/ws\/?$/

function reply (socket: WebSocket, message: NodeMessage | string): void {
  socket.send(typeof message === 'string' ? message : JSON.stringify(message))
}

function refuseUpgrade (socket: Duplex, status: string): void {
  socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`)
}

export async function createNodeWebSocket (options: NodeWebSocketOptions): Promise<NodeWebSocket> {
  const { chain, host } = options
  const registered = new Map<WebSocket, WebSocketRegistration>()
  const open = new Set<WebSocket>()
  const rawSockets = new Set<Duplex>()
  let mode: WebSocketMode = 'open'
  let accepted = 0
  let received = 0

  const wss = new WebSocketServer({ noServer: true })

  /** What the node does with one message from a client (its WebSocket handler, in order). */
  function onMessage (socket: WebSocket, data: RawData): void {
    received++
    if (mode === 'stall') return
    const text = Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8')
    if (text === '0') return reply(socket, '1')
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {}
    if (typeof value === 'object' && value !== null && !Array.isArray(value) && Object.hasOwn(value, 'addr')) {
      const message = value as Record<string, unknown>
      try {
        const address = getStr(message.addr)
        const block = Object.hasOwn(message, 'block') ? getInt(message.block) : chain.height
        // Read as the node reads them (a peer node's ports); a bad one is an error.
        if (Object.hasOwn(message, 'mainport')) getInt(message.mainport)
        if (Object.hasOwn(message, 'wssport')) getInt(message.wssport)
        if (Object.hasOwn(message, 'nonce')) {
          registered.set(socket, { address, block })
          return reply(socket, { result: 'Registered' })
        }
        if (Object.hasOwn(message, 'msg') && getStr(message.msg) === 'unsubscribe') {
          registered.delete(socket)
          return reply(socket, { result: 'Unsubscribed' })
        }
      } catch (err) {
        return reply(socket, { result: 'error', error: (err as Error).message })
      }
    }
    reply(socket, { result: 'Nothing happened' })
  }

  function onBlockConnected (block: ChainBlock): void {
    if (mode === 'stall' || registered.size === 0) return
    const messages = addressMessages(block)
    for (const [socket, registration] of registered) {
      if (block.height <= registration.block) continue
      reply(socket, newBlockMessage(block, registration.address))
      for (const message of messages.get(registration.address) ?? []) reply(socket, message)
      registration.block = block.height
    }
  }
  const unlisten = chain.listen({ connected: onBlockConnected })

  wss.on('connection', (socket: WebSocket) => {
    accepted++
    open.add(socket)
    socket.on('message', data => onMessage(socket, data))
    socket.on('close', () => {
      open.delete(socket)
      registered.delete(socket)
    })
    socket.on('error', () => socket.terminate())
  })

  const server: Server = createServer((_request, response) => {
    response.writeHead(426, { 'content-type': 'text/plain', connection: 'close' })
    response.end('WebSocket only')
  })
  server.on('connection', socket => {
    rawSockets.add(socket)
    socket.on('close', () => rawSockets.delete(socket))
  })
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy())
    if (mode === 'refuse') return refuseUpgrade(socket, '503 Service Unavailable')
    if (!WS_PATH.test(new URL(request.url ?? '/', 'ws://node').pathname)) return refuseUpgrade(socket, '404 Not Found')
    wss.handleUpgrade(request, socket, head, ws => wss.emit('connection', ws, request))
  })

  const listen = (port: number): Promise<number> => new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve((server.address() as { port: number }).port)
    })
  })
  const port = await listen(options.port)

  function dropAll (): void {
    for (const socket of open) socket.terminate()
  }

  async function stop (): Promise<void> {
    dropAll()
    if (!server.listening) return
    const closing = new Promise<void>(resolve => server.close(() => resolve()))
    for (const socket of rawSockets) socket.destroy()
    await closing
  }

  return {
    port,
    url: `ws://${host}:${port}/ws`,
    get mode () { return mode },
    setMode (next) { mode = next },
    get connections () { return open.size },
    get accepted () { return accepted },
    get received () { return received },
    registrations: () => [...registered.values()].map(registration => ({ ...registration })),
    dropAll,
    async start () {
      if (!server.listening) await listen(port)
    },
    stop,
    async close () {
      unlisten()
      await stop()
      wss.close()
    },
  }
}
