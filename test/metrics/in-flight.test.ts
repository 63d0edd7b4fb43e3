/** http_requests_in_flight counts the requests being served (issue #39): an event stream its client closes is served no more. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { openStream } from '../events/sse-client.js'
import { startApp } from '../helpers/build-app.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { waitFor } from '../helpers/wait-for.js'

const inFlight = (scraped: string): number => Number(/^http_requests_in_flight (\d+)$/m.exec(scraped)?.[1])

describe('http_requests_in_flight', () => {
  it('goes back to 0 after answers, and after streams their clients closed', async (t) => {
    const node = await startEmulator(t)
    const service = await startApp(t, { nodes: [node.url] })
    assert.equal((await service.get('/api/events/poll?topics=blocks&since=1-1')).status, 200)
    await waitFor('the answered request to leave the gauge', async () => inFlight(await service.app.metrics.scrape()) === 0)
    const streams = await Promise.all([1, 2, 3].map(() => openStream(t, `${service.url}/api/events?topics=blocks`)))
    await waitFor('the streams to open', () => service.app.eventStreams.size === 3)
    assert.equal(inFlight(await service.app.metrics.scrape()), 3)
    for (const stream of streams) stream.close()
    await waitFor('the closed streams to be forgotten', () => service.app.eventStreams.size === 0)
    assert.equal(inFlight(await service.app.metrics.scrape()), 0)
  })
})
