import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer as createHttpServer } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import { connect, createServer as createTcpServer, type AddressInfo, type Server, type Socket } from 'node:net'
import { describe, it } from 'node:test'
import { promisify } from 'node:util'
import { Cancel } from '../../packages/pocketnet-client/cancel.js'
import { NodeTransport } from '../../packages/pocketnet-client/transport.js'
import { startEmulator } from '../helpers/start-emulator.js'

const TRANSPORT = new URL('../../packages/pocketnet-client/transport.ts', import.meta.url).href
const CANCEL = new URL('../../packages/pocketnet-client/cancel.ts', import.meta.url).href
const TLS = new URL('../fixtures/tls/', import.meta.url)

function post (transport: NodeTransport, method: string, params: unknown[] = []) {
  return transport.post(method, params, { timeoutMs: 2000, cancel: new Cancel() })
}

function newTransport (t: { after (fn: () => unknown): void }, url: string, connections = 16): NodeTransport {
  const transport = new NodeTransport(url, { name: 'node 1', connections, maxResponseBytes: 1 << 20 })
  t.after(() => transport.close())
  return transport
}

async function listen (t: { after (fn: () => unknown): void }, server: Server | ReturnType<typeof createHttpsServer>): Promise<number> {
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  // Closed with its connections: a kept-alive one would hold close() until the client lets go.
  const sockets = new Set<Socket>()
  server.on('connection', (socket: Socket) => sockets.add(socket.on('close', () => sockets.delete(socket))))
  t.after(() => new Promise(resolve => {
    server.close(resolve)
    for (const socket of sockets) socket.destroy()
  }))
  return (server.address() as AddressInfo).port
}

