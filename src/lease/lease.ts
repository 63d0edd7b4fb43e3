/**
 * A named lease that one instance at a time holds, for work that only one of several should do
 * (the payments watcher's per-block re-check, the events ingest). The lease is kept in a store
 * (lease-store.ts: PostgreSQL's `leases` table or a Redis key) that lets it lapse by itself, so
 * an instance that dies without a word stops holding it and another takes it.
 *
 * Its states, in the order an instance meets them:
 *
 * - `waiting`: started; the store has not answered yet. Asked again soon (every 250 ms at most),
 *   since a store reached in the background at start (Redis) may not be connected yet.
 * - `held`: the store's last answer gave this instance the lease. Asked again every third of the
 *   time to live, which renews it.
 * - `heldElsewhere`: the store's last answer said another instance holds it. Asked again every
 *   third of the time to live, which takes it once the other's lapsed or was released.
 * - `unreachable`: the store has not answered for a whole time to live, counted from when the last
 *   answered question was asked: a lease of this instance's may have lapsed, and another's can no
 *   longer be seen. Asked again every third of the time to live; the next answer makes it `held`
 *   or `heldElsewhere`.
 * - `closed`: close() was called. Nothing is asked any more, and a lease this instance may hold
 *   is released, so that another need not wait for it to lapse.
 *
 * Each change is told to `onChange`, in order. Time is the injected timers' (tests move them by
 * hand): a timer for the next question, and one for the deadline of the last answer.
 */
import { REAL_TIMERS, type TimerHandle, type Timers } from 'pocketnet-client'
import type { LeaseStore } from './lease-store.js'

export type LeaseState = 'waiting' | 'held' | 'heldElsewhere' | 'unreachable' | 'closed'

export interface LeaseOptions {
  store: LeaseStore
  /** What the lease is for, such as `payments-watcher`: its row or key in the store. */
  name: string
  /** Who asks: unique per instance (a random id per process). */
  holder: string
  /** How long the lease outlives a holder that stopped renewing it, in milliseconds; renewed every third of it. */
  ttlMs: number
  /** Default REAL_TIMERS. */
  timers?: Timers
  /** Each change of state, in order. */
  onChange?: (state: LeaseState, previous: LeaseState) => void
  /** A store that rejected (a database error; the lease counts it as no answer), or an onChange that threw: for logs. */
  onError?: (error: unknown) => void
}

/** Until the store first answers, it is asked at least this often. */
const FIRST_ANSWER_RETRY_MS = 250

export class Lease {
  readonly name: string
  readonly holder: string
  readonly ttlMs: number
  readonly #store: LeaseStore
  readonly #timers: Timers
  readonly #onChange: (state: LeaseState, previous: LeaseState) => void
  readonly #onError: (error: unknown) => void
  #state: LeaseState = 'waiting'
  /** Whether the store may hold this instance's lease: set before each question, since one unanswered may still have been applied. */
  #mayHold = false
  #nextQuestion: TimerHandle | undefined
  /** Fires a whole time to live after the last answered question was asked (or the start). */
  #deadline: TimerHandle | undefined
  /** The question being asked, and the next one set after it. */
  #asking: Promise<void> | undefined
  #started = false
  #closing: Promise<void> | undefined

  constructor (options: LeaseOptions) {
    if (!Number.isSafeInteger(options.ttlMs) || options.ttlMs < 3) throw new TypeError('ttlMs must be a whole number of milliseconds, at least 3')
    this.name = options.name
    this.holder = options.holder
    this.ttlMs = options.ttlMs
    this.#store = options.store
    this.#timers = options.timers ?? REAL_TIMERS
    this.#onChange = options.onChange ?? (() => {})
    this.#onError = options.onError ?? (() => {})
  }

  get state (): LeaseState {
    return this.#state
  }

  /** Whether this instance holds the lease now. */
  get held (): boolean {
    return this.#state === 'held'
  }

  /** Asks the store for the lease, and resolves once it answered (or not); then goes on by itself. */
  async start (): Promise<void> {
    if (this.#started || this.#closing !== undefined) return
    this.#started = true
    // Silence is counted from the start until the store first answers.
    const first = this.#deadline = this.#timers.setTimeout(() => { this.#noAnswerFor(first) }, this.ttlMs)
    await this.#ask()
  }

  /** Stops asking, then releases the lease if this instance may hold it. Resolves once released (or the store did not answer). */
  close (): Promise<void> {
    this.#closing ??= this.#close()
    return this.#closing
  }

  /** Resolves once no question is being asked (tests: before moving the clock on). */
  async whenIdle (): Promise<void> {
    await this.#asking
  }

  async #close (): Promise<void> {
    this.#timers.clearTimeout(this.#nextQuestion)
    this.#timers.clearTimeout(this.#deadline)
    await this.#asking
    this.#become('closed')
    if (!this.#mayHold) return
    try {
      await this.#store.release(this.name, this.holder)
    } catch (error) {
      this.#onError(error)
    }
  }

  /** One question, then the next one set: both inside `#asking`, so that whenIdle() sees the timer set. Never rejects. */
  #ask (): Promise<void> {
    const asking: Promise<void> = this.#askOnce().then(() => {
      if (this.#closing !== undefined) return
      const everyThird = Math.max(1, Math.floor(this.ttlMs / 3))
      const delayMs = this.#state === 'waiting' ? Math.min(FIRST_ANSWER_RETRY_MS, everyThird) : everyThird
      this.#nextQuestion = this.#timers.setTimeout(() => { this.#ask() }, delayMs)
    }).catch(this.#onError).finally(() => { if (this.#asking === asking) this.#asking = undefined })
    this.#asking = asking
    return asking
  }

  async #askOnce (): Promise<void> {
    // Set now, counted from the question: if it is answered, its deadline replaces the last one.
    let late = false
    const deadline = this.#timers.setTimeout(() => {
      late = true
      this.#noAnswerFor(deadline)
    }, this.ttlMs)
    this.#mayHold = true
    let holds: boolean | undefined
    try {
      holds = await this.#store.claim(this.name, this.holder, this.ttlMs)
    } catch (error) {
      this.#onError(error)
    }
    if (holds !== undefined) this.#mayHold = holds
    // An answer that took a whole time to live says nothing about now: a lease it gave has lapsed.
    if (holds === undefined || late || this.#closing !== undefined) {
      this.#timers.clearTimeout(deadline)
      return
    }
    this.#timers.clearTimeout(this.#deadline)
    this.#deadline = deadline
    this.#become(holds ? 'held' : 'heldElsewhere')
  }

  /** A deadline fired: `deadline`, if still the last answer's, passed without another answer. */
  #noAnswerFor (deadline: TimerHandle | undefined): void {
    if (deadline !== this.#deadline || this.#closing !== undefined) return
    this.#become('unreachable')
  }

  #become (state: LeaseState): void {
    const previous = this.#state
    if (state === previous) return
    this.#state = state
    try {
      this.#onChange(state, previous)
    } catch (error) {
      this.#onError(error)
    }
  }
}
