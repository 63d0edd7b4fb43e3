/**
 * One consumer of an outbox: the loop that takes its due rows, hands each to a handler, and
 * records how that went, so that every row is delivered at least once across crashes and
 * instances. What a row means and how it is delivered is the handler's (an app's handlers, a
 * webhook's POST); the loop is the same for every consumer, with one retry rule (retry-policy.ts).
 *
 * Its states, in the order a pass goes through them:
 *
 *   idle ──wake()──▶ claiming ──rows──▶ handling ──batch done──▶ claiming …
 *                        │ nothing due
 *                        ▼
 *                    sleeping ──the next row falls due, the poll interval, wake()──▶ claiming
 *
 *   any state ──close()──▶ closed, once the batch in hand is handled
 *
 * - claiming: due rows are claimed, `batchSize` at a time, each leased for `leaseMs` (a crash
 *   leaves them to be handed out again once the lease lapses; other instances skip them).
 * - handling: each row goes to the handler, one after the other in order, or all at once
 *   (`inParallel`: started a turn of the event loop apart, in flight together). One that succeeds is acknowledged (delivered); one that throws is put back
 *   after the retry policy's delay, or given up once the policy says so.
 * - sleeping: until the next row falls due (`nextDueAt`: a retry, another instance's lease), at
 *   most `pollMs` (rows other instances wrote), or sooner when `wake()` is called (this instance
 *   wrote one). A wake() while claiming or handling runs another pass right after this one.
 * - closed: no new claim. close() aborts the handlers' `signal` and waits for the batch in hand:
 *   a handler that stops on it has its row put back due at once, and rows of the batch not handed
 *   out yet are put back too, for the next start.
 *
 * The database failing (a claim, an acknowledgement) is reported and never stops the loop: what
 * was claimed comes back when its lease lapses, and the next look is after `pollMs`.
 */
import { REAL_TIMERS, type TimerHandle, type Timers } from 'pocketnet-client'
import type { RetryDecision, RetryPolicy } from './retry-policy.js'

/** What a consumer needs of a claimed row. */
export interface OutboxRow {
  id: number
  /** How many times this consumer claimed it, this time included. */
  attempts: number
}

/** The outbox as a consumer works it (PaymentOutbox is one). */
export interface ConsumerOutbox<Row extends OutboxRow> {
  /** Due pending rows of `consumer`, oldest first, leased to the caller for `leaseMs`. */
  claim (consumer: string, options: { limit: number, leaseMs: number }): Promise<Row[]>
  /** Marks the row delivered. */
  ack (consumer: string, id: number): Promise<unknown>
  /**
   * Marks the rows delivered, in one write. Optional: with it, rows of an `inParallel` batch that
   * succeed while an acknowledgement is being written are acknowledged together by the next write,
   * rather than one write each.
   */
  ackMany? (consumer: string, ids: number[]): Promise<unknown>
  /** Makes the row due again `delayMs` from now. */
  retryLater (consumer: string, id: number, delayMs: number): Promise<void>
  /** Marks the row given up: never handed out again, left undelivered. */
  giveUp (consumer: string, id: number): Promise<void>
  /** When the next pending row of `consumer` falls due (epoch milliseconds, maybe past), or undefined. */
  nextDueAt (consumer: string): Promise<number | undefined>
}

export type OutboxConsumerState = 'idle' | 'claiming' | 'handling' | 'sleeping' | 'closed'

export interface OutboxConsumerOptions<Row extends OutboxRow> {
  /** The consumer whose rows this delivers (the outbox's `consumer` column). */
  consumer: string
  outbox: ConsumerOutbox<Row>
  /**
   * Delivers one row: resolves once done, throws when it failed. `signal` aborts when the
   * consumer closes: a handler that stops on it has its row put back, due at once.
   */
  handle: (row: Row, signal: AbortSignal) => Promise<void> | void
  /** When a row that failed is tried again, and when it is given up. */
  retry: RetryPolicy
  /**
   * What to do after `error`, when the failure itself says more than its attempt's number (a
   * refusal that no retry can change, a server that named when to come back). Default: `retry`'s
   * afterFailure(row.attempts).
   */
  decide?: (row: Row, error: unknown, retry: RetryPolicy) => RetryDecision
  /** Rows claimed at once. */
  batchSize: number
  /** Handle a batch's rows all at once (independent deliveries) rather than one after the other, in order. Default false. */
  inParallel?: boolean
  /** How long a claim keeps its rows from other claimers: longer than handling them takes. */
  leaseMs: number
  /** The longest sleep between looks at the outbox. Default 60 s. */
  pollMs?: number
  /** When a row is due but could not be claimed (another instance holds it at that moment): look again after this. Default 1 s. */
  busyRetryMs?: number
  /** Milliseconds since the epoch, as the outbox's times are. Default Date.now. */
  now?: () => number
  /** Default REAL_TIMERS. */
  timers?: Timers
  /** The row was handled and acknowledged. */
  onDelivered?: (row: Row) => void
  /** The handler threw `error`; the row was put back or given up, as `decision` says. */
  onFailed?: (row: Row, error: unknown, decision: RetryDecision) => void
  /** The consumer closed while the row was in hand, and it was put back, due at once. */
  onPutBack?: (row: Row, error: unknown) => void
  /** The outbox failed (`row`: while recording that row's outcome); the loop goes on. */
  onOutboxError?: (error: unknown, row?: Row) => void
}

