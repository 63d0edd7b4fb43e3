/**
 * bastyon-miniapp-client in Debian's Chromium: its public entry bundled as an ES module (what a
 * mini-app's bundler makes of the package) on a page of the service's origin, following blocks
 * with the browser's own EventSource, signed in with a stream ticket, and falling back to
 * long-polling when the stream never opens, as behind the host's Tor service worker, which hands
 * a response over only once it is whole.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { build } from 'esbuild'
import type { Browser, Page } from 'playwright-core'
import { addressOf, sdkSign, testKey } from '../../devnode/bastyon-host.js'
import type { Emulator } from '../../devnode/server.js'
import { startApp, type TestApp } from '../helpers/build-app.js'
import { launchBrowser, openPage } from '../helpers/browser.js'
import { APP_ID } from '../helpers/sign-in.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { waitFor } from '../helpers/wait-for.js'

const suite = { after (fn: () => unknown) { cleanups.push(fn) } }
const cleanups: Array<() => unknown> = []
let browser: Browser
let node: Emulator
let service: TestApp

const USER_KEY = testKey('miniapp-client browser user')

/** The page: the client module, and a script that makes a client and records what it follows on window. */
const PAGE = '<!doctype html><title>client</title><script type="module" src="/client-test/page.js"></script>'
const PAGE_SCRIPT = `
import { createClient } from '/client-test/client.js'
window.events = []
window.client = createClient({
  streamOpenTimeoutMs: 500,
  retryMs: 200,
  host: { sign: text => window.hostSign(text) },
})
window.follow = (topics) => {
  window.connects = []
  window.following = window.client.follow(topics, event => window.events.push(event), { onConnect: transport => window.connects.push(transport) })
  return window.following.transport
}
window.ready = true
`

before(async () => {
  const bundled = await build({ entryPoints: [new URL('../../packages/miniapp-client/src/index.ts', import.meta.url).pathname], bundle: true, format: 'esm', write: false, target: 'es2022' })
  const client = bundled.outputFiles[0]?.text as string
  node = await startEmulator(suite)
  service = await startApp(suite, {
    nodes: [node.url],
    env: { BASTYON_APP_ID: APP_ID, EVENTS_INGEST: 'true', RATE_LIMIT_MAX: '100000', EVENTS_POLL_WAIT_MS: '2000' },
    extend: app => {
      app.get('/client-test/', async (_request, reply) => reply.type('text/html').send(PAGE))
      app.get('/client-test/page.js', async (_request, reply) => reply.type('text/javascript').send(PAGE_SCRIPT))
      app.get('/client-test/client.js', async (_request, reply) => reply.type('text/javascript').send(client))
    },
  })
  browser = await launchBrowser(suite)
})
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

async function clientPage (t: { after (fn: () => unknown): void }, setUp?: (page: Page) => Promise<void>): Promise<Page> {
  const page = await openPage(t, browser, 'about:blank', { expose: { hostSign: (text: string) => sdkSign(text, APP_ID, { key: USER_KEY, issued: Date.now() }) } })
  await setUp?.(page)
  await page.goto(`${service.url}/client-test/`)
  await page.waitForFunction(() => (window as any).ready === true)
  return page
}

/** Mines until the page has a block event above `height`; the block events it has. */
async function blocksAbove (page: Page, height: number): Promise<Array<{ event: string, data: { height: number, topic: string } }>> {
  let blocks: Array<{ event: string, data: { height: number, topic: string } }> = []
  await waitFor(`a block above ${height} on the page`, async () => {
    blocks = (await page.evaluate(() => (window as any).events)).filter((event: { event: string }) => event.event === 'block')
    if (blocks.some(block => block.data.height > height)) return true
    node.mineBlock()
    return false
  })
  return blocks
}

describe('bastyon-miniapp-client in Chromium', () => {
  it('follows blocks over the browser\'s EventSource', async (t) => {
    const page = await clientPage(t)
    assert.equal(await page.evaluate(() => (window as any).follow(['blocks'])), 'stream')
    const from = node.height
    const blocks = await blocksAbove(page, from)
    assert.equal(blocks[0]?.data.topic, 'blocks')
    assert.equal(await page.evaluate(() => (window as any).following.transport), 'stream', 'no fallback: the stream opened')
    assert.deepEqual(await page.evaluate(() => (window as any).connects), ['stream'], 'told once, when it opened')
  })

  it('signed in, opens its stream with a ticket, and opens it again with a new one when it ends', async (t) => {
    const page = await clientPage(t)
    const address = await page.evaluate(async () => (await (window as any).client.signIn()).address)
    assert.equal(address, addressOf(USER_KEY))
    const tickets: string[] = []
    page.on('request', request => {
      const ticket = new URL(request.url()).searchParams.get('ticket')
      if (request.url().includes('/api/events?') && ticket !== null) tickets.push(ticket)
    })
    await page.evaluate(() => (window as any).follow(['blocks']))
    await blocksAbove(page, node.height)
    assert.equal(tickets.length, 1)
    // The service ends every stream (as on shutdown): the client reconnects with a fresh ticket
    // (a used one opens nothing) and from the last event.
    const heard = node.height
    service.app.eventStreams.closeAll()
    await blocksAbove(page, heard)
    assert.ok(tickets.length >= 2, `${tickets.length} tickets`)
    assert.equal(new Set(tickets).size, tickets.length, 'a new ticket for each stream')
  })

  it('falls back to long-polling when the first stream is refused (a proxy that answers it with an error)', async (t) => {
    const page = await clientPage(t, async page => {
      await page.route('**/api/events?**', route => route.fulfill({ status: 502, contentType: 'text/plain', body: 'Bad gateway' }))
    })
    assert.equal(await page.evaluate(() => (window as any).follow(['blocks'])), 'stream')
    await page.waitForFunction(() => (window as any).following.transport === 'poll')
    const blocks = await blocksAbove(page, node.height)
    assert.equal(blocks.at(-1)?.data.topic, 'blocks')
    assert.deepEqual(await page.evaluate(() => (window as any).connects), ['poll'], 'the refused stream never connected')
  })

  it('falls back to long-polling when the stream never opens (a transport that buffers it)', async (t) => {
    const page = await clientPage(t, async page => {
      // The stream's request is held and never answered: no headers, no open, as behind a
      // service worker that waits for the whole body.
      await page.route('**/api/events?**', () => {})
    })
    assert.equal(await page.evaluate(() => (window as any).follow(['blocks'])), 'stream')
    await page.waitForFunction(() => (window as any).following.transport === 'poll')
    const blocks = await blocksAbove(page, node.height)
    assert.equal(blocks.at(-1)?.data.topic, 'blocks')
  })
})
