/**
 * How many calls one node is given at once, and the calls that wait for it. Pure code with an
 * injected clock and timers (for waiters' deadlines), so it is tested without servers or sleeps.
 *
 * - The limit adapts, as TCP Vegas does: it starts at what the node serves in parallel (a
 *   public node's 4 threads, unless told otherwise) and grows by one per round of answers while calls wait here and the node still
 *   answers as fast as it does unloaded. When its answers slow down, the node is queueing our
 *   calls in its own queue, which we can neither see, order nor shed: the limit shrinks again,
 *   and the next step up waits twice as long. It never exceeds the configured connections per
 *   node.
 * - Calls beyond the limit wait here, earliest deadline first. An attempt's timer starts when
 *   its call leaves this queue: time spent here is never the node's.
 * - Admission: a call is refused at once (load shedding) when its expected wait, from the queue
 *   length and the node's observed answer time, is longer than it can afford: its remaining
 *   deadline less one answer time. During a burst the wait is counted as if the limit went on
 *   growing, as it does while the node keeps its speed; the calls that turn out not to fit are
 *   refused as soon as the node shows its limit.
 * - Sustained overload: once the node's limit is known (a step up was taken back, or it is the
 *   maximum) and the queue has stood for longer than one answer time (CoDel's test), the demand
 *   is not a burst. A call may then wait at most half an answer time, and the backlog
 *   a burst left is cut to that as soon as calls are turned away: a short queue keeps the node
 *   busy, a long one only makes every answer slower (bench/results.md, "Overload").
 */
import type { Cancel } from './cancel.js'
import { REAL_TIMERS, type TimerHandle, type Timers } from './timers.js'

/** A public node's RPC threads (docs/pocketnet-node.md): by default the limit starts here and never goes below. */
export const NODE_THREADS = 4

/**
 * Vegas's thresholds, in calls that the node holds in its own queue beyond the jitter allowance:
 * under one, so that a node far away gets enough calls to keep its threads busy across the round
 * trip, while a call rarely waits where we can neither see, order nor refuse it.
 */
const GROW_BELOW = 0.15
const SHRINK_ABOVE = 0.3
/**
 * A step up that had to be taken back makes the next one wait twice as many rounds, up to this:
 * a node at its knee is not pushed past it every other round.
 */
const MAX_ROUNDS_BEFORE_GROWTH = 64
/**
 * Answer times this much above the unloaded one still count as unloaded: the noise of a busy
 * machine or network, under what one call queued at a node adds (on 4 threads, a fifth call at
 * once makes the average answer a quarter longer). A machine so busy that its noise passes this
 * makes the limit fall, but never below the node's threads.
 */
const JITTER = 0.1
/**
 * Under sustained overload, the longest a call may wait, in answer times: half a round of answers
 * keeps a node's threads busy while new calls arrive faster than it answers, and adds half an
 * answer time, not a whole one, to every answer.
 */
const SUSTAINED_WAIT = 0.5
/** Weight of the newest answer time in a method's average. */
const SMOOTHING = 0.2
/** How long the sustained-overload rule stays on after the queue last stood or refused a call. */
const CONGESTION_HOLD_MIN_MS = 1000
const CONGESTION_HOLD_ANSWERS = 10
/** Answer time assumed before a node has answered anything. */
const UNKNOWN_ANSWER_MS = 1000

/** Why a call got no slot: the queue could not take it, or it waited until it could no longer be answered in time. */
export type OverloadReason = 'full' | 'expired'

/** A call refused by the queue, with how long it would have had to wait and what it could afford. */
export class NoSlot {
  constructor (
    readonly reason: OverloadReason,
    readonly expectedWaitMs: number,
    readonly allowedWaitMs: number,
    readonly waitedMs: number
  ) {}
}

interface Waiter {
  deadline: number
  since: number
  resolve (): void
  /** With a {@link NoSlot}, or the cancel's reason. */
  reject (reason: unknown): void
  timer: TimerHandle | undefined
}