export class OutboxConsumer<Row extends OutboxRow> {
  readonly #consumer: string
  readonly #outbox: ConsumerOutbox<Row>
  readonly #handle: (row: Row, signal: AbortSignal) => Promise<void> | void
  readonly #retry: RetryPolicy
  readonly #batchSize: number
  readonly #inParallel: boolean
  readonly #leaseMs: number
  readonly #pollMs: number
  readonly #busyRetryMs: number
  readonly #now: () => number
  readonly #timers: Timers
  readonly #options: OutboxConsumerOptions<Row>
  /** Aborted by close(): the handlers' signal. */
  readonly #closing = new AbortController()
  #state: OutboxConsumerState = 'idle'
  /** The pass running (claiming and handling, then setting the sleep), if any. */
  #pass: Promise<void> | undefined
  /** wake() came during a pass: another follows it at once. */
  #wokenDuringPass = false
  /** Acknowledgements asked for while one was being written: the next write takes them all (ackMany). */
  #acksWaiting: Array<{ id: number, written: (error?: unknown) => void }> = []
  #ackWriting = false
  #sleep: TimerHandle | undefined

  constructor (options: OutboxConsumerOptions<Row>) {
    this.#consumer = options.consumer
    this.#outbox = options.outbox
    this.#handle = options.handle
    this.#retry = options.retry
    this.#batchSize = options.batchSize
    this.#inParallel = options.inParallel ?? false
    this.#leaseMs = options.leaseMs
    this.#pollMs = options.pollMs ?? 60_000
    this.#busyRetryMs = options.busyRetryMs ?? 1000
    this.#now = options.now ?? Date.now
    this.#timers = options.timers ?? REAL_TIMERS
    this.#options = options
  }

  get state (): OutboxConsumerState {
    return this.#state
  }

