/**
 * An offline Pocketnet node over real HTTP: the public read RPC with a node's wire format,
 * a generated dataset, a chain height that moves when told, and injectable faults.
 * For development (`npm run devnode`, `npm run demo`), tests and benchmarks.
 */
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { DEFAULT_HEIGHT, getDefaultDataset, type Dataset } from './data/generate.js'
import { ActiveFault, answerWithFault, type Fault, type FaultScope } from './faults.js'
import { RpcError, getContent, getUserProfile, nodeInfo, search, type ChainState } from './rpc-methods.js'

export type { Fault, FaultScope } from './faults.js'
export type { Dataset, PostRecord, UserRecord } from './data/generate.js'

export interface EmulatorOptions {
  /** Default 0: a free port. */
  port?: number
  host?: string
  /** Reported by getnodeinfo; below 0.22.1 paging params are read as strings. Default 0.22.7. */
  version?: string
  height?: number
  /** Added before every answer. */
  latencyMs?: number
  /** Mine a block every N ms. Default: only when mineBlock() is called. */
  blockIntervalMs?: number
  dataset?: Dataset
  /** Most calls kept in `calls` (the oldest half goes beyond it), so a long-running emulator stays small. Default 100000. */
  recordLimit?: number
}

export interface RecordedCall {
  method: string
  /** As parsed from the request, unchanged. */
  params: unknown
  id: unknown
  at: number
}

export interface Emulator {
  url: string
  port: number
  calls: RecordedCall[]
  callsTo (method: string): RecordedCall[]
  clearCalls (): void
  /** Replaces the current fault (null removes it). */
  setFault (fault: Fault | null, scope?: FaultScope): void
  readonly height: number
  mineBlock (): void
  dataset: Dataset
  /** Stops listening and drops open connections (hanging ones too); state is kept. */
  stop (): Promise<void>
  /** Listens again on the same port. */
  start (): Promise<void>
  close (): Promise<void>
}

const MAX_BODY_BYTES = 1024 * 1024
const READ_METHODS = new Set(['getnodeinfo', 'getuserprofile', 'search', 'getcontent'])

function sendJson (response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body)
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
  response.end(text)
}

async function readBody (request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of request) {
    size += (chunk as Buffer).length
    if (size > MAX_BODY_BYTES) return undefined
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}

export async function createEmulator (options: EmulatorOptions = {}): Promise<Emulator> {
  const dataset = options.dataset ?? getDefaultDataset()
  const chain: ChainState = {
    version: options.version ?? '0.22.7',
    height: options.height ?? DEFAULT_HEIGHT,
    blockHash: randomBytes(32).toString('hex'),
    blockTime: Math.floor(Date.now() / 1000),
    lag: 0,
  }
  const calls: RecordedCall[] = []
  const recordLimit = options.recordLimit ?? 100_000
  const record = (call: RecordedCall): void => {
    if (calls.length >= recordLimit) calls.splice(0, Math.ceil(recordLimit / 2))
    calls.push(call)
  }
  const sockets = new Set<Socket>()
  let fault: ActiveFault | undefined
  let closed = false

  function dispatch (method: string, params: unknown[]): unknown {
    switch (method) {
      case 'getnodeinfo': return nodeInfo(chain)
      case 'getuserprofile': return getUserProfile(dataset, params)
      case 'search': return search(dataset, chain, params)
      case 'getcontent': return getContent(dataset, params)
      default: throw new RpcError(-32601, 'Method not found', 404)
    }
  }

  async function handle (request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (request.method !== 'POST') {
      response.writeHead(405, { 'content-type': 'text/plain' })
      response.end('JSONRPC server handles only POST requests')
      return
    }
    const text = await readBody(request)
    if (text === undefined) {
      response.writeHead(413, { 'content-type': 'text/plain' })
      response.end('Request body too large')
      return
    }
    let body: { method?: unknown, params?: unknown, id?: unknown }
    try {
      body = JSON.parse(text)
      if (typeof body !== 'object' || body === null) throw new Error('not an object')
    } catch {
      record({ method: '', params: undefined, id: null, at: Date.now() })
      sendJson(response, 500, { result: null, error: { code: -32700, message: 'Parse error' }, id: null })
      return
    }
    const method = typeof body.method === 'string' ? body.method : ''
    const id = body.id ?? null
    record({ method, params: body.params, id, at: Date.now() })

    if (options.latencyMs) await sleep(options.latencyMs)
    const active = fault?.take(method) ? fault.fault : undefined
    if (active?.kind === 'latency') await sleep(active.ms)
    if (active && answerWithFault(active, request, response, id)) return
    chain.lag = active?.kind === 'lag' ? active.blocks : 0
    try {
      if (request.url?.startsWith('/post/') && READ_METHODS.has(method)) throw new RpcError(-32601, 'Method not found', 404)
      const params = Array.isArray(body.params) ? body.params : []
      sendJson(response, 200, { result: dispatch(method, params), error: null, id })
    } catch (err) {
      const rpc = err instanceof RpcError ? err : new RpcError(-32603, 'Internal error')
      sendJson(response, rpc.status, { result: null, error: { code: rpc.code, message: rpc.message }, id })
    } finally {
      chain.lag = 0
    }
  }

  const server: Server = createServer((request, response) => {
    handle(request, response).catch(() => request.socket.destroy())
  })
  server.keepAliveTimeout = 10_000
  server.on('connection', socket => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })

  const listen = (port: number): Promise<number> => new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, options.host ?? '127.0.0.1', () => {
      server.off('error', reject)
      resolve((server.address() as { port: number }).port)
    })
  })
  const port = await listen(options.port ?? 0)

  function mineBlock (): void {
    chain.height++
    chain.blockHash = randomBytes(32).toString('hex')
    chain.blockTime = Math.max(chain.blockTime + 1, Math.floor(Date.now() / 1000))
  }
  const miner = options.blockIntervalMs ? setInterval(mineBlock, options.blockIntervalMs).unref() : undefined

  async function stop (): Promise<void> {
    if (!server.listening) return
    const closing = new Promise<void>(resolve => server.close(() => resolve()))
    for (const socket of sockets) socket.destroy()
    await closing
  }

  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    port,
    calls,
    callsTo: method => calls.filter(call => call.method === method),
    clearCalls: () => { calls.length = 0 },
    setFault (next, scope) {
      fault = next === null ? undefined : new ActiveFault(next, scope)
    },
    get height () {
      return chain.height
    },
    mineBlock,
    dataset,
    stop,
    async start () {
      if (closed) throw new Error('The emulator is closed')
      if (!server.listening) await listen(port)
    },
    async close () {
      closed = true
      clearInterval(miner)
      await stop()
    },
  }
}
