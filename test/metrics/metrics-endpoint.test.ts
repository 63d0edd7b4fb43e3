/** GET /metrics under attack (issue #24): behind a token when one is set, counted, and one scrape a second. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { startApp } from '../helpers/build-app.js'
import { manualClock } from '../helpers/manual-clock.js'
import { startEmulator } from '../helpers/start-emulator.js'

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
})
