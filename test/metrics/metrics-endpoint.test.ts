/** GET /metrics under attack (issue #24): behind a token when one is set, counted, and one scrape a second. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { loadConfig } from '../../src/config.js'
import { startApp } from '../helpers/build-app.js'
import { manualClock } from '../helpers/manual-clock.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { waitFor } from '../helpers/wait-for.js'

describe('METRICS_TOKEN', () => {
  it('is refused at start when short or with spaces, without repeating it', () => {
    for (const token of ['short-secret', 'a long secret with spaces']) {
      assert.throws(() => loadConfig({ METRICS_TOKEN: token }), (err: Error) => {
        assert.match(err.message, /METRICS_TOKEN must be .*at least 16/)
        assert.ok(!err.message.includes(token), 'the secret is not in the message')
        return true
      })
    }
    assert.equal(loadConfig({ METRICS_TOKEN: 'a-long-scrape-secret' }).METRICS_TOKEN, 'a-long-scrape-secret')
  })
})

describe('GET /metrics', () => {
  it('refuses anonymous and wrong-token scrapes with 401 when METRICS_TOKEN is set', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { METRICS_TOKEN: 'a-long-scrape-secret' } })
    const attempts: Array<Record<string, string>> = [{}, { authorization: 'Bearer wrong' }, { authorization: 'a-long-scrape-secret' }]
    for (const headers of attempts) {
      const { status, body, headers: answer } = await service.get('/metrics', { headers })
      assert.equal(status, 401, JSON.stringify(headers))
      assert.equal(body.code, 'METRICS_TOKEN_REQUIRED')
      assert.match(answer.get('www-authenticate') ?? '', /^Bearer/)
    }
    const scraped = await service.get('/metrics', { headers: { authorization: 'Bearer a-long-scrape-secret' } })
    assert.equal(scraped.status, 200)
    assert.match(String(scraped.body), /^http_requests_total/m)
  })

  it('counts refused scrapes in the rate limit: guessing the token is limited too', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url], env: { METRICS_TOKEN: 'a-long-scrape-secret', RATE_LIMIT_MAX: '3' } })
    const statuses: number[] = []
    for (let i = 0; i < 4; i++) statuses.push((await service.get('/metrics', { headers: { authorization: `Bearer guess-${i}` } })).status)
    assert.deepEqual(statuses, [401, 401, 401, 429])
    const right = await service.get('/metrics', { headers: { authorization: 'Bearer a-long-scrape-secret' } })
    assert.equal(right.status, 429, 'the right token waits for the window like anyone')
  })

  it('answers every scrape within a second with one scrape, and counts scrapes in the rate limit', async (t) => {
    const node = await startEmulator(t)
    const clock = manualClock()
    const service = await startApp(t, { nodes: [node.url], clock: clock.now, env: { RATE_LIMIT_MAX: '5' } })
    const first = await service.get('/metrics')
    await service.get('/healthz')
    const again = await service.get('/metrics')
    assert.equal(again.body, first.body, 'the same scrape, though a request came between')
    assert.notEqual(again.headers.get('x-ratelimit-remaining'), null, 'counted')
    clock.advance(1000)
    const later = await service.get('/metrics')
    assert.notEqual(later.body, first.body, 'a new scrape once the second has passed')
    for (let i = 0; i < 2; i++) await service.get('/metrics')
    assert.equal((await service.get('/metrics')).status, 429)
  })

  it('runs one scrape for twenty scrapers at once, in a cluster worker too (scrapeWith)', async (t) => {
    const node = await startEmulator(t)
    const clock = manualClock()
    const service = await startApp(t, { nodes: [node.url], clock: clock.now })
    // The seam a cluster worker answers through (cluster/cluster-metrics.ts), held open until
    // every scraper has asked, as a cluster's collection is while it asks the other workers.
    let scrapes = 0
    let release = (): void => {}
    const held = new Promise<void>(resolve => { release = resolve })
    service.app.metrics.scrapeWith(async () => {
      scrapes++
      await held
      return `# the cluster's scrape ${scrapes}\n${await service.app.metrics.registry.metrics()}`
    })
    const scrapers = Array.from({ length: 20 }, () => service.get('/metrics'))
    await waitFor('the first scrape to start', () => scrapes === 1)
    release()
    const answers = await Promise.all(scrapers)
    assert.deepEqual(answers.map(answer => answer.status), Array(20).fill(200))
    assert.equal(scrapes, 1)
    for (const answer of answers) assert.match(String(answer.body), /^# the cluster's scrape 1\n/)
    clock.advance(1000)
    assert.match(String((await service.get('/metrics')).body), /^# the cluster's scrape 2\n/, 'the next second, a new one')
    assert.equal(scrapes, 2)
  })
})
