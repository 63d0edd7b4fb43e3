/**
 * V8 settings for a long-running server, applied by server.ts before the app is loaded.
 *
 * - Heap growth capped (HEAP_GROWING_PERCENT): V8 lets the heap grow up to four times its live
 *   size between full collections. A service's live data is small (tens of MB) but it
 *   allocates fast, so the peak memory was mostly garbage; a lower growth keeps it near the live
 *   size, for cheap concurrent marking more often.
 * - The shape of `process.nextTick()`'s queue entries kept alive. Node 20 builds each entry as
 *   an object literal with two computed symbol keys, and V8 holds the hidden classes ("maps")
 *   of such an object weakly: a full collection that runs while no entry is queued (most of
 *   them, in a server) drops them, the next entry builds new ones, and after a few collections
 *   the property stores in `nextTick()` have seen too many maps and go through V8's runtime on
 *   every call. Every request queues several entries (streams, sockets); measured with
 *   `--cpu-prof` and `perf`, that made a fast-path answer about 10 % dearer once the first full
 *   collections had run. One entry kept alive keeps its maps alive, and the stores stay on the
 *   fast path. It is caught with an async hook enabled for one `nextTick()` call, then disabled.
 */
import { createHook } from 'node:async_hooks'
import { setFlagsFromString } from 'node:v8'

/** What {@link keepTickShape} holds: one queue entry, for the life of the process. */
const kept: object[] = []

/**
 * Keeps one `process.nextTick()` queue entry alive, and returns it. Idempotent. A Node.js whose
 * async hooks no longer see tick entries gets undefined, not an error: a missed optimization must
 * not stop the server (the test tells).
 */
export function keepTickShape (): object | undefined {
  if (kept[0] === undefined) {
    const hook = createHook({
      init (_asyncId, type, _triggerAsyncId, resource) {
        if (type === 'TickObject' && kept.length === 0) kept.push(resource)
      },
    }).enable()
    try {
      process.nextTick(() => {})
    } finally {
      hook.disable()
    }
  }
  return kept[0]
}

/** Caps the heap's growth between full collections, in percent of its live size; 0 leaves V8's own. */
export function capHeapGrowth (percent: number): void {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`)
}