  /** idle or sleeping: claims what is due now. During a pass: another pass follows it. Closed: nothing. */
  wake (): void {
    if (this.#state === 'closed') return
    if (this.#pass !== undefined) {
      this.#wokenDuringPass = true
      return
    }
    this.#timers.clearTimeout(this.#sleep)
    this.#sleep = undefined
    this.#pass = this.#run().finally(() => { this.#pass = undefined })
  }

  /** Resolves once no pass runs, the next wake set (tests: before moving the clock). */
  async whenIdle (): Promise<void> {
    while (this.#pass !== undefined) await this.#pass
  }

  /** Stops: no new claim, the handlers' signal aborted; resolves once the batch in hand is handled or put back. */
  async close (): Promise<void> {
    this.#state = 'closed'
    this.#timers.clearTimeout(this.#sleep)
    this.#sleep = undefined
    this.#closing.abort(new Error(`the outbox consumer ${this.#consumer} closed`))
    await this.whenIdle()
  }

  /** Passes until one ends with no wake() during it, then sleeps. Never throws. */
  async #run (): Promise<void> {
    for (;;) {
      this.#wokenDuringPass = false
      const sleepMs = await this.#claimAndHandle()
      if (this.#closed()) return
      if (this.#wokenDuringPass) continue
      this.#enter('sleeping')
      this.#sleep = this.#timers.setTimeout(() => { this.wake() }, sleepMs)
      return
    }
  }

  /** claiming ⇄ handling until nothing is due; how long to sleep after. */
  async #claimAndHandle (): Promise<number> {
    try {
      for (;;) {
        if (this.#closed()) return this.#pollMs
        this.#enter('claiming')
        const batch = await this.#outbox.claim(this.#consumer, { limit: this.#batchSize, leaseMs: this.#leaseMs })
        if (batch.length === 0) return await this.#untilNextDue()
        this.#enter('handling')
        await this.#handleBatch(batch)
      }
    } catch (err) {
      // The outbox failed: what was claimed comes back when its lease lapses.
      this.#options.onOutboxError?.(err)
      return this.#pollMs
    }
  }

  /** handling: the batch's rows one after the other, in order, or all at once (`inParallel`). */
  async #handleBatch (batch: Row[]): Promise<void> {
    if (this.#inParallel) {
      // Started a turn of the event loop apart: what each start costs (a request built and sent)
      // never adds up to one long stretch that holds the loop, and the service's answers, in a batch.
      const handling: Array<Promise<void>> = []
      for (const row of batch) {
        if (handling.length > 0) await new Promise(resolve => setImmediate(resolve))
        handling.push(this.#handleOne(row))
      }
      await Promise.all(handling)
      return
    }
    for (const row of batch) await this.#handleOne(row)
  }

  /** One row to the handler: acknowledged when it succeeds, to the retry policy when it throws. */
  async #handleOne (row: Row): Promise<void> {
    if (this.#closed()) {
      // Claimed, never handed out: back for the next start, without waiting for the lease.
      await this.#record(row, () => this.#outbox.retryLater(this.#consumer, row.id, 0))
      return
    }
    try {
      await this.#handle(row, this.#closing.signal)
    } catch (err) {
      await this.#failed(row, err)
      return
    }
    if (await this.#record(row, () => this.#ack(row.id))) this.#options.onDelivered?.(row)
  }

  /**
   * Acknowledges a row: at once when no acknowledgement is being written; otherwise with the
   * others that came meanwhile, in the next write (ackMany). A row is acknowledged no later than
   * alone, and a batch pushed at once costs a few writes rather than one a row.
   */
  #ack (id: number): Promise<unknown> {
    if (this.#outbox.ackMany === undefined) return this.#outbox.ack(this.#consumer, id)
    return new Promise<void>((resolve, reject) => {
      this.#acksWaiting.push({ id, written: error => { if (error === undefined) resolve(); else reject(error) } })
      // #writeAcks never rejects.
      if (!this.#ackWriting) this.#writeAcks().catch(() => {})
    })
  }

  /** Writes the waiting acknowledgements, all of them at each write, until none waits. Never throws. */
  async #writeAcks (): Promise<void> {
    this.#ackWriting = true
    while (this.#acksWaiting.length > 0) {
      const acks = this.#acksWaiting.splice(0)
      let failure: unknown
      try {
        await (acks.length === 1 ? this.#outbox.ack(this.#consumer, (acks[0] as { id: number }).id) : this.#outbox.ackMany?.(this.#consumer, acks.map(ack => ack.id)))
      } catch (error) {
        failure = error ?? new Error('the acknowledgement failed')
      }
      for (const ack of acks) ack.written(failure)
    }
    this.#ackWriting = false
  }

  async #failed (row: Row, error: unknown): Promise<void> {
    if (this.#closing.signal.aborted) {
      // Cut short by the shutdown, not refused: due at once after the next start.
      if (await this.#record(row, () => this.#outbox.retryLater(this.#consumer, row.id, 0))) this.#options.onPutBack?.(row, error)
      return
    }
    const decision = this.#options.decide?.(row, error, this.#retry) ?? this.#retry.afterFailure(row.attempts)
    const recorded = await this.#record(row, () => decision.giveUp
      ? this.#outbox.giveUp(this.#consumer, row.id)
      : this.#outbox.retryLater(this.#consumer, row.id, decision.retryInMs))
    if (recorded) this.#options.onFailed?.(row, error, decision)
  }

  /**
   * Writes a row's outcome; false when the outbox failed, which is reported: the row comes back
   * once its lease lapses.
   */
  async #record (row: Row, write: () => Promise<unknown>): Promise<boolean> {
    try {
      await write()
      return true
    } catch (err) {
      this.#options.onOutboxError?.(err, row)
      return false
    }
  }

  /** sleeping: once nothing is due, until the next row falls due, within the poll interval. */
  async #untilNextDue (): Promise<number> {
    const due = await this.#outbox.nextDueAt(this.#consumer)
    if (due === undefined) return this.#pollMs
    const waitMs = due - this.#now()
    // Due already, yet not claimed: another instance held it just then. Soon, not in a busy loop.
    return waitMs > 0 ? Math.min(waitMs, this.#pollMs) : this.#busyRetryMs
  }

  /** Moves to `state`, unless closed: closed is the last state. */
  #enter (state: Exclude<OutboxConsumerState, 'closed'>): void {
    if (this.#state !== 'closed') this.#state = state
  }

  /** A method, not a comparison in place: the state changes across every await. */
  #closed (): boolean {
    return this.#state === 'closed'
  }
}
