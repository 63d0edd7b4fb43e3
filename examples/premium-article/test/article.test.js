// The premium article end to end, offline: an emulated Pocketnet node, the app on it, and readers
// who sign in and pay through a stand-in for the Bastyon host, as the page does.
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { createClient } from 'bastyon-miniapp-client'
import { standInHost, startDevnode, testSigner } from 'bastyon-miniapp-testkit'
import { build } from '../server.js'

const APP_ID = 'premium.article.app'

describe('the premium article', () => {
  // One node and one app for these tests; each test is a reader of its own.
  let devnode, baseUrl
  const cleanups = []
  before(async () => {
    devnode = await startDevnode()
    cleanups.push(() => devnode.close())
    const dataDir = await mkdtemp(join(tmpdir(), 'premium-article-'))
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }))
    const app = await build({
      env: {},
      pocketnetNodes: devnode.url,
      bastyonAppId: APP_ID,
      paymentAddress: testSigner('the shop').address,
      paymentConfirmations: 2,
      paymentConfirmNodes: 1,
      dataDir,
      // No load shedding: a test machine busy with other work is no overloaded server.
      maxEventLoopDelayMs: 0,
    })
    cleanups.push(() => app.close())
    await app.listen({ port: 0, host: '127.0.0.1' })
    baseUrl = `http://127.0.0.1:${app.server.address().port}`
  })
  after(async () => { for (const cleanup of cleanups.reverse()) await cleanup() })

  function reader (name) {
    const host = standInHost({ signer: testSigner(name), devnode, appId: APP_ID })
    return { host, client: createClient({ baseUrl, host }) }
  }

  it('lets a reader pay for the article and read it, granted on confirmation, and no one else read it', async () => {
    const { host, client } = reader('reader')
    const article = await client.request('/api/articles/why-pkoin')
    assert.equal(article.priceSat, 50_000_000)

    await client.signIn()
    const invoice = await client.request('/api/articles/why-pkoin/invoice', { method: 'POST', auth: true })
    const textOf = (someone) => someone.request('/api/articles/why-pkoin/text', { auth: true })
    await assert.rejects(textOf(client), { status: 402 })

    const paid = client.pay(invoice)
    const payment = await host.nextPayment()
    assert.equal(payment.amountSat, 50_000_000)
    devnode.mine(2)
    assert.equal((await paid).state, 'confirmed')
    assert.match((await textOf(client)).text, /full argument/)
    assert.deepEqual((await client.entitlements()).map((held) => [held.sku, held.invoiceId]), [['article.why-pkoin', invoice.id]])

    const other = reader('someone else')
    await other.client.signIn()
    await assert.rejects(textOf(other.client), { status: 402 })
  })

  it('answers 404 for an unknown article, and 401 to buy without signing in', async () => {
    const { client } = reader('a visitor')
    await assert.rejects(client.request('/api/articles/constructor'), { status: 404 })
    await assert.rejects(client.request('/api/articles/why-pkoin/invoice', { method: 'POST' }), { status: 401 })
  })
})
