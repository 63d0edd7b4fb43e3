/**
 * Syncing the chain alone (chain-sync.ts), by its states: `idle`, `reading`, `waitingToRetry`,
 * `closed`. The client is a stand-in answering from an emulator chain in process, whose calls the
 * test can hold until it lets them go, or fail; the retry's timer runs on a clock moved by hand.
 * How the whole source reads (re-orgs, gaps, notifications) is in catch-up.test.ts.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ChainHistory } from '../../../devnode/server.js'
import { getLastBlocks } from '../../../devnode/methods/events.js'
import { ChainSync, type SyncState } from '../../../packages/pocketnet-client/events/chain-sync.js'
import { resolveSourceOptions } from '../../../packages/pocketnet-client/events/source-options.js'
import type { ChainEvent, EventSourceClient, NodeEventError } from '../../../packages/pocketnet-client/index.js'
import { manualClock } from '../../helpers/manual-clock.js'
import { waitFor } from '../../helpers/wait-for.js'

function standIn (chain: ChainHistory) {
  const calls: unknown[][] = []
  const state = { hold: false, failures: 0, inFlight: 0, mostAtOnce: 0 }
  const held: Array<() => void> = []
  const api: EventSourceClient = {
    nodes: () => [],
    bestHeight: undefined,
    async callRaw (method, params = [], options) {
      assert.equal(method, 'getlastblocks')
      calls.push(params)
      state.inFlight++
      state.mostAtOnce = Math.max(state.mostAtOnce, state.inFlight)
      try {
        if (state.hold) {
          await new Promise<void>((resolve, reject) => {
            held.push(resolve)
            options?.signal?.addEventListener('abort', () => reject(options.signal?.reason))
          })
        }
        if (state.failures > 0) {
          state.failures--
          throw new Error('node 1 failed: connection reset')
        }
        return getLastBlocks(chain, params)
      } finally {
        state.inFlight--
      }
    },
  }
  /** Lets the oldest call held go on. */
  const release = (): void => {
    const next = held.shift()
    assert.ok(next, 'a call is held')
    next()
  }
  return { api, calls, state, held, release }
}

function sync (api: EventSourceClient) {
  const clock = manualClock()
  const events: ChainEvent[] = []
  const errors: NodeEventError[] = []
  const options = resolveSourceOptions({ api, onEvent: event => events.push(event), timers: clock.timers, clock: clock.now, retryDelayMs: 300 })
  const chainSync = new ChainSync(options, err => errors.push(err))
  /** Each state it was seen in, whenever the test looked. */
  const seen: SyncState[] = [chainSync.state]
  const look = (): SyncState => {
    if (seen.at(-1) !== chainSync.state) seen.push(chainSync.state)
    return chainSync.state
  }
  const until = (state: SyncState): Promise<void> => waitFor(`the sync ${state}`, () => look() === state)
  return { clock, events, errors, chainSync, seen, look, until }
}

const heights = (events: ChainEvent[]): number[] => events.map(event => event.height)

