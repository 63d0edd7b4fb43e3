/**
 * Debian's Chromium driven by playwright-core (no browser download). The background-networking
 * flags matter on machines with a closed network, where Chromium's own connections are refused.
 */
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { chromium, type Browser, type Page } from 'playwright-core'

export const ARTIFACTS_DIR = new URL('../../test-artifacts/', import.meta.url).pathname

let shared: Promise<Browser> | undefined
let users = 0

/**
 * The process's browser, launched on first use and closed once the last test file that asked for
 * it is done: the end-to-end files run in one process and share one Chromium (each test opens a
 * context of its own, which isolates its pages, cookies and storage).
 */
export async function launchBrowser (t: { after (fn: () => unknown): void }): Promise<Browser> {
  users++
  t.after(async () => {
    if (--users > 0) return
    const browser = shared
    shared = undefined
    await (await browser)?.close()
  })
  shared ??= launch()
  return shared
}

function launch (): Promise<Browser> {
  mkdirSync(ARTIFACTS_DIR, { recursive: true })
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  })
}

export interface PageOptions {
  width?: number
  /** A script run before the page's own (page.addInitScript). */
  init?: string
  /** Functions of this process the page can call as window.<name> (page.exposeFunction). */
  expose?: Record<string, (...args: any[]) => unknown>
}

/**
 * A fresh page in a context of its own at `url`, closed when the test ends, which then also
 * fails the test if the page threw a script error or opened a dialog.
 */
export async function openPage (t: { after (fn: () => unknown): void }, browser: Browser, url: string, options: PageOptions = {}): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: options.width ?? 1200, height: 900 } })
  t.after(() => context.close())
  const page = await context.newPage()
  page.setDefaultTimeout(10_000)
  if (options.init) await page.addInitScript(options.init)
  for (const [name, fn] of Object.entries(options.expose ?? {})) await page.exposeFunction(name, fn)
  const problems: string[] = []
  page.on('pageerror', error => problems.push(error.message))
  page.on('dialog', dialog => {
    problems.push(`dialog: ${dialog.message()}`)
    dialog.dismiss().catch(() => {})
  })
  t.after(() => assert.deepEqual(problems, [], 'no script error and no dialog on the page'))
  await page.goto(url)
  return page
}
