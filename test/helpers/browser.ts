/**
 * Debian's Chromium driven by playwright-core (no browser download). The background-networking
 * flags matter on machines with a closed network, where Chromium's own connections are refused.
 */
import { mkdirSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'

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
