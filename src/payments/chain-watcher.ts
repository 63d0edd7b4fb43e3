/**
 * The payments watcher: what the node event source reports, turned into checks on chain. A
 * transaction paying a watched receiver is checked at once, on every instance (it is a hint, and
 * recording it is idempotent). A block (or a re-org) re-checks every payment not final and
 * expires invoices past their time: that work is done by the instance whose turn it is (the
 * `payments-watcher` lease, watcher-lease.ts), one re-check at a time, and blocks that come while
 * one runs share the next one. Once a block's payments are handled (the source reports a block,
 * then its transactions, so the next block says they all came), the block is handed to
 * `onBlockHandled`: the durable cursor a restart reads the chain back from (chain-cursor.ts).
 */
import type { ChainEvent } from 'pocketnet-client'
import type { ChainPosition } from './chain-cursor.js'
import type { PaymentsService } from './payments-service.js'
import type { WatcherTurn } from './watcher-lease.js'

export class ChainWatcher {
  readonly #payments: PaymentsService
  readonly #turn: WatcherTurn
  readonly #receivers: readonly string[]
  readonly #failed: (err: Error) => void
  /** The re-check running, or resolved. */
  #work: Promise<void> = Promise.resolve()
  /** A re-check is queued behind the one running (its tip is the newest noted). */
  #queued = false
  #tip: number | undefined
  #closed = false
  /** The last block reported, and the checks of the payments it held, still running or done. */
  #block: ChainPosition | undefined
  #blockPayments: Array<Promise<void>> = []
  /** The last block handed to onBlockHandled, in order: each waits for the one before. */
  #noted: Promise<void> = Promise.resolve()
  readonly #onBlockHandled: (block: ChainPosition) => Promise<void>

  /**
   * @param receivers the addresses whose incoming transactions are checked
   * @param failed a check failed (the node, the database): for logs; the next block tries again
   * @param onBlockHandled a block whose payments were all checked (or failed, and logged)
   */
  constructor (payments: PaymentsService, turn: WatcherTurn, receivers: readonly string[], failed: (err: Error) => void, onBlockHandled: (block: ChainPosition) => Promise<void> = async () => {}) {
    this.#payments = payments
    this.#turn = turn
    this.#receivers = receivers
    this.#failed = failed
    this.#onBlockHandled = onBlockHandled
  }

  onChainEvent (event: ChainEvent): void {
    if (this.#closed) return
    if (event.kind === 'transaction' && this.#receivers.includes(event.address)) this.#blockPayments.push(this.#payments.onPayment(event.txid).then(() => {}, this.#failed))
    if (event.kind === 'block' || event.kind === 'reorg') {
      // The block before this one had all its transactions reported: it is handled once they are.
      const handled = this.#block
      const checks = this.#blockPayments
      this.#blockPayments = []
      this.#block = event.kind === 'block' ? { height: event.height, blockHash: event.blockHash } : undefined
      if (handled !== undefined) this.#noted = Promise.all([this.#noted, ...checks]).then(() => this.#onBlockHandled(handled)).catch(this.#failed)
      this.#tip = event.kind === 'block' ? event.height : event.height - 1
      this.#payments.noteTip(this.#tip)
      if (this.#turn.held) this.recheck()
    }
  }

  /**
   * Re-checks open payments and expires due invoices, after the re-check running if any: on a
   * block, and when this instance takes the watcher's turn (what the last holder may have missed).
   */
  recheck (): void {
    if (this.#closed || this.#queued) return
    this.#queued = true
    this.#work = this.#work.then(async () => {
      this.#queued = false
      // The turn may have passed to another instance while this waited.
      if (!this.#closed && this.#turn.held) await this.#payments.onBlock(this.#tip)
    }).catch(this.#failed)
  }

  /** Stops reacting; resolves once the re-check running, if any, has ended. */
  async close (): Promise<void> {
    this.#closed = true
    await Promise.all([this.#work, this.#noted])
  }

  /** Resolves once no re-check runs or waits (tests). */
  async whenIdle (): Promise<void> {
    let work: Promise<void>
    do {
      work = this.#work
      await work
    } while (work !== this.#work)
  }
}
