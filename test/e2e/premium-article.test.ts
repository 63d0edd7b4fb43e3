/**
 * The premium-article example's page in Chromium, as `npm run dev` serves it (dev.js): the app on
 * a devnode with the test kit's dev host, a reader at `?signer=reader` who buys the article (the
 * page signs in through the dev signer and pays from the devnode's wallet, through the browser
 * client built as the package ships it), sees each confirmation and reads the text, and sees it
 * again after a reload; another reader sees the offer, not the text.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import type { FastifyInstance } from 'fastify'
import type { Page } from 'playwright-core'
import { mountDevHost, startDevnode, testSigner, type Devnode } from 'bastyon-miniapp-testkit'
import { launchBrowser, openPage } from '../helpers/browser.js'
import { ensureBuilt } from '../helpers/built.js'
import { waitFor } from '../helpers/wait-for.js'
import { copyTemplateTo } from '../../scripts/pglite-template.js'

// The example is plain JavaScript, as a mini-app developer writes it.
const EXAMPLE = '../../examples/premium-article/server.js'
const { build } = await import(EXAMPLE) as { build: (settings: Record<string, unknown>) => Promise<FastifyInstance> }

const APP_ID = 'premium.article.app'
type WithAfter = { after (fn: () => unknown): void }

async function startDev (t: WithAfter): Promise<{ url: string, devnode: Devnode }> {
  // The page loads the browser client from the package's dist/, as an installed one has it.
  ensureBuilt()
  const devnode = await startDevnode()
  t.after(() => devnode.close())
  const dataDir = mkdtempSync(join(tmpdir(), 'premium-article-page-'))
  t.after(() => rmSync(dataDir, { recursive: true, force: true }))
  // Its database copied in, not made here: initdb is seconds of CPU (scripts/pglite-template.ts).
  await copyTemplateTo(dataDir)
  const app = await build({
    env: {},
    pocketnetNodes: devnode.url,
    bastyonAppId: APP_ID,
    paymentAddress: testSigner('the shop').address,
    paymentConfirmations: 2,
    paymentConfirmNodes: 1,
    maxEventLoopDelayMs: 0,
    dataDir,
  })
  mountDevHost(app, { devnode, appId: APP_ID })
  t.after(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { url: `http://127.0.0.1:${(app.server.address() as { port: number }).port}`, devnode }
}

const textOf = (page: Page, id: string): Promise<string> => page.locator(`#${id}`).innerText()

describe('the premium-article page', () => {
  it('sells the article to a reader in a plain browser, shows each confirmation, and keeps it theirs across a reload', async (t) => {
    const { url, devnode } = await startDev(t)
    const browser = await launchBrowser(t)
    const page = await openPage(t, browser, `${url}/?signer=reader`)
    await page.locator('#buy').waitFor({ state: 'visible' })
    assert.equal(await textOf(page, 'title'), 'Why PKOIN')
    assert.match(await textOf(page, 'buy'), /0\.5 PKOIN/)
    assert.equal(await textOf(page, 'text'), '')

    await page.locator('#buy').click()
    // Paid once the host paid: the payment waits for a block, then for one more.
    const seen: string[] = []
    await waitFor('the article\'s text on the page', async () => {
      const state = await textOf(page, 'state')
      if (state !== '' && !seen.includes(state)) seen.push(state)
      if ((await textOf(page, 'text')) !== '') return true
      if (/pending|seen/.test(state)) devnode.mine()
      return false
    })
    assert.match(await textOf(page, 'text'), /full argument/)
    assert.equal(await textOf(page, 'state'), 'Paid')
    assert.ok(seen.some(state => /^(pending|seen), \d+ confirmations$/.test(state)), seen.join(' | '))
    assert.equal(await page.locator('#buy').isHidden(), true)

    await page.reload()
    await waitFor('the text again after a reload', async () => (await textOf(page, 'text')) !== '')
    assert.match(await textOf(page, 'text'), /full argument/)

    const other = await openPage(t, browser, `${url}/?signer=someone-else`)
    await other.locator('#buy').waitFor({ state: 'visible' })
    assert.equal(await textOf(other, 'text'), '')
  })
})
