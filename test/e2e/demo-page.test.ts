import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { generateDataset, type CommentRecord, type UserRecord } from '../../devnode/data/generate.js'
import type { Emulator } from '../../devnode/server.js'
import { addressOf, sdkSign, testKey } from '../../devnode/bastyon-host.js'
import { demoSignerKey, mountDemoSigner } from '../../devnode/demo-signer.js'
import { startApp, type TestApp } from '../helpers/build-app.js'
import { ensureBuilt } from '../helpers/built.js'
import { ARTIFACTS_DIR, launchBrowser, openPage as openPageAt, type PageOptions } from '../helpers/browser.js'
import { APP_ID, giveAccount } from '../helpers/sign-in.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { waitFor } from '../helpers/wait-for.js'

// One browser, emulator and service for the file; a fresh page for each test.
const suite = { after (fn: () => unknown) { cleanups.push(fn) } }
const cleanups: Array<() => unknown> = []
let browser: Browser
let node: Emulator
let service: TestApp

// The key the stand-in SDK signs with, and the account it owns in the emulator's dataset.
const KEY = testKey('demo-page')
let signedInUser: UserRecord

before(async () => {
  // The page imports the browser client's build from /client/.
  ensureBuilt()
  const dataset = generateDataset()
  signedInUser = giveAccount(dataset, KEY)
  node = await startEmulator(suite, { dataset })
  // The node panel's refresh must see new blocks at once: no answer cache here. Every page
  // polls /api/nodeinfo every 150 ms, all from one address: well over the default rate limit
  // (300 a minute) in a full run, which these tests are not about.
  // The live event stream follows the emulator's chain; every page opens one, all from one address.
  service = await startApp(suite, {
    nodes: [node.url],
    env: { CACHE_TTL_NODEINFO_MS: '0', BASTYON_APP_ID: APP_ID, RATE_LIMIT_MAX: '100000', EVENTS_INGEST: 'true', EVENTS_MAX_STREAMS_PER_CLIENT: '1000' },
    // As `npm run demo` has it: the signer the page uses with ?signer= outside Bastyon.
    extend: app => mountDemoSigner(app, { appId: APP_ID }),
  })
  browser = await launchBrowser(suite)
})
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

interface DemoPageOptions extends PageOptions {
  /** More query parameters for the page, e.g. `commentsPageSize=5`. */
  query?: string
}

function openPage (t: { after (fn: () => unknown): void }, options: DemoPageOptions = {}): Promise<Page> {
  const query = new URLSearchParams(options.query)
  if (!query.has('refreshMs')) query.set('refreshMs', '150')
  return openPageAt(t, browser, `${service.url}/?${query}`, options)
}

const text = (page: Page, testId: string): Promise<string> => page.getByTestId(testId).innerText()

/** Searches `keyword` and waits for the results. */
async function search (page: Page, keyword: string, pageSize = '20'): Promise<string[]> {
  await page.getByLabel('Keyword').fill(keyword)
  await page.getByLabel('Per page').selectOption(pageSize)
  await page.getByRole('button', { name: 'Search' }).click()
  await page.locator('#search-panel[data-state="done"]').waitFor()
  return page.getByTestId('search-result').evaluateAll(items => items.map(item => item.getAttribute('data-hash') ?? ''))
}

/** The post's top-level comments the node answers (by live authors), newest first as the API orders them. */
function topLevelComments (hash: string): CommentRecord[] {
  return node.dataset.comments
    .filter(comment => comment.postid === hash && comment.parentid === '' && node.dataset.usersByAddress.get(comment.address)?.deleted === false)
    .sort((a, b) => b.time - a.time || b.id.localeCompare(a.id))
}

/** A comment's text as Bastyon wrote it: `msg` is the JSON of URL-encoded values. */
const commentMessage = (comment: CommentRecord): string => decodeURIComponent(JSON.parse(comment.msg).message)

/** Opens the search result for `hash` and waits for the post and its first page of comments. */
async function openResult (page: Page, hash: string): Promise<void> {
  await page.locator(`[data-testid="search-result"][data-hash="${hash}"]`).getByTestId('result-open').click()
  await page.locator(`#post-panel[data-hash="${hash}"][data-state="done"]`).waitFor()
}

const commentIds = (page: Page): Promise<string[]> => page.getByTestId('comment').evaluateAll(items => items.map(item => item.getAttribute('data-id') ?? ''))