describe('NodeTransport', () => {
  it('keeps connections alive: sequential calls share one, concurrent calls open no more than they need', async (t) => {
    const node = await startEmulator(t)
    // A TCP relay in front of the emulator, counting the connections the transport opens.
    let connections = 0
    const relay = createTcpServer(socket => {
      connections++
      const toNode = connect(node.port, '127.0.0.1')
      socket.pipe(toNode).pipe(socket)
      socket.on('error', () => toNode.destroy())
      toNode.on('error', () => socket.destroy())
    })
    const transport = newTransport(t, `http://127.0.0.1:${await listen(t, relay)}`)
    for (let i = 0; i < 20; i++) {
      const answer = await post(transport, 'getnodeinfo')
      assert.equal((answer.result as { lastblock: { height: number } }).lastblock.height, node.height)
    }
    assert.equal(connections, 1)
    await Promise.all(Array.from({ length: 8 }, () => post(transport, 'getnodeinfo')))
    await Promise.all(Array.from({ length: 8 }, () => post(transport, 'getnodeinfo')))
    assert.ok(connections <= 8, `${connections} connections for 8 concurrent calls`)
  })

  it('never takes bytes a node sent beyond its answer for the answer to the next call', async (t) => {
    // Each answer carries the call's number; the first is followed by a second, unasked answer.
    let calls = 0
    const node = createTcpServer(socket => {
      socket.on('data', () => {
        calls++
        const answer = (result: unknown): string => {
          const body = JSON.stringify({ result, error: null, id: null })
          return `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
        }
        socket.write(calls === 1 ? answer(calls) + answer('injected') : answer(calls))
      })
      socket.on('error', () => {})
    })
    const transport = newTransport(t, `http://127.0.0.1:${await listen(t, node)}`)
    const results = []
    for (let i = 0; i < 3; i++) results.push((await post(transport, 'getnodeinfo')).result)
    assert.deepEqual(results, [1, 2, 3])
  })

  it('names what went wrong when the bytes are not HTTP, or the connection closes mid-answer', async (t) => {
    const cases: Array<[string, string]> = [
      ['SSH-2.0-OpenSSH_9.2\r\n', 'node 1 failed: answer is not valid HTTP'],
      ['HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"result":', 'node 1 failed: connection closed before the answer was complete'],
    ]
    for (const [bytes, message] of cases) {
      const node = createTcpServer(socket => {
        socket.on('data', () => socket.end(bytes))
        socket.on('error', () => {})
      })
      const transport = newTransport(t, `http://127.0.0.1:${await listen(t, node)}`)
      await assert.rejects(post(transport, 'getnodeinfo'), (err: Error & { code?: string }) => {
        assert.equal(err.code, 'RPC_ERR_TRANSPORT')
        assert.equal(err.message, message)
        return true
      })
    }
  })

  it('keeps what a node wrote out of every message: an RPC error, an HTML page, plain text, a status text', async (t) => {
    const secret = 'http://10.1.2.3:38081/?password=secret'
    const answers: Array<{ status: number, statusText?: string, type: string, body: string, message: string, rpcCode?: number }> = [
      { status: 500, type: 'application/json', body: JSON.stringify({ result: null, error: { code: -8, message: `bad ${secret} ${'x'.repeat(200_000)}` }, id: 1 }), message: 'Pocketnet node rejected search (node 1): invalid parameter (RPC error -8)', rpcCode: -8 },
      { status: 500, type: 'application/json', body: JSON.stringify({ result: null, error: { code: 1e300, message: secret }, id: 1 }), message: 'Pocketnet node rejected search (node 1): an error code we do not know (RPC error 0)', rpcCode: 0 },
      { status: 502, statusText: `Bad Gateway ${secret}`, type: 'text/html', body: `<html><body>upstream ${secret} refused</body></html>`, message: 'node 1 answered HTTP 502 with a body that is not JSON' },
      { status: 500, type: 'text/plain', body: `Work queue depth exceeded at ${secret}`, message: 'node 1 is overloaded (Work queue depth exceeded)' },
      { status: 403, statusText: secret, type: 'application/json', body: JSON.stringify({ detail: secret }), message: 'node 1 answered HTTP 403 without a JSON-RPC result' },
    ]
    let next = answers[0] as typeof answers[number]
    const node = createHttpServer((request, response) => {
      request.resume()
      request.on('end', () => {
        response.writeHead(next.status, next.statusText ?? 'Error', { 'content-type': next.type })
        response.end(next.body)
      })
    })
    const transport = newTransport(t, `http://127.0.0.1:${await listen(t, node)}`)
    for (const answer of answers) {
      next = answer
      await assert.rejects(post(transport, 'search'), (err: Error & { rpcCode?: number, rpcMessage?: string }) => {
        assert.equal(err.message, answer.message)
        assert.equal(err.rpcCode, answer.rpcCode)
        return true
      })
    }
    // The node's own text is kept for the log, and only there.
    next = answers[0] as typeof answers[number]
    await assert.rejects(post(transport, 'search'), (err: Error & { rpcMessage?: string }) => {
      assert.ok(err.rpcMessage?.startsWith(`bad ${secret}`))
      return true
    })
  })

  it('calls a node over HTTPS, trusting a certificate given in NODE_EXTRA_CA_CERTS', async (t) => {
    const node = await startEmulator(t)
    const front = createHttpsServer({ key: readFileSync(new URL('key.pem', TLS)), cert: readFileSync(new URL('cert.pem', TLS)) }, (request, response) => {
      const chunks: Buffer[] = []
      request.on('data', (chunk: Buffer) => chunks.push(chunk))
      request.on('end', () => {
        fetch(`${node.url}/public/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) })
          .then(async answer => {
            response.writeHead(answer.status, { 'content-type': 'application/json' })
            response.end(Buffer.from(await answer.arrayBuffer()))
          }, () => response.destroy())
      })
    })
    const url = `https://127.0.0.1:${await listen(t, front)}`
    // A child process: Node reads NODE_EXTRA_CA_CERTS at start only.
    const child = `
      const { NodeTransport } = await import(${JSON.stringify(TRANSPORT)})
      const { Cancel } = await import(${JSON.stringify(CANCEL)})
      const transport = new NodeTransport(${JSON.stringify(url)}, { name: 'node 1', connections: 4, maxResponseBytes: 1 << 20 })
      const answer = await transport.post('getnodeinfo', [], { timeoutMs: 5000, cancel: new Cancel() })
      await transport.close()
      console.log(JSON.stringify(answer.result.lastblock))
    `
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', child], {
      env: { ...process.env, NODE_EXTRA_CA_CERTS: new URL('cert.pem', TLS).pathname },
    })
    assert.equal(JSON.parse(stdout.trim()).height, node.height)
    // Without the certificate, the same call fails as a transport error, not a crash.
    const untrusting = newTransport(t, url)
    await assert.rejects(post(untrusting, 'getnodeinfo'), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'RPC_ERR_TRANSPORT')
      assert.equal(err.message, 'node 1 failed: TLS certificate not trusted (self-signed)')
      return true
    })
  })
})
