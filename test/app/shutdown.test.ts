import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { describe, it } from 'node:test'
import { ensureBuilt } from '../helpers/built.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { waitFor } from '../helpers/wait-for.js'

const ROOT = new URL('../../', import.meta.url).pathname

interface Server {
  child: ChildProcess
  url: string
  /** Resolves when the server logs a line matching `pattern`. */
  logged (pattern: RegExp): Promise<void>
}

/** Starts the built service (dist/server.js, as npm start does) as its own process on a free port; resolves once it listens. */
async function startServer (t: { after (fn: () => unknown): void }, env: Record<string, string>): Promise<Server> {
  ensureBuilt()
  const child = spawn(process.execPath, ['dist/server.js'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  t.after(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  const waiters: Array<{ pattern: RegExp, resolve: () => void }> = []
  let listening: ((url: string) => void) | undefined
  const url = new Promise<string>(resolve => { listening = resolve })
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', line => {
    const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(line)
    if (match) listening?.(match[1] as string)
    for (const waiter of waiters.filter(candidate => candidate.pattern.test(line))) waiter.resolve()
  })
  const exited = once(child, 'exit').then(() => { throw new Error('the server exited before listening') })
  return {
    child,
    url: await Promise.race([url, exited]),
    logged: pattern => new Promise(resolve => waiters.push({ pattern, resolve })),
  }
}

describe('graceful shutdown', () => {
  it('finishes every request in flight on SIGTERM, then exits 0', async (t) => {
    const node = await startEmulator(t, { latencyMs: 300 })
    // Room for all 20 at once: this is about shutting down, not about the node's capacity (a
    // call the pool sheds would never reach the node).
    const { child, url } = await startServer(t, { POCKETNET_NODES: node.url, CACHE_TTL_SEARCH_MS: '0', POCKETNET_NODE_THREADS: '20', POCKETNET_CONNECTIONS_PER_NODE: '20' })
    await fetch(`${url}/api/nodeinfo`)
    node.clearCalls()
    const requests = Array.from({ length: 20 }, (_, i) => fetch(`${url}/api/search?keyword=bitcoin&page=${i}&pageSize=5`).then(async response => ({ status: response.status, body: await response.json() })))
    // Signal once every request has reached the node: they are all in flight.
    await waitFor('20 searches to reach the node', () => node.callsTo('search').length >= 20)
    const exit = once(child, 'exit')
    child.kill('SIGTERM')
    const answers = await Promise.all(requests)
    assert.deepEqual(answers.map(answer => answer.status), Array(20).fill(200))
    assert.ok(answers.every(answer => answer.body.data.results.length === 5))
    const [code] = await exit
    assert.equal(code, 0)
    await assert.rejects(fetch(`${url}/healthz`), 'no longer accepting')
  })

  it('takes one Ctrl+C relayed by npm (the same SIGINT twice, at once) for one signal: answers the request in flight, exits 0', async (t) => {
    const node = await startEmulator(t, { latencyMs: 300 })
    const { child, url, logged } = await startServer(t, { POCKETNET_NODES: node.url })
    await fetch(`${url}/api/nodeinfo`)
    node.clearCalls()
    const request = fetch(`${url}/api/search?keyword=bitcoin`).then(response => response.status)
    await waitFor('the search to reach the node', () => node.callsTo('search').length >= 1)
    const exit = once(child, 'exit')
    const draining = logged(/shutting down/)
    child.kill('SIGINT')
    await draining
    // What npm does under `npm start`: the terminal's SIGINT reached node, and npm passes it on.
    child.kill('SIGINT')
    assert.equal(await request, 200)
    const [code] = await exit
    assert.equal(code, 0)
  })

  it('exits at once on a second signal', async (t) => {
    const node = await startEmulator(t)
    node.setFault({ kind: 'hang' }, { method: 'search' })
    const { child, url, logged } = await startServer(t, { POCKETNET_NODES: node.url, SHUTDOWN_TIMEOUT_MS: '60000', RPC_TIMEOUT_MS: '60000', RPC_DEADLINE_MS: '60000' })
    const hanging = fetch(`${url}/api/search?keyword=x`).catch(() => 'dropped')
    await waitFor('the search to reach the node', () => node.callsTo('search').length >= 1)
    const exit = once(child, 'exit')
    const draining = logged(/shutting down/)
    child.kill('SIGTERM')
    // Two signals sent at once would merge into one: send the second once the first is handled.
    await draining
    child.kill('SIGTERM')
    const [code] = await exit
    assert.equal(code, 130)
    assert.equal(await hanging, 'dropped')
  })
})