describe('the demo page', () => {
  it('shows the node\'s version and height, and follows new blocks', async (t) => {
    const page = await openPage(t)
    await page.getByTestId('node-height').filter({ hasText: String(node.height) }).waitFor()
    assert.equal(await text(page, 'node-version'), '0.22.7')
    node.mineBlock()
    await page.getByTestId('node-height').filter({ hasText: String(node.height) }).waitFor()
    await page.locator('#node-panel').screenshot({ path: `${ARTIFACTS_DIR}node-panel.png` })
  })

  it('shows a new block as soon as the event stream announces it, without polling', async (t) => {
    // Polling once an hour: what moves the height is the stream.
    const page = await openPage(t, { query: 'refreshMs=3600000' })
    await page.getByTestId('node-height').filter({ hasText: String(node.height) }).waitFor()
    await waitFor('the page\'s event stream to open', () => service.app.eventStreams.size > 0)
    node.mineBlock()
    // data-live: the height came from the stream, not from a poll.
    await page.locator('#node-panel[data-live="true"]').waitFor()
    await page.getByTestId('node-height').filter({ hasText: String(node.height) }).waitFor()
  })

  it('shows a profile looked up by address', async (t) => {
    const page = await openPage(t)
    const user = node.dataset.users.find(candidate => !candidate.deleted && candidate.postCount > 0)
    assert.ok(user)
    await page.getByLabel('Address').fill(user.address)
    await page.getByRole('button', { name: 'Look up' }).click()
    await page.getByTestId('profile-name').filter({ hasText: user.name }).waitFor()
    assert.equal(await text(page, 'profile-posts'), String(user.postCount))
    assert.equal(await text(page, 'profile-reputation'), String(user.reputation))
    // The avatar URL is outside this closed network: the initials stand in.
    await page.getByTestId('profile-initials').waitFor()
    await page.locator('#profile-panel').screenshot({ path: `${ARTIFACTS_DIR}profile-panel.png` })
  })

  it('shows the API\'s message for an invalid address, and for an unknown one', async (t) => {
    const page = await openPage(t)
    await page.getByLabel('Address').fill('P8bbRWJknHBXJRBTDSS88uQJSFvX67iN89')
    await page.getByRole('button', { name: 'Look up' }).click()
    await page.getByTestId('profile-status').filter({ hasText: 'Invalid path parameter: address' }).waitFor()
    assert.match(await text(page, 'profile-status'), /^This is not a valid Pocketnet address\./)
    await page.getByLabel('Address').fill('P8bbRWJknHBXJRBTDSS88uQJSFvX67iN88')
    await page.getByRole('button', { name: 'Look up' }).click()
    await page.getByTestId('profile-status').filter({ hasText: 'No account with this address.' }).waitFor()
  })

  it('pages a search forward and back with no overlap, and stops where hasMore ends', async (t) => {
    const page = await openPage(t)
    await page.getByLabel('Keyword').fill('music')
    await page.getByLabel('Per page').selectOption('10')
    await page.getByRole('button', { name: 'Search' }).click()
    const hashes = () => page.getByTestId('search-result').evaluateAll(items => items.map(item => item.getAttribute('data-hash')))
    await page.getByTestId('search-page').filter({ hasText: 'Page 1' }).waitFor()
    await page.locator('#search-panel[data-state="done"]').waitFor()
    const first = await hashes()
    assert.equal(first.length, 10)
    assert.equal(await page.getByTestId('search-prev').isDisabled(), true)
    await page.locator('#search-panel').screenshot({ path: `${ARTIFACTS_DIR}search-panel.png` })
    await page.getByTestId('search-next').click()
    await page.getByTestId('search-page').filter({ hasText: 'Page 2' }).waitFor()
    await page.locator('#search-panel[data-state="done"]').waitFor()
    const second = await hashes()
    assert.equal(second.length, 10)
    assert.equal(first.filter(hash => second.includes(hash)).length, 0, 'pages 1 and 2 do not overlap')
    await page.getByTestId('search-prev').click()
    await page.getByTestId('search-page').filter({ hasText: 'Page 1' }).waitFor()
    await page.locator('#search-panel[data-state="done"]').waitFor()
    assert.deepEqual(await hashes(), first)
    while (!(await page.getByTestId('search-next').isDisabled())) {
      const label = await text(page, 'search-page')
      await page.getByTestId('search-next').click()
      await page.getByTestId('search-page').filter({ hasNotText: label }).waitFor()
      await page.locator('#search-panel[data-state="done"]').waitFor()
    }
    assert.ok((await hashes()).length <= 10)
  })

  it('opens the author\'s profile from a search result', async (t) => {
    const page = await openPage(t)
    await page.getByLabel('Keyword').fill('bitcoin')
    await page.getByRole('button', { name: 'Search' }).click()
    await page.locator('#search-panel[data-state="done"]').waitFor()
    const author = await page.getByTestId('result-author').first().innerText()
    await page.getByTestId('result-author').first().click()
    await page.getByTestId('profile-name').filter({ hasText: author }).waitFor()
  })

  it('opens a search result as a post with its comments, newest first', async (t) => {
    const page = await openPage(t)
    const hashes = await search(page, 'bitcoin')
    // The result whose post has the most top-level comments.
    const hash = hashes.reduce((best, candidate) => topLevelComments(candidate).length > topLevelComments(best).length ? candidate : best)
    const post = node.dataset.posts.find(candidate => candidate.hash === hash)
    assert.ok(post)
    const expected = topLevelComments(hash)
    assert.ok(expected.length > 1, 'a bitcoin post with comments')
    const result = page.locator(`[data-testid="search-result"][data-hash="${hash}"]`)
    assert.equal(await result.getByTestId('result-open').innerText(), post.caption)
    const author = await result.getByTestId('result-author').innerText()
    assert.equal(await page.getByTestId('post-panel').isVisible(), false, 'hidden until a post is opened')

    await openResult(page, hash)
    await page.locator('#post-title:focus').waitFor()
    assert.equal(await text(page, 'post-caption'), post.caption)
    assert.equal(await text(page, 'post-message'), post.message)
    assert.equal(await text(page, 'post-author'), author)
    assert.equal(await text(page, 'post-comments-count'), String(post.comments))
    assert.deepEqual(await commentIds(page), expected.slice(0, 20).map(comment => comment.id))
    assert.equal(await page.getByTestId('comment-text').first().innerText(), commentMessage(expected[0] as CommentRecord))
    // More than 20: "More comments" brings the rest.
    while (await page.getByTestId('comments-more').isVisible()) {
      const shown = await page.getByTestId('comment').count()
      await page.getByTestId('comments-more').click()
      await page.getByTestId('comment').nth(shown).waitFor()
      await page.locator('#post-panel[data-state="done"]').waitFor()
    }
    assert.deepEqual(await commentIds(page), expected.map(comment => comment.id))
    assert.match(await text(page, 'comments-status'), new RegExp(`Showing ${expected.length} of ${expected.length} `))
    await page.locator('#post-panel').screenshot({ path: `${ARTIFACTS_DIR}post-panel.png` })

    // The post's author opens in the profile panel, as from a search result.
    await page.getByTestId('post-author').click()
    await page.getByTestId('profile-name').filter({ hasText: author }).waitFor()
  })

  it('shows a comment written on chain as soon as the event stream announces it', async (t) => {
    const page = await openPage(t, { query: 'refreshMs=3600000' })
    const hashes = await search(page, 'music')
    const hash = hashes.find(candidate => topLevelComments(candidate).length > 0) as string
    await openResult(page, hash)
    const post = node.dataset.posts.find(candidate => candidate.hash === hash)
    const newest = topLevelComments(hash)[0] as CommentRecord
    await waitFor('the post\'s event stream to open', () => service.app.eventStreams.size > 1)
    // A comment in the next block: the node notifies the post's author, naming the post.
    const written: CommentRecord = { ...newest, id: 'e'.repeat(64), time: newest.time + 60, block: node.height + 1, msg: JSON.stringify({ message: encodeURIComponent('Written just now'), url: '', images: [] }), donation: 0 }
    node.dataset.comments.push(written)
    node.addNotification({ address: post?.address as string, mesType: 'comment', addrFrom: written.address, posttxid: hash, commentid: written.id, reason: 'post' } as never)
    node.mineBlock()
    await page.locator('#post-panel[data-live="true"]').waitFor()
    await page.getByTestId('comment-text').first().filter({ hasText: 'Written just now' }).waitFor()
  })

  it('loads more comments a page at a time until hasMore ends', async (t) => {
    const page = await openPage(t, { query: 'commentsPageSize=3' })
    const hashes = await search(page, 'bitcoin', '50')
    const hash = hashes.find(candidate => topLevelComments(candidate).length > 7)
    assert.ok(hash, 'a bitcoin post with more than 7 top-level comments')
    const expected = topLevelComments(hash).map(comment => comment.id)
    await openResult(page, hash)
    assert.deepEqual(await commentIds(page), expected.slice(0, 3))
    for (let shown = 3; shown < expected.length; shown += 3) {
      await page.getByTestId('comments-more').click()
      await page.getByTestId('comment').nth(Math.min(shown + 3, expected.length) - 1).waitFor()
      await page.locator('#post-panel[data-state="done"]').waitFor()
      assert.deepEqual(await commentIds(page), expected.slice(0, shown + 3))
    }
    await page.getByTestId('comments-more').waitFor({ state: 'hidden' })
    assert.equal(await text(page, 'comments-status'), `Showing ${expected.length} of ${expected.length} top-level comments, newest first.`)
  })

  it('says "No comments yet." for a post without comments', async (t) => {
    const page = await openPage(t)
    const hashes = await search(page, 'bitcoin', '50')
    const hash = hashes.find(candidate => topLevelComments(candidate).length === 0)
    assert.ok(hash, 'a bitcoin post without comments')
    await openResult(page, hash)
    assert.equal(await text(page, 'comments-status'), 'No comments yet.')
    assert.equal(await page.getByTestId('comment').count(), 0)
    assert.equal(await page.getByTestId('comments-more').isVisible(), false)
  })

  it('shows the API\'s message when the post or its comments fail to load', async (t) => {
    const page = await openPage(t)
    const [first] = await search(page, 'bitcoin')
    assert.ok(first)
    await page.route(url => url.pathname.endsWith('/comments'), route => route.fulfill({
      status: 500, json: { message: 'Failed to retrieve comments', error: 'The node did not answer' },
    }))
    await page.locator(`[data-testid="search-result"][data-hash="${first}"]`).getByTestId('result-open').click()
    await page.locator('#post-panel[data-state="error"]').waitFor()
    assert.equal(await text(page, 'comments-status'), 'Failed to retrieve comments: The node did not answer')
    assert.ok(await page.getByTestId('post-caption').isVisible(), 'the post itself is shown')
    await page.unrouteAll()

    await page.route(url => url.pathname.startsWith('/api/content/'), route => route.fulfill({
      status: 404, json: { message: 'Content not found', error: `No post or video has the hash ${first}` },
    }))
    await page.locator(`[data-testid="search-result"][data-hash="${first}"]`).getByTestId('result-open').click()
    await page.locator('#post-panel[data-state="error"]').waitFor()
    assert.equal(await text(page, 'post-status'), `This post does not exist. (Content not found: No post or video has the hash ${first})`)
    assert.equal(await page.getByTestId('post-caption').isVisible(), false)
    assert.equal(await page.getByTestId('comments-status').isVisible(), false)
  })

  it('shows HTML in a post and its comments as text and runs none of it', async (t) => {
    const page = await openPage(t)
    // Comments from the chain with markup: Bastyon's JSON payload, and a msg that is not JSON.
    const injected = [
      { id: 'html-json', msg: JSON.stringify({ message: encodeURIComponent('<img src=x onerror=alert(1)> comment xsscheck'), url: '', images: [] }) },
      { id: 'html-raw', msg: '<b>not JSON</b> <script>alert(1)</script>' },
      { id: 'bad-escape', msg: JSON.stringify({ message: '100% sure', url: '', images: [] }) },
    ].map(comment => ({ ...comment, postid: '', address: node.dataset.users[0]?.address, time: '1763779500', parentid: '', answerid: '', scoreUp: '0', scoreDown: '0', reputation: '0' }))
    await page.route(url => url.pathname.endsWith('/comments'), async route => {
      const response = await route.fetch()
      const body = await response.json()
      body.data.results.unshift(...injected)
      await route.fulfill({ response, json: body })
    })
    await search(page, 'xsscheck')
    const posts = node.dataset.posts.filter(post => post.words.includes('xsscheck'))
    assert.equal(posts.length, 2)
    for (const post of posts) {
      await openResult(page, post.hash)
      assert.equal(await text(page, 'post-caption'), post.caption)
      assert.equal(await text(page, 'post-message'), post.message)
    }
    const comment = (id: string) => page.locator(`[data-testid="comment"][data-id="${id}"]`).getByTestId('comment-text').innerText()
    assert.equal(await comment('html-json'), '<img src=x onerror=alert(1)> comment xsscheck')
    assert.equal(await comment('html-raw'), '<b>not JSON</b> <script>alert(1)</script>')
    assert.equal(await comment('bad-escape'), '100% sure')
    assert.equal(await page.locator('img[src="x"]').count(), 0)
    assert.equal(await page.locator('#post-panel script, #post-panel b, #post-panel img').count(), 0)
  })

  it('shows HTML from the chain as text and runs none of it', async (t) => {
    const page = await openPage(t)
    await page.getByLabel('Keyword').fill('xsscheck')
    await page.getByRole('button', { name: 'Search' }).click()
    await page.getByText('Check this <img src=x onerror=alert(1)> xsscheck').waitFor()
    await page.getByText('<script>alert(1)</script> xsscheck script').waitFor()
    assert.equal(await page.locator('img[src="x"]').count(), 0)
    assert.equal(await page.locator('#search-panel script, #search-panel b').count(), 0)
  })

  it('shows an error state while the API fails, and recovers', async (t) => {
    const page = await openPage(t)
    await page.locator('#node-panel[data-state="ok"]').waitFor()
    await node.stop()
    await page.locator('#node-panel[data-state="error"]').waitFor()
    assert.match(await text(page, 'node-status'), /Failed to retrieve node information/)
    await page.locator('#node-panel').screenshot({ path: `${ARTIFACTS_DIR}node-panel-error.png` })
    await node.start()
    await page.locator('#node-panel[data-state="ok"]').waitFor()
  })

  // A stand-in for the host's SDK, with the shape Bastyon's has; `sign` is given as a method's source.
  const standInSdk = (sign: string): string =>
    `window.BastyonSdk = class { async init () {}; emit () {}; permissions = { request: async () => true }; get = { account: async () => ({}) }; ${sign} }`
  // Signs in this process, as the host does, with the test key.
  const hostSign = (challenge: string) => sdkSign(challenge, APP_ID, { key: KEY, issued: Date.now() })

  it('signs in with Bastyon, shows the signed-in user\'s profile, and signs out', async (t) => {
    const address = addressOf(KEY)
    const page = await openPage(t, { init: standInSdk('sign (text) { return window.hostSign(text) }'), expose: { hostSign } })
    assert.equal(await page.getByTestId('my-profile').isVisible(), false)
    assert.equal(await page.getByTestId('sign-out').isVisible(), false)
    await page.getByRole('button', { name: 'Sign in with Bastyon' }).click()
    await page.getByTestId('auth-status').filter({ hasText: address }).waitFor()
    assert.equal(await page.getByTestId('sign-in').isVisible(), false)
    await page.getByTestId('my-profile').click()
    await page.getByTestId('profile-name').filter({ hasText: signedInUser.name }).waitFor()
    assert.equal(await text(page, 'profile-address'), address)
    assert.equal(await text(page, 'profile-posts'), String(signedInUser.postCount))
    await page.locator('#profile-panel').screenshot({ path: `${ARTIFACTS_DIR}sign-in.png` })
    await page.getByTestId('sign-out').click()
    await page.getByTestId('sign-in').waitFor()
    assert.equal(await page.getByTestId('my-profile').isVisible(), false)
    assert.equal(await page.getByTestId('sign-out').isVisible(), false)
    assert.doesNotMatch(await text(page, 'auth-status'), /Signed in as/)
  })

  it('says so when the signed-in address has no account yet', async (t) => {
    const key = testKey('demo-page, no account')
    const page = await openPage(t, {
      init: standInSdk('sign (text) { return window.hostSign(text) }'),
      expose: { hostSign: (challenge: string) => sdkSign(challenge, APP_ID, { key, issued: Date.now() }) },
    })
    await page.getByTestId('sign-in').click()
    await page.getByTestId('auth-status').filter({ hasText: addressOf(key) }).waitFor()
    await page.getByTestId('my-profile').click()
    await page.getByTestId('profile-status').filter({ hasText: 'This address has no account yet' }).waitFor()
    assert.match(await text(page, 'profile-status'), new RegExp(addressOf(key)))
    assert.equal(await page.getByTestId('profile-card').isVisible(), false)
  })

  it('returns to signed-out when the token stops working', async (t) => {
    const page = await openPage(t, { init: standInSdk('sign (text) { return window.hostSign(text) }'), expose: { hostSign } })
    const session = page.waitForResponse(response => response.url().endsWith('/api/auth/session') && response.request().method() === 'POST')
    await page.getByTestId('sign-in').click()
    const { data } = await (await session).json()
    await page.getByTestId('my-profile').waitFor()
    // Revoked elsewhere (another tab signed out): the page's token is refused from now on.
    const { status } = await service.get('/api/auth/session', { method: 'DELETE', headers: { authorization: `Bearer ${data.token}` } })
    assert.equal(status, 200)
    await page.getByTestId('my-profile').click()
    await page.locator('[data-testid="auth-status"].error', { hasText: 'Authentication required' }).waitFor()
    await page.getByTestId('sign-in').waitFor()
    assert.equal(await page.getByTestId('my-profile').isVisible(), false)
  })

  it('shows an error and keeps "sign in" when the user declines to sign', async (t) => {
    const page = await openPage(t, { init: standInSdk('sign () { return Promise.reject(new Error(\'The user declined\')) }') })
    await page.getByTestId('sign-in').click()
    await page.locator('[data-testid="auth-status"].error', { hasText: 'The user declined' }).waitFor()
    await page.getByTestId('sign-in').and(page.locator(':enabled')).waitFor()
    assert.equal(await page.getByTestId('my-profile').isVisible(), false)
  })

  it('signs in without Bastyon in the demo (?signer=alice) as the demo signer\'s made-up user, and never offers it where the service has no demo signer', async (t) => {
    const page = await openPage(t, { query: 'signer=alice' })
    await page.getByRole('button', { name: 'Sign in with Bastyon' }).click()
    await page.getByTestId('auth-status').filter({ hasText: addressOf(demoSignerKey('alice')) }).waitFor()
    await page.getByTestId('my-profile').waitFor()

    // Elsewhere (no demo): GET /demo/signer is a 404, and the page offers no sign-in.
    const elsewhere = await openPage(t, { query: 'signer=alice' })
    await elsewhere.route('**/demo/signer?**', route => route.fulfill({ status: 404, contentType: 'application/json', body: '{"message":"Not found","error":"no route"}' }))
    await elsewhere.reload()
    await elsewhere.locator('#node-panel[data-state="ok"]').waitFor()
    assert.equal(await elsewhere.getByTestId('sign-in').isVisible(), false)
  })

  it('hides "my profile" without the SDK', async (t) => {
    const page = await openPage(t)
    await page.locator('#node-panel[data-state="ok"]').waitFor()
    for (const testId of ['sign-in', 'my-profile', 'sign-out', 'auth-status']) {
      assert.equal(await page.getByTestId(testId).isVisible(), false, testId)
    }
  })

  it('fits a 360 px screen and labels every control', async (t) => {
    const page = await openPage(t, { width: 360 })
    await page.locator('#node-panel[data-state="ok"]').waitFor()
    const [first] = await search(page, 'bitcoin')
    assert.ok(first)
    await openResult(page, first)
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 360))
    const unlabelled = await page.evaluate(() => [...document.querySelectorAll('input, select')]
      .filter(control => !control.getAttribute('aria-label') && !document.querySelector(`label[for="${control.id}"]`)).length)
    assert.equal(unlabelled, 0)
    await page.screenshot({ path: `${ARTIFACTS_DIR}phone.png`, fullPage: true })
  })
})

describe('the API docs page', () => {
  it('renders every route offline, fetching nothing from another host', async (t) => {
    const context = await browser.newContext()
    t.after(() => context.close())
    const page = await context.newPage()
    page.setDefaultTimeout(10_000)
    const requested: string[] = []
    page.on('request', request => requested.push(request.url()))
    await page.goto(`${service.url}/docs`)
    await page.locator('.opblock-summary-path', { hasText: '/api/search' }).waitFor()
    for (const path of ['/api/nodeinfo', '/api/user/{address}', '/healthz', '/readyz']) {
      await page.locator('.opblock-summary-path', { hasText: path }).first().waitFor()
    }
    await page.screenshot({ path: `${ARTIFACTS_DIR}docs-page.png` })
    const elsewhere = requested.filter(url => !url.startsWith(service.url) && !url.startsWith('data:'))
    assert.deepEqual(elsewhere, [])
  })
})
