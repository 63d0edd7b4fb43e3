/**
 * Holding the 429s of a client that ignores them. A client refused by the rate limit is told
 * when to come back (Retry-After); one that keeps asking anyway, in a loop or a flood, would
 * otherwise cost a whole answer per request, as fast as it can ask, and that CPU is taken from
 * every other client (bench/hostile.ts). So once a client has been refused `freeRefusals` times
 * in a window, each further refusal of it waits `holdMs` before it is sent: a client asking in a
 * loop on N connections then gets N answers per `holdMs`, however fast it asks.
 *
 * Held answers are bounded, per client and in all: past either bound a refusal is sent at once
 * and closes its connection, so that a client opening more connections pays for a new one each
 * time instead of holding the service's memory.
 */
import { growingLru } from '../growing-lru.js'
import { REAL_TIMERS, type Timers } from 'pocketnet-client'
import { MAX_TRACKED_CLIENTS } from './store.js'

/** What to do with a 429: send it now, hold it (see {@link RefusalHold.hold}), or send it now and close the connection. */
export type RefusalVerdict = 'send' | 'hold' | 'close'

export interface RefusalHoldOptions {
  /** How long a refusal is held; 0 holds none. */
  holdMs: number
  /** Refusals of a client, in one window, sent at once before its next ones are held. */
  freeRefusals?: number
  /** The window in which a client's refusals are counted, in milliseconds (the rate limit's). */
  windowMs: number
  /** Refusals held at once for one client, and in all. */
  maxHeldPerClient?: number
  maxHeld?: number
  /** Milliseconds; only differences are used. */
  clock?: () => number
  /** The hold's timers; default Node's, unreferenced. */
  timers?: Timers
}

interface Refusals {
  count: number
  since: number
}

export class RefusalHold {
  readonly #holdMs: number
  readonly #freeRefusals: number
  readonly #windowMs: number
  readonly #maxHeldPerClient: number
  readonly #maxHeld: number
  readonly #clock: () => number
  readonly #timers: Timers
  readonly #refusals = growingLru<string, Refusals>(MAX_TRACKED_CLIENTS)
  readonly #heldPerClient = new Map<string, number>()
  /** Every held refusal's release, so that a closing service sends them all at once. */
  readonly #releases = new Set<() => void>()

  constructor (options: RefusalHoldOptions) {
    this.#holdMs = options.holdMs
    this.#freeRefusals = options.freeRefusals ?? 10
    this.#windowMs = options.windowMs
    this.#maxHeldPerClient = options.maxHeldPerClient ?? 16
    this.#maxHeld = options.maxHeld ?? 512
    this.#clock = options.clock ?? Date.now
    this.#timers = options.timers ?? REAL_TIMERS
  }

  /** Refusals held now, in all. */
  get held (): number {
    return this.#releases.size
  }

  /** Counts a refusal of client `key` and says what to do with it. */
  refuse (key: string): RefusalVerdict {
    if (this.#holdMs === 0) return 'send'
    const now = this.#clock()
    let refusals = this.#refusals.get(key)
    if (refusals === undefined || now - refusals.since >= this.#windowMs) {
      refusals = { count: 0, since: now }
      this.#refusals.set(key, refusals)
    }
    if (++refusals.count <= this.#freeRefusals) return 'send'
    const heldHere = this.#heldPerClient.get(key) ?? 0
    return heldHere >= this.#maxHeldPerClient || this.#releases.size >= this.#maxHeld ? 'close' : 'hold'
  }

  /**
   * Holds a refusal of `key` (one `refuse` said to hold) for `holdMs`; `release` ends the hold
   * early (its client went away). Either way, `done` is called once.
   */
  hold (key: string, done: () => void): { release: () => void } {
    this.#heldPerClient.set(key, (this.#heldPerClient.get(key) ?? 0) + 1)
    const release = (): void => {
      if (!this.#releases.delete(release)) return
      this.#timers.clearTimeout(timer)
      const left = (this.#heldPerClient.get(key) ?? 1) - 1
      if (left === 0) this.#heldPerClient.delete(key)
      else this.#heldPerClient.set(key, left)
      done()
    }
    const timer = this.#timers.setTimeout(release, this.#holdMs)
    this.#releases.add(release)
    return { release }
  }

  /** Sends every held refusal now (the service is closing). */
  releaseAll (): void {
    for (const release of [...this.#releases]) release()
  }
}
