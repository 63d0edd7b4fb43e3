/**
 * Debian's Chromium driven by playwright-core (no browser download). The background-networking
 * flags matter on machines with a closed network, where Chromium's own connections are refused.
 */
import { mkdirSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'

export const ARTIFACTS_DIR = new URL('../../test-artifacts/', import.meta.url).pathname

export async function launchBrowser (t: { after (fn: () => unknown): void }): Promise<Browser> {
  mkdirSync(ARTIFACTS_DIR, { recursive: true })
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  })
  t.after(() => browser.close())
  return browser
}