interface AnswerTimes {
  /** The fastest answer seen: the node unloaded. */
  unloadedMs: number
  recentMs: number
}

export interface SlotsSnapshot {
  limit: number
  inFlight: number
  queued: number
  congested: boolean
}

export class NodeSlots {
  readonly #max: number
  readonly #min: number
  readonly #clock: () => number
  readonly #timers: Timers
  readonly #times = new Map<string, AnswerTimes>()
  /** Ordered by deadline. */
  readonly #waiting: Waiter[] = []
  #limit: number
  #inFlight = 0
  #goodAnswers = 0
  #roundsBeforeGrowth = 1
  #lastStep: 'up' | 'down' | undefined
  /** A step up was taken back once: the node showed what it takes, and later probes do not make us forget it. */
  #kneeSeen = false
  /** Average answer time over every method: the node's throughput is `limit / answerMs`. */
  #answerMs: number | undefined
  #standingSince: number | undefined
  #congestedUntil = -Infinity
  /** The fastest answer of any method. */
  #fastestMs = UNKNOWN_ANSWER_MS

  /** `threads`: what the node serves at once, where the limit starts and below which it never goes. */
  constructor (max: number, clock: () => number, threads = NODE_THREADS, timers: Timers = REAL_TIMERS) {
    this.#max = max
    this.#min = Math.min(threads, max)
    this.#limit = this.#min
    this.#clock = clock
    this.#timers = timers
  }

  get limit (): number {
    return this.#limit
  }

  get inFlight (): number {
    return this.#inFlight
  }

  get queued (): number {
    return this.#waiting.length
  }

  /** What a call costs here: the node's average answer time. */
  get answerMs (): number {
    return this.#answerMs ?? UNKNOWN_ANSWER_MS
  }

  /** Whether a call would be sent at once. */
  get free (): boolean {
    return this.#inFlight < this.#limit && this.#waiting.length === 0
  }

  /**
   * How long a new call would wait for a slot, and how long it may: undefined when it would be
   * sent at once.
   */
  expectedWait (deadline: number): { waitMs: number, allowedMs: number } | undefined {
    if (this.free) return undefined
    const now = this.#clock()
    const answerMs = this.answerMs
    const congested = this.#congested(now)
    const waitMs = this.#waitFor(this.#waiting.length + 1)
    const remaining = deadline - now - answerMs
    return { waitMs, allowedMs: congested ? Math.min(remaining, SUSTAINED_WAIT * answerMs) : remaining }
  }

