/**
 * The payments watcher: what the node event source reports, turned into checks on chain. A
 * transaction paying a watched receiver is recorded as a sighting (payment-sightings.ts) at once,
 * on every instance (recording it twice changes nothing), and read by the sighting reader until
 * the node's answer is read: a read that fails is tried again, never forgotten. A block (or a
 * re-org) re-checks every payment not final and expires invoices past their time: that work is
 * done by the instance whose turn it is (the `payments-watcher` lease, watcher-turn.ts), one
 * re-check at a time, and blocks that come while one runs share the next one. Once a block's
 * payments are recorded as sightings (the source reports a block, then its transactions, so the
 * next block says they all came), the block is handed to `onBlockHandled`: the durable cursor a
 * restart reads the chain back from (chain-cursor.ts). A sighting that could not be written holds
 * the cursor back until it is.
 */
import { CoalescingRun, type BlockPosition, type ChainEvent } from 'pocketnet-client'
import type { PaymentSightings } from './payment-sightings.js'
import type { PaymentsService } from './payments-service.js'
import type { WatcherTurn } from './watcher-turn.js'

export interface ChainWatcherOptions {
  payments: Pick<PaymentsService, 'noteTip' | 'onBlock'>
  turn: WatcherTurn
  /** The addresses whose incoming transactions are payments to read. */
  receivers: readonly string[]
  sightings: Pick<PaymentSightings, 'note'>
  /** Sightings were written: the reader has work (sighting-reader.ts). */
  sighted: () => void
  /** A check or a write failed (the node, the database): for logs; it is tried again. */
  failed: (err: Error) => void
  /** A block whose payments were all recorded. */
  onBlockHandled?: (block: BlockPosition) => Promise<void>
}

export class ChainWatcher {
  readonly #payments: ChainWatcherOptions['payments']
  readonly #turn: WatcherTurn
  readonly #receivers: readonly string[]
  readonly #sightings: ChainWatcherOptions['sightings']
  readonly #sighted: () => void
  readonly #failed: (err: Error) => void
  readonly #onBlockHandled: (block: BlockPosition) => Promise<void>
  /** The re-check running, or resolved. */
  /** The re-checks: one at a time, one more after it when asked meanwhile. */
  readonly #rechecks: CoalescingRun
  /** A re-check is queued behind the one running (its tip is the newest noted). */
  #tip: number | undefined
  #closed = false
  /** The last block reported, whose payments are still coming. */
  #block: BlockPosition | undefined
  /** Payments reported and not written as sightings yet (a write that failed puts its txids back). */
  #unrecorded: string[] = []
  /** The writes of sightings, one after another: a block is handled once the writes before it ended. */
  #recording: Promise<void> = Promise.resolve()
  /** The last block handed to onBlockHandled, in order: each waits for the one before. */
  #noted: Promise<void> = Promise.resolve()

  constructor (options: ChainWatcherOptions) {
    this.#payments = options.payments
    this.#turn = options.turn
    this.#receivers = options.receivers
    this.#sightings = options.sightings
    this.#sighted = options.sighted
    this.#failed = options.failed
    this.#onBlockHandled = options.onBlockHandled ?? (async () => {})
    this.#rechecks = new CoalescingRun(async () => {
      // The turn may have passed to another instance while this waited.
      if (!this.#closed && this.#turn.held) await this.#payments.onBlock(this.#tip)
    }, { onError: err => { this.#failed(err as Error) } })
  }

  onChainEvent (event: ChainEvent): void {
    if (this.#closed) return
    if (event.kind === 'transaction' && this.#receivers.includes(event.address)) {
      this.#unrecorded.push(event.txid)
      this.#record().catch(this.#failed)
    }
    if (event.kind === 'block' || event.kind === 'reorg') {
      // The block before this one had all its transactions reported: it is handled once they are written.
      const handled = this.#block
      this.#block = event.kind === 'block' ? { height: event.height, blockHash: event.blockHash } : undefined
      if (handled !== undefined) this.#noted = this.#noted.then(() => this.#record()).then(() => this.#onBlockHandled(handled)).catch(this.#failed)
      this.#tip = event.kind === 'block' ? event.height : event.height - 1
      this.#payments.noteTip(this.#tip)
      if (this.#turn.held) this.recheck()
    }
  }

  /**
   * Writes the payments reported so far as sightings, after the writes before; rejects when this
   * write failed (its txids are kept for the next one).
   */
  #record (): Promise<void> {
    const written = this.#recording.then(async () => {
      const txids = this.#unrecorded
      if (txids.length === 0) return
      this.#unrecorded = []
      try {
        await this.#sightings.note(txids)
      } catch (err) {
        this.#unrecorded = [...txids, ...this.#unrecorded]
        throw err
      }
      this.#sighted()
    })
    this.#recording = written.catch(() => {})
    return written
  }

  /**
   * Re-checks open payments and expires due invoices, after the re-check running if any: on a
   * block, and when this instance takes the watcher's turn (what the last holder may have missed).
   */
  recheck (): void {
    if (!this.#closed) this.#rechecks.request()
  }

  /** Stops reacting; resolves once the re-check running, if any, has ended. */
  async close (): Promise<void> {
    this.#closed = true
    await Promise.all([this.#rechecks.close(), this.#noted, this.#recording])
  }

  /** Resolves once no re-check runs or waits (tests). */
  whenIdle (): Promise<void> {
    return this.#rechecks.whenIdle()
  }
}
