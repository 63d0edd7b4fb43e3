import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { CoalescingRun } from '../../packages/pocketnet-client/coalescing-run.js'

/** Work whose runs the test ends by hand, one at a time, counting how many run at once. */
function handRun () {
  const ends: Array<{ resolve (): void, reject (err: Error): void }> = []
  const state = { started: 0, inFlight: 0, mostAtOnce: 0 }
  const work = (): Promise<void> => {
    state.started++
    state.inFlight++
    state.mostAtOnce = Math.max(state.mostAtOnce, state.inFlight)
    return new Promise<void>((resolve, reject) => { ends.push({ resolve, reject }) }).finally(() => { state.inFlight-- })
  }
  /** Ends the run in flight, and lets the runner see it. */
  const end = async (err?: Error): Promise<void> => {
    const run = ends.shift()
    assert.ok(run, 'a run is in flight')
    if (err === undefined) run.resolve()
    else run.reject(err)
    for (let turn = 0; turn < 5; turn++) await Promise.resolve()
  }
  return { work, state, end }
}

describe('CoalescingRun', () => {
  it('runs at once when asked, and once more after the run when asked during it, however often', async () => {
    const { work, state, end } = handRun()
    let idle = 0
    const run = new CoalescingRun(work, { onIdle: () => idle++ })
    run.request()
    assert.deepEqual([state.started, run.running], [1, true])
    run.request()
    run.request()
    run.request()
    assert.equal(state.started, 1, 'not two at once')
    await end()
    assert.equal(state.started, 2, 'one more run for the three asks')
    assert.equal(idle, 0)
    await end()
    assert.deepEqual([state.started, state.mostAtOnce, run.running, idle], [2, 1, false, 1])
  })

  it('counts an ask made by the work itself as made during the run', async () => {
    let runs = 0
    const run: CoalescingRun = new CoalescingRun(async () => {
      runs++
      if (runs === 1) run.request()
    })
    run.request()
    await run.whenIdle()
    assert.equal(runs, 2)
  })

  it('runs again when asked after a run ended', async () => {
    const { work, state, end } = handRun()
    const run = new CoalescingRun(work)
    run.request()
    await end()
    assert.equal(run.running, false)
    run.request()
    assert.equal(state.started, 2)
    await end()
  })

  it('stops at a failure: the asks made during the failed run are dropped, and the failure told', async () => {
    const { work, state, end } = handRun()
    const failures: unknown[] = []
    let idle = 0
    const run = new CoalescingRun(work, { onError: err => failures.push(err), onIdle: () => idle++ })
    run.request()
    run.request()
    await end(new Error('node away'))
    assert.deepEqual([state.started, run.running, idle], [1, false, 0])
    assert.deepEqual(failures.map(err => (err as Error).message), ['node away'])
    run.request()
    assert.equal(state.started, 2, 'asked again after the failure, it runs')
    await end()
    assert.equal(idle, 1)
  })

  it('runs nothing more once closed, tells nothing of the run in flight, and its close waits for that run', async () => {
    const { work, state, end } = handRun()
    const told: string[] = []
    const run = new CoalescingRun(work, { onIdle: () => told.push('idle'), onError: () => told.push('error') })
    run.request()
    run.request()
    let closed = false
    const closing = run.close().then(() => { closed = true })
    await Promise.resolve()
    assert.equal(closed, false, 'the run in flight is not over')
    await end(new Error('aborted by the close'))
    await closing
    run.request()
    assert.deepEqual([state.started, run.running, told], [1, false, []])
  })
})
