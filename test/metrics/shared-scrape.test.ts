import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sharedScrape } from '../../src/metrics/shared-scrape.js'
import { manualClock } from '../helpers/manual-clock.js'

/** A scrape the test finishes by hand, counting how often it was started. */
function heldScrape () {
  const started: Array<{ finish: (text: string) => void, fail: (err: Error) => void }> = []
  const scrape = (): Promise<string> => new Promise((resolve, reject) => { started.push({ finish: resolve, fail: reject }) })
  return { scrape, started }
}

describe('sharedScrape', () => {
  it('shares a scrape that outlasts the second with everyone who asks while it runs', async () => {
    const clock = manualClock()
    const { scrape, started } = heldScrape()
    const shared = sharedScrape(scrape, 1000, clock.now)
    const first = shared()
    // A cluster's collection may take up to 2 s: the scrapers that came meanwhile wait for it.
    clock.advance(1500)
    const second = shared()
    assert.equal(started.length, 1)
    started[0]?.finish('one')
    assert.deepEqual(await Promise.all([first, second]), ['one', 'one'])
  })

  it('reuses a finished scrape until a second after it began, then scrapes again', async () => {
    const clock = manualClock()
    const { scrape, started } = heldScrape()
    const shared = sharedScrape(scrape, 1000, clock.now)
    const first = shared()
    clock.advance(500)
    started[0]?.finish('one')
    await first
    clock.advance(499)
    assert.equal(await shared(), 'one')
    assert.equal(started.length, 1)
    clock.advance(1)
    const next = shared()
    assert.equal(started.length, 2)
    started[1]?.finish('two')
    assert.equal(await next, 'two')
  })

  it('starts a fresh scrape as soon as a slow one has finished, a second after it began', async () => {
    const clock = manualClock()
    const { scrape, started } = heldScrape()
    const shared = sharedScrape(scrape, 1000, clock.now)
    const slow = shared()
    clock.advance(2000)
    started[0]?.finish('one')
    await slow
    const next = shared()
    assert.equal(started.length, 2, 'the answer of a scrape begun two seconds ago is not served again')
    started[1]?.finish('two')
    assert.equal(await next, 'two')
  })

  it('keeps no failed scrape: the next request tries again', async () => {
    const clock = manualClock()
    const { scrape, started } = heldScrape()
    const shared = sharedScrape(scrape, 1000, clock.now)
    const failed = shared()
    started[0]?.fail(new Error('the primary could not collect'))
    await assert.rejects(failed, /could not collect/)
    const again = shared()
    assert.equal(started.length, 2)
    started[1]?.finish('two')
    assert.equal(await again, 'two')
  })
})
