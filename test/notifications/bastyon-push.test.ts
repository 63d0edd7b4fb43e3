/**
 * One push on the wire, over node:http with kept-alive connections: against the proxy emulator
 * (taken, refused), and against bare loopback servers for what the emulator does not do: a
 * redirect (not followed), an answer too long, a connection cut mid-answer, no answer (the
 * timeout, on a manual clock), nobody listening, and the shutdown. Two pushes in a row share one
 * connection.
 */
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer, type RequestListener, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import { startBastyonProxy } from '../../devnode/bastyon-proxy.js'
import { PushRefusedError, pushThroughProxy } from '../../src/notifications/bastyon-push.js'
import type { DeliveryRow } from '../../src/notifications/notification-store.js'
import { freePort } from '../helpers/free-port.js'
import { manualClock } from '../helpers/manual-clock.js'

type WithAfter = { after (fn: () => unknown): void }

const APP_ID = 'demo.pocketnet.app'
const ADDRESS = 'PR7srzZt4EfcNb3s27grgmiG8aB9vYNV82'

const rowTo = (target: string): DeliveryRow => ({ id: 1, attempts: 1, address: ADDRESS, channel: 'bastyon', target, notificationId: 'order-42', header: 'Your order shipped', path: '/orders/42' })
const options = { appId: APP_ID, timeoutMs: 1000 }
const running = (): AbortSignal => new AbortController().signal

/** A loopback server answering with `listener`, counting requests and connections. */
async function bareServer (t: WithAfter, listener: RequestListener): Promise<{ url: string, requests: string[], connections: () => number }> {
  const requests: string[] = []
  let connections = 0
  const server: Server = createServer((request, response) => {
    requests.push(`${request.method ?? ''} ${request.url ?? ''}`)
    listener(request, response)
  })
  server.on('connection', () => { connections++ })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.after(() => new Promise(resolve => { server.closeAllConnections(); server.close(resolve) }))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, connections: () => connections }
}

async function refusal (push: Promise<void>): Promise<PushRefusedError> {
  const error = await push.then(() => undefined, (err: unknown) => err)
  assert.ok(error instanceof PushRefusedError, String(error))
  return error
}

describe('a push on the wire', () => {
  it('is taken by the proxy as its sendNotification, and two in a row share one connection', async (t) => {
    const proxy = await startBastyonProxy({ apps: { [APP_ID]: { name: 'Demo', scope: APP_ID } } })
    t.after(() => proxy.close())
    proxy.addToken(APP_ID, ADDRESS)
    await pushThroughProxy(rowTo(proxy.url), running(), options)
    const pushed = proxy.pushes(ADDRESS)
    assert.deepEqual(pushed.map(push => [push.appId, push.body]), [[APP_ID, 'Demo: Your order shipped']])
    assert.match(pushed[0]?.url ?? '', new RegExp(`^application\\?id=${APP_ID.replaceAll('.', '\\.')}&p=[0-9a-f]+$`), 'the path, as the proxy encodes it')

    const server = await bareServer(t, (request, response) => {
      request.resume()
      request.on('end', () => { response.writeHead(200, { 'content-type': 'application/json' }).end('{"result":"success","data":{}}') })
    })
    await pushThroughProxy(rowTo(server.url), running(), options)
    await pushThroughProxy(rowTo(server.url), running(), options)
    assert.deepEqual(server.requests, ['POST /miniapp/sendNotification', 'POST /miniapp/sendNotification'])
    assert.equal(server.connections(), 1, 'kept alive between pushes')
  })

  it('is refused with the proxy\'s status and the start of its answer', async (t) => {
    const proxy = await startBastyonProxy({ apps: { [APP_ID]: { name: 'Demo', scope: APP_ID } } })
    t.after(() => proxy.close())
    proxy.addToken(APP_ID, ADDRESS)
    proxy.fault('http-500')
    const error = await refusal(pushThroughProxy(rowTo(proxy.url), running(), options))
    assert.equal(error.statusCode, 500)
    assert.equal(error.message, `answered 500: ${JSON.stringify('{"error":{},"code":500}')}`)
    assert.equal(proxy.pushes().length, 0)
  })

  it('does not follow a redirect', async (t) => {
    const server = await bareServer(t, (request, response) => {
      request.resume()
      response.writeHead(302, { location: '/elsewhere' }).end()
    })
    const error = await refusal(pushThroughProxy(rowTo(server.url), running(), options))
    assert.deepEqual([error.statusCode, error.message], [302, 'answered 302: ""'])
    assert.deepEqual(server.requests, ['POST /miniapp/sendNotification'], 'only the proxy itself is posted to')
  })

  it('refuses an answer longer than 64 KiB without reading it all, and one cut short', async (t) => {
    const long = await bareServer(t, (request, response) => {
      request.resume()
      response.writeHead(200, { 'content-type': 'application/json' })
      response.write(`{"result":"success","pad":"${'x'.repeat(70_000)}`)
      // Never ended: the push stops reading at the limit.
    })
    const tooLong = await refusal(pushThroughProxy(rowTo(long.url), running(), options))
    assert.deepEqual([tooLong.statusCode, tooLong.message], [200, 'answered 200 with more than 65536 bytes'])

    const cut = await bareServer(t, (request, response) => {
      request.resume()
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' })
      response.write('{"result":"succ')
      setImmediate(() => response.socket?.destroy())
    })
    const cutShort = await refusal(pushThroughProxy(rowTo(cut.url), running(), options))
    assert.match(cutShort.message, /^(answered 200, then the connection closed before the end of the answer|network error: ECONNRESET)$/)
  })

  it('gives up waiting at its timeout, and names a refused connection by its code', async (t) => {
    const clock = manualClock()
    const silent = await bareServer(t, request => { request.resume() })
    const waiting = refusal(pushThroughProxy(rowTo(silent.url), running(), { ...options, timers: clock.timers }))
    while (silent.requests.length === 0) await new Promise(resolve => setTimeout(resolve, 5))
    clock.advance(999)
    clock.advance(1)
    const timedOut = await waiting
    assert.deepEqual([timedOut.statusCode, timedOut.message], [null, 'no answer within 1000 ms'])

    const nobody = await refusal(pushThroughProxy(rowTo(`http://127.0.0.1:${await freePort()}`), running(), options))
    assert.deepEqual([nobody.statusCode, nobody.message], [null, 'network error: ECONNREFUSED'])
  })

  it('stops with the shutdown\'s reason', async (t) => {
    const silent = await bareServer(t, request => { request.resume() })
    const shutdown = new AbortController()
    const pushing = pushThroughProxy(rowTo(silent.url), shutdown.signal, options).then(() => undefined, (err: unknown) => err)
    while (silent.requests.length === 0) await new Promise(resolve => setTimeout(resolve, 5))
    const reason = new Error('the app is closing')
    shutdown.abort(reason)
    assert.equal(await pushing, reason)
  })
})