describe('syncing the chain', () => {
  it('is idle until asked, reads the tip, and is idle again', async () => {
    const chain = new ChainHistory({ height: 100 })
    const { api, calls } = standIn(chain)
    const { events, chainSync, seen, look, until } = sync(api)
    assert.equal(look(), 'idle')
    assert.equal(calls.length, 0, 'nothing read before it is asked')
    chainSync.read()
    assert.equal(look(), 'reading')
    await until('idle')
    assert.deepEqual(seen, ['idle', 'reading', 'idle'])
    assert.deepEqual(heights(events), [100])
    assert.deepEqual(chainSync.tip, { height: 100, blockHash: chain.block(100)?.hash })
  })

  it('reads once more after the read in flight when asked during it, however often, and never two reads at once', async () => {
    const chain = new ChainHistory({ height: 100 })
    const { api, calls, state, release } = standIn(chain)
    const { events, chainSync, look, until } = sync(api)
    chainSync.read()
    await until('idle')
    calls.length = 0

    // Asked once, nothing meanwhile: one read of where the chain ends.
    state.hold = true
    chainSync.read()
    await waitFor('the read in flight', () => calls.length === 1)
    release()
    await until('idle')
    assert.equal(calls.length, 1)

    // Asked three times more while it reads: one more read after it, not three, never two at once.
    calls.length = 0
    chainSync.read()
    await waitFor('the read in flight', () => calls.length === 1)
    chain.mine()
    chainSync.read()
    chainSync.read(101)
    chainSync.read()
    assert.deepEqual([calls.length, look()], [1, 'reading'])
    release()
    await waitFor('the read asked meanwhile', () => calls.length === 2)
    assert.equal(look(), 'reading')
    release()
    await until('idle')
    assert.deepEqual([calls.length, state.mostAtOnce], [2, 1])
    // The first read, let go after block 101 was mined, found it already; the second, where the chain ends.
    assert.deepEqual(calls, [[3, -1], [3, -1]])
    assert.deepEqual(heights(events), [100, 101])
  })

  it('waits retryDelayMs after a failed read, reporting it, then reads again', async () => {
    const chain = new ChainHistory({ height: 100 })
    const { api, calls, state } = standIn(chain)
    const { clock, events, errors, chainSync, seen, until } = sync(api)
    state.failures = 1
    chainSync.read()
    await until('waitingToRetry')
    assert.deepEqual(errors.map(err => [err.code, err.message]), [['EVENTS_ERR_CATCH_UP', 'getlastblocks failed: node 1 failed: connection reset']])
    assert.deepEqual([events.length, calls.length, clock.pendingTimers], [0, 1, 1])
    clock.advance(299)
    assert.equal(calls.length, 1, 'not before retryDelayMs')
    clock.advance(1)
    assert.equal(calls.length, 2)
    await until('idle')
    assert.deepEqual(seen, ['idle', 'reading', 'waitingToRetry', 'reading', 'idle'])
    assert.deepEqual(heights(events), [100])
  })

  it('reads at once when asked while waiting to retry, and drops the retry', async () => {
    const chain = new ChainHistory({ height: 100 })
    const { api, calls, state } = standIn(chain)
    const { clock, events, chainSync, until } = sync(api)
    state.failures = 1
    chainSync.read()
    await until('waitingToRetry')
    chainSync.read()
    await until('idle')
    assert.deepEqual([calls.length, clock.pendingTimers], [2, 0])
    clock.advance(300)
    assert.equal(calls.length, 2)
    assert.deepEqual(heights(events), [100])
  })

  it('stops everything once closed: the read in flight, the retry, and any later ask', async () => {
    const chain = new ChainHistory({ height: 100 })
    const { api, calls, state, held } = standIn(chain)
    const { clock, events, errors, chainSync, look } = sync(api)
    state.hold = true
    chainSync.read()
    await waitFor('the read in flight', () => held.length === 1)
    chainSync.close()
    assert.equal(look(), 'closed')
    await waitFor('the call aborted', () => state.inFlight === 0)
    chainSync.read()
    chainSync.noteNodeTip({ node: 'node 1', height: 101, blockHash: 'a'.repeat(64) })
    assert.deepEqual([calls.length, events.length, errors.length, look()], [1, 0, 0, 'closed'])

    // Closed while waiting to retry: the retry goes too.
    const again = standIn(chain)
    const retrying = sync(again.api)
    again.state.failures = 1
    retrying.chainSync.read()
    await retrying.until('waitingToRetry')
    retrying.chainSync.close()
    assert.equal(retrying.clock.pendingTimers, 0)
    retrying.clock.advance(3_600_000)
    assert.deepEqual([again.calls.length, retrying.look()], [1, 'closed'])
    assert.equal(clock.pendingTimers, 0)
  })
})