  /** How long the `calls`-th waiting call waits for a slot. */
  #waitFor (calls: number): number {
    return this.#growing
      // The limit may still grow by one per round of answers: count on it, since a call that turns
      // out not to fit leaves the queue, refused, while it could still be answered.
      ? this.#roundsToSend(calls) * this.answerMs
      : calls * this.answerMs / this.#limit
  }

  /**
   * Whether the limit may still grow: neither has a step up had to be taken back (the node
   * showed what it takes) nor is it the maximum.
   */
  get #growing (): boolean {
    return !this.#kneeSeen && this.#limit < this.#max
  }

  /** Rounds of answers until the `calls`-th waiting call is sent, if the limit grows by one each round. */
  #roundsToSend (calls: number): number {
    let rounds = 0
    let sent = 0
    let limit = this.#limit
    while (sent < calls) {
      rounds++
      limit = Math.min(this.#max, limit + 1)
      sent += limit
    }
    return rounds
  }

  /** A health probe's answer time: what a call is expected to cost until calls have answered. */
  noteProbe (answerMs: number): void {
    this.#answerMs ??= answerMs
  }

  /** Takes a slot at once; false if the call would have to wait. */
  tryAcquire (): boolean {
    if (!this.free) return false
    this.#inFlight++
    return true
  }

  /**
   * Waits for a slot until the call could no longer be answered by `deadline`. Resolves with the
   * slot taken; rejects with a {@link NoSlot}, or with the cancel's reason.
   */
  acquire (deadline: number, cancel: Cancel): Promise<void> {
    if (this.tryAcquire()) return Promise.resolve()
    const now = this.#clock()
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { deadline, since: now, resolve, reject, timer: undefined }
      const leave = (): boolean => {
        const index = this.#waiting.indexOf(waiter)
        if (index === -1) return false
        this.#waiting.splice(index, 1)
        this.#timers.clearTimeout(waiter.timer)
        if (this.#waiting.length === 0) this.#standingSince = undefined
        return true
      }
      waiter.resolve = () => { cancel.listen(undefined); resolve() }
      waiter.reject = (reason) => { cancel.listen(undefined); reject(reason) }
      // Refused at the last moment it could still be sent and answered in time; the answer time
      // is looked at again then, since it may have changed while the call waited.
      const expireLater = (): void => {
        waiter.timer = this.#timers.setTimeout(() => {
          const left = deadline - this.#clock() - this.answerMs
          if (left > 0) return expireLater()
          if (leave()) waiter.reject(new NoSlot('expired', this.#clock() - now, left, this.#clock() - now))
        }, Math.max(0, deadline - this.#clock() - this.answerMs))
      }
      expireLater()
      cancel.listen(reason => { if (leave()) reject(reason) })
      this.#insert(waiter)
      if (this.#standingSince === undefined) this.#standingSince = now
    })
  }

  /**
   * Gives a slot back. `answerMs` is the time the node took, for a call it answered (an answer
   * or an RPC error), undefined for one that failed or was abandoned.
   */
  release (method: string, answerMs?: number): void {
    this.#inFlight--
    if (answerMs !== undefined) this.#learn(method, answerMs)
    this.#dispatch()
  }

  snapshot (): SlotsSnapshot {
    return { limit: this.#limit, inFlight: this.#inFlight, queued: this.#waiting.length, congested: this.#congested(this.#clock()) }
  }

  /** Sends every waiting call away with `reason` (the node failed, or the pool is closing). */
  clear (reason: unknown): void {
    for (const waiter of this.#waiting.splice(0)) {
      this.#timers.clearTimeout(waiter.timer)
      waiter.reject(reason)
    }
    this.#standingSince = undefined
  }

  /**
   * Notes that a call was refused for want of room here. Under sustained overload, the overload
   * goes on, and the queue is cut to what a new call may wait.
   */
  noteRefused (): void {
    const now = this.#clock()
    if (!this.#congested(now)) return
    this.#congestedUntil = Math.max(this.#congestedUntil, now + this.#holdMs())
    // Calls are being turned away while older ones wait longer than a new one may: the backlog
    // a burst left at the onset of a sustained overload only makes every answer slow.
    this.#trimTo(now, SUSTAINED_WAIT * this.answerMs)
  }

  #congested (now: number): boolean {
    // While the limit still grows towards the node's, a standing queue is ours, not the node's.
    if (this.#growing) return false
    if (this.#standingSince !== undefined && now - this.#standingSince > this.answerMs) {
      this.#congestedUntil = Math.max(this.#congestedUntil, now + this.#holdMs())
    }
    return now < this.#congestedUntil
  }

  #holdMs (): number {
    return Math.max(CONGESTION_HOLD_MIN_MS, CONGESTION_HOLD_ANSWERS * this.answerMs)
  }

  #insert (waiter: Waiter): void {
    // Deadlines mostly arrive in order: search from the end.
    let index = this.#waiting.length
    while (index > 0 && (this.#waiting[index - 1] as Waiter).deadline > waiter.deadline) index--
    this.#waiting.splice(index, 0, waiter)
  }

  /** Sends waiting calls while slots are free, refusing those that could no longer be answered in time. */
  #dispatch (): void {
    const now = this.#clock()
    while (this.#inFlight < this.#limit && this.#waiting.length > 0) {
      const waiter = this.#waiting.shift() as Waiter
      this.#timers.clearTimeout(waiter.timer)
      if (waiter.deadline - now < this.answerMs) {
        waiter.reject(new NoSlot('expired', now - waiter.since, waiter.deadline - now - this.answerMs, now - waiter.since))
        continue
      }
      this.#inFlight++
      waiter.resolve()
    }
    if (this.#waiting.length === 0) {
      this.#standingSince = undefined
      return
    }
    if (!this.#growing && this.#congested(now)) this.#shedTail(now)
  }

  /** Refuses the calls at the back of the queue until the last one waits at most `allowedMs`. */
  #trimTo (now: number, allowedMs: number): void {
    while (this.#waiting.length > 0) {
      const waitMs = this.#waitFor(this.#waiting.length)
      if (waitMs <= allowedMs) return
      this.#refuseLast(new NoSlot('full', waitMs, allowedMs, now - (this.#waiting.at(-1) as Waiter).since))
    }
  }

  #refuseLast (refusal: NoSlot): void {
    const last = this.#waiting.pop() as Waiter
    this.#timers.clearTimeout(last.timer)
    if (this.#waiting.length === 0) this.#standingSince = undefined
    last.reject(refusal)
  }

  /**
   * Under sustained overload, once the limit no longer grows, the node's throughput is known: the
   * calls at the back of the queue that would wait past their deadline are refused now rather
   * than when it passes. Counted at the node's unloaded speed, the fastest it could go: a call
   * refused here must be one that could not have been answered; one kept in error is refused
   * later, still within its deadline.
   */
  #shedTail (now: number): void {
    const perCall = this.#fastestMs / this.#limit
    while (this.#waiting.length > 0) {
      const last = this.#waiting[this.#waiting.length - 1] as Waiter
      const waitMs = this.#waiting.length * perCall
      const allowedMs = last.deadline - now - this.#fastestMs
      if (waitMs <= allowedMs) return
      this.#refuseLast(new NoSlot('full', waitMs, allowedMs, now - last.since))
    }
  }

  /** Vegas: the calls the node holds in its own queue are about `limit × (1 − unloaded / recent)`. */
  #learn (method: string, answerMs: number): void {
    this.#fastestMs = Math.min(this.#fastestMs, answerMs)
    this.#answerMs = this.#answerMs === undefined ? answerMs : this.#answerMs + SMOOTHING * (answerMs - this.#answerMs)
    let times = this.#times.get(method)
    if (times === undefined) {
      times = { unloadedMs: answerMs, recentMs: answerMs }
      this.#times.set(method, times)
    } else {
      times.unloadedMs = Math.min(times.unloadedMs, answerMs)
      times.recentMs += SMOOTHING * (answerMs - times.recentMs)
    }
    const queuedAtNode = this.#limit * (1 - times.unloadedMs * (1 + JITTER) / Math.max(times.recentMs, Number.MIN_VALUE))
    if (queuedAtNode > SHRINK_ABOVE) {
      if (this.#limit > this.#min) {
        this.#limit--
        this.#kneeSeen = true
        if (this.#lastStep === 'up') this.#roundsBeforeGrowth = Math.min(MAX_ROUNDS_BEFORE_GROWTH, 2 * this.#roundsBeforeGrowth)
        this.#lastStep = 'down'
      }
      this.#goodAnswers = 0
    } else if (queuedAtNode < GROW_BELOW && this.#waiting.length > 0 && ++this.#goodAnswers >= this.#limit * this.#roundsBeforeGrowth) {
      // Only while calls wait: a limit that nothing presses against proves nothing.
      if (this.#limit < this.#max) {
        this.#limit++
        // Two steps up in a row: the node has room, probe at once again.
        if (this.#lastStep === 'up') this.#roundsBeforeGrowth = 1
        this.#lastStep = 'up'
      }
      this.#goodAnswers = 0
    }
  }
}
