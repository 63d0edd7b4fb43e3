/**
 * The demo page's notifications in Chromium, as `npm run demo` serves them: signed in as the demo
 * signer's made-up user (`?signer=`), "Notify me" registers the user at the demo's Bastyon proxy
 * emulator (the host's stand-in) and opts them in on the service; the demo's gift (an entitlement
 * granted, told with NOTIFY_ON_ENTITLEMENT_GRANTED) then arrives as a push the page shows, once.
 * Outside the demo (no signer), the panel stays hidden.
 */
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import type { Browser } from 'playwright-core'
import { startBastyonProxy, type BastyonProxy } from '../../devnode/bastyon-proxy.js'
import { DEMO_GIFT_SKU, mountDemoNotifications } from '../../devnode/demo-notifications.js'
import { demoSignerKey, mountDemoSigner } from '../../devnode/demo-signer.js'
import { addressOf } from '../../devnode/bastyon-host.js'
import { startApp, type TestApp } from '../helpers/build-app.js'
import { ensureBuilt } from '../helpers/built.js'
import { launchBrowser, openPage } from '../helpers/browser.js'
import { APP_ID } from '../helpers/sign-in.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { freshDataDir } from '../payments/databases.js'

const suite = { after (fn: () => unknown) { cleanups.push(fn) } }
const cleanups: Array<() => unknown> = []
let browser: Browser
let proxy: BastyonProxy
let service: TestApp

before(async () => {
  ensureBuilt()
  const node = await startEmulator(suite)
  proxy = await startBastyonProxy({ apps: { [APP_ID]: { name: 'Demo', scope: APP_ID } } })
  suite.after(() => proxy.close())
  const dataDir = await freshDataDir()
  suite.after(() => rmSync(dataDir, { recursive: true, force: true }))
  service = await startApp(suite, {
    nodes: [node.url],
    env: { BASTYON_APP_ID: APP_ID, DATA_DIR: dataDir, NOTIFY_BASTYON_PROXIES: proxy.url, NOTIFY_ON_ENTITLEMENT_GRANTED: 'true', RATE_LIMIT_MAX: '100000' },
    extend: app => {
      mountDemoSigner(app, { appId: APP_ID })
      // The gift as `npm run demo` makes it: a grant, which the service tells.
      mountDemoNotifications(app, { appId: APP_ID, proxyUrl: proxy.url, gift: async address => await app.entitlements.grant(address, DEMO_GIFT_SKU, { durationS: 3600 }) })
    },
  })
  browser = await launchBrowser(suite)
})
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

describe('the demo page\'s notifications', () => {
  it('opts in with "Notify me", then shows the push the demo\'s gift makes the service send, once', async (t) => {
    const page = await openPage(t, browser, `${service.url}/?signer=nora&refreshMs=60000`)
    const address = addressOf(demoSignerKey('nora'))
    await page.getByRole('button', { name: 'Notify me' }).click()
    await page.getByTestId('notify-status').filter({ hasText: 'Sign in first.' }).waitFor()

    await page.getByRole('button', { name: 'Sign in with Bastyon' }).click()
    await page.getByTestId('auth-status').filter({ hasText: address }).waitFor()
    await page.getByRole('button', { name: 'Notify me' }).click()
    await page.locator('#notify-panel[data-state="on"]').waitFor()
    assert.deepEqual(proxy.tokens().map(token => [token.appId, token.address]), [[APP_ID, address]], 'registered at the proxy as the host does')
    assert.deepEqual((await service.app.notifications?.channels(address))?.map(channel => channel.channel === 'bastyon' ? channel.proxy : channel.channel), [proxy.url], 'opted in on the service')

    await page.getByRole('button', { name: 'Send me a gift' }).click()
    await page.getByTestId('notify-push').filter({ hasText: 'Demo: Your purchase is ready' }).waitFor()
    assert.equal(proxy.pushes(address).length, 1)
    assert.equal(await page.getByTestId('notify-push').count(), 1)
  })

  it('stays hidden outside the demo, where no host registers', async (t) => {
    const page = await openPage(t, browser, `${service.url}/?refreshMs=60000`)
    await page.locator('#node-panel[data-state="ok"]').waitFor()
    assert.equal(await page.locator('#notify-panel').isVisible(), false)
  })
})
