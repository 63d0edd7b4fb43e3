/**
 * One push's CPU: the push as it was sent with `fetch` (the code before `cd6a549`, kept here
 * only to compare) against `pushThroughProxy` as it is (node:http with kept-alive connections),
 * in turn in this process, against a loopback server in a process of its own that answers as
 * the proxy does when it takes a push. BENCH_PUSH_CONCURRENCY (50: the push sender's batch) at
 * once, BENCH_PUSH_COUNT (5,000) per round, BENCH_PUSH_ROUNDS (3) rounds after a warm-up; prints
 * this process's CPU per push for each. The figures are in bench/results.md, "Notifications".
 * `npx tsx bench/push-transport.ts`
 */
import { fork } from 'node:child_process'
import { once, setMaxListeners } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { pushThroughProxy } from '../src/notifications/bastyon-push.js'
import type { DeliveryRow } from '../src/notifications/notification-store.js'

const COUNT = Number(process.env.BENCH_PUSH_COUNT ?? 5000)
const CONCURRENCY = Number(process.env.BENCH_PUSH_CONCURRENCY ?? 50)
const ROUNDS = Number(process.env.BENCH_PUSH_ROUNDS ?? 3)
const APP_ID = 'bench.push.app'

if (process.argv[2] === 'server') {
  const server = createServer((request, response) => {
    request.resume()
    request.on('end', () => { response.writeHead(200, { 'content-type': 'application/json' }).end('{"result":"success","data":{"success":true}}') })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  process.send?.((server.address() as AddressInfo).port)
} else {
  const child = fork(import.meta.filename, ['server'], { execArgv: ['--import', 'tsx'] })
  const [port] = await once(child, 'message') as [number]
  const row: DeliveryRow = { id: 1, attempts: 1, address: 'PR7srzZt4EfcNb3s27grgmiG8aB9vYNV82', channel: 'bastyon', target: `http://127.0.0.1:${port}`, notificationId: 'order-42', header: 'Your order shipped', path: '/orders/42' }
  const shutdown = new AbortController().signal
  // Each push in flight listens for the shutdown, as the push sender's do.
  setMaxListeners(CONCURRENCY + 10, shutdown)

  /** The push as it was: fetch, its answer read whole, the same checks. */
  async function withFetch (): Promise<void> {
    const controller = new AbortController()
    const timeout = setTimeout(() => { controller.abort() }, 10_000)
    try {
      const response = await fetch(`${row.target}/miniapp/sendNotification`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'bench' },
        body: JSON.stringify({ address: row.address, appId: APP_ID, url: row.path, header: row.header }),
        redirect: 'manual',
        signal: controller.signal,
      })
      const text = await response.text()
      if (response.status !== 200 || (JSON.parse(text) as { result?: unknown }).result !== 'success') throw new Error(`answered ${response.status}`)
    } finally {
      clearTimeout(timeout)
    }
  }
  const asNow = (): Promise<void> => pushThroughProxy(row, shutdown, { appId: APP_ID, timeoutMs: 10_000 })

  /** This process's CPU per push, in µs, over `count` pushes `CONCURRENCY` at a time. */
  async function round (push: () => Promise<void>, count: number): Promise<number> {
    const before = process.cpuUsage()
    let started = 0
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (started++ < count) await push()
    }))
    const used = process.cpuUsage(before)
    return (used.user + used.system) / count
  }

  const ways = { fetch: withFetch, 'node:http (pushThroughProxy)': asNow }
  for (const push of Object.values(ways)) await round(push, Math.ceil(COUNT / 2))
  const results: Record<string, number[]> = { fetch: [], 'node:http (pushThroughProxy)': [] }
  for (let i = 0; i < ROUNDS; i++) {
    // The order swapped every round.
    const order = i % 2 === 0 ? Object.entries(ways) : Object.entries(ways).reverse()
    for (const [name, push] of order) results[name]?.push(await round(push, COUNT))
  }
  for (const [name, perPush] of Object.entries(results)) console.log(`${name}: ${perPush.map(us => us.toFixed(0)).join(', ')} µs of CPU a push`)
  const ratios = (results['node:http (pushThroughProxy)'] ?? []).map((us, i) => us / (results.fetch?.[i] ?? Number.NaN))
  console.log(`node:http / fetch, per round: ${ratios.map(ratio => ratio.toFixed(2)).join(', ')}`)
  child.kill()
}
