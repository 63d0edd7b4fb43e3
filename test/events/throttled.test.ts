/** Throttled: at once when idle, never two at once, at most one run per gap, one more for the asks that came meanwhile. */
import assert from 'node:assert/strict'
import { it } from 'node:test'
import { Throttled } from '../../src/events/throttled.js'
import { manualClock } from '../helpers/manual-clock.js'

/** Lets the runs' promises settle. */
const settle = async (): Promise<void> => { for (let i = 0; i < 10; i++) await Promise.resolve() }

function counted () {
  const clock = manualClock()
  const runs: number[] = []
  let finish: (() => void) | undefined
  const task = async (): Promise<void> => {
    runs.push(clock.now())
    await new Promise<void>(resolve => { finish = resolve })
  }
  return { clock, runs, end: () => finish?.(), throttled: new Throttled(task, 100, clock.timers) }
}

it('runs at once when idle, then once more at the end of the rest for all the asks that came meanwhile', async () => {
  const { clock, runs, end, throttled } = counted()
  throttled.request()
  assert.deepEqual(runs, [1000])
  throttled.request()
  throttled.request()
  clock.advance(20)
  end()
  await settle()
  throttled.request()
  clock.advance(99)
  await settle()
  assert.deepEqual(runs, [1000], 'resting: not before the gap has passed')
  clock.advance(1)
  await settle()
  assert.deepEqual(runs, [1000, 1120], 'one run for the three asks')
  end()
  await settle()
  clock.advance(100)
  await settle()
  assert.deepEqual(runs, [1000, 1120], 'nothing asked since: no run')
  throttled.request()
  assert.deepEqual(runs, [1000, 1120, 1220], 'idle past the gap: at once')
  end()
  await throttled.close()
})

it('closes without waiting for the rest, and runs nothing after', async () => {
  const { clock, runs, end, throttled } = counted()
  throttled.request()
  end()
  await settle()
  throttled.request()
  await throttled.close()
  assert.equal(clock.pendingTimers, 0, 'the rest\'s timer is cleared')
  clock.advance(1000)
  throttled.request()
  await settle()
  assert.deepEqual(runs, [1000])
})

it('closes once the run in flight ends, with no rest after it', async () => {
  const { clock, runs, end, throttled } = counted()
  throttled.request()
  let closed = false
  const closing = throttled.close().then(() => { closed = true })
  await settle()
  assert.equal(closed, false, 'the run is in flight')
  end()
  await closing
  assert.equal(clock.pendingTimers, 0)
  assert.deepEqual(runs, [1000])
})
