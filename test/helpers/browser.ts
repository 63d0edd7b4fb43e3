/**
 * Debian's Chromium headless shell (`chromium-headless-shell`) driven by playwright-core (no
 * browser download): Chromium's own engine without the browser's window layer, the build
 * Playwright itself runs headless tests in. The whole browser in headless mode cost the
 * end-to-end tests about a third more CPU for the same pages (bench/results.md, "The suite,
 * third round"). The background-networking flags matter on machines with a closed network,
 * where Chromium's own connections are refused.
 */
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { chromium, type Browser, type Dialog, type Disposable, type Page } from 'playwright-core'

export const ARTIFACTS_DIR = new URL('../../test-artifacts/', import.meta.url).pathname
/** The binary itself: Debian's /usr/bin/chromium-headless-shell is a shell script that runs it as a child. */
const HEADLESS_SHELL = '/usr/lib/chromium/chromium-headless-shell'

let shared: Promise<Browser> | undefined
let users = 0

/**
 * The process's browser, launched on first use and closed once the last test file that asked for
 * it is done: the end-to-end files run in one process and share one Chromium (each test's pages
 * are its own: openPage).
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
    executablePath: process.env.CHROMIUM_PATH ?? HEADLESS_SHELL,
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
 * Pages that a finished test gave back, cleaned, for the next test to open anew: a new page costs
 * Chromium a renderer process started and warmed, several times what navigating a warm one does
 * (bench/results.md, "Test suite"). Each has a context of its own, which one test's pages never share.
 */
const idlePages = new WeakMap<Browser, Page[]>()

/**
 * A page at `url` for this test alone: opened anew (a document of its own, on a page a finished
 * test left with no init script, exposed function, route, cookie or permission of its own), and
 * given back when the test ends, which then also fails the test if the page threw a script error
 * or opened a dialog. The demo page keeps nothing in storage, which a document of its own resets.
 */
export async function openPage (t: { after (fn: () => unknown): void }, browser: Browser, url: string, options: PageOptions = {}): Promise<Page> {
  const idle = idlePages.get(browser) ?? []
  idlePages.set(browser, idle)
  const page = idle.pop() ?? await (await browser.newContext()).newPage()
  page.setDefaultTimeout(10_000)
  await page.setViewportSize({ width: options.width ?? 1200, height: 900 })
  const added: Disposable[] = []
  if (options.init) added.push(await page.addInitScript(options.init))
  for (const [name, fn] of Object.entries(options.expose ?? {})) added.push(await page.exposeFunction(name, fn))
  const problems: string[] = []
  const onError = (error: Error): void => { problems.push(error.message) }
  const onDialog = (dialog: Dialog): void => {
    problems.push(`dialog: ${dialog.message()}`)
    dialog.dismiss().catch(() => {})
  }
  page.on('pageerror', onError)
  page.on('dialog', onDialog)
  t.after(async () => {
    page.off('pageerror', onError)
    page.off('dialog', onDialog)
    try {
      // A blank document first: it ends the test's page (its timers, streams and requests).
      await page.goto('about:blank')
      await page.unrouteAll({ behavior: 'ignoreErrors' })
      for (const disposable of added) await disposable.dispose()
      await page.context().clearCookies()
      await page.context().clearPermissions()
      idle.push(page)
    } catch {
      // A page that cannot be cleaned (closed, crashed) is not given back.
      await page.context().close().catch(() => {})
    }
    assert.deepEqual(problems, [], 'no script error and no dialog on the page')
  })
  await page.goto(url)
  return page
}
