/**
 * Payouts and refunds (docs/payouts.md), on when PAYOUT_KEY_FILE names the app's hot wallet:
 * `app.payouts` for the app's code, the operators' routes (with ADMIN_TOKEN), the wallet's address
 * and balance in /readyz and the metrics. The payouts' store is on the service's database, opened
 * at ready; open payouts are checked at every block, every PAYOUT_CHECK_INTERVAL_S, and at once
 * after a start (what a crash left `pending` is broadcast again), by one instance at a time: the
 * `payouts` lease on a database server, always this process on the embedded database.
 */
import fp from 'fastify-plugin'
import { parseNodeList, REAL_TIMERS, DUST_THRESHOLD_SAT, type Timers } from 'pocketnet-client'
import { ALWAYS_HELD, watcherLease, type WatcherTurn } from '../payments/watcher-turn.js'
import { WEBHOOK_CONSUMER } from '../payments/webhook-sender.js'
import { readHotWallet } from './hot-wallet.js'
import { registerPayoutMetrics } from './payout-metrics.js'
import { PayoutNode } from './payout-node.js'
import { PayoutStore } from './payout-store.js'
import { PayoutsService } from './payouts-service.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Undefined while payouts are off (no PAYOUT_KEY_FILE). */
    payouts: PayoutsService | undefined
  }
}

export const PAYOUTS_LEASE_NAME = 'payouts'

export interface PayoutsPluginOptions {
  /** Milliseconds since the epoch (tests). */
  now?: (() => number) | undefined
  /** The checks' timer and the lease's (tests). */
  timers?: Timers | undefined
}

export default fp<PayoutsPluginOptions>(async (app, options) => {
  const config = app.miniAppConfig
  if (config.PAYOUT_KEY_FILE === '') {
    app.decorate('payouts', undefined)
    return
  }
  const now = options.now ?? Date.now
  const timers = options.timers ?? REAL_TIMERS
  const wallet = readHotWallet(config.PAYOUT_KEY_FILE, config.POCKETNET_NETWORK)
  const nodesRequired = Math.min(config.PAYMENT_CONFIRM_NODES, parseNodeList(config.POCKETNET_NODES).length)
  const node = new PayoutNode(() => app.pocketnet.get(), { feeFloorSatPerKb: config.PAYOUT_FEE_FLOOR_SAT_PER_KB, nodesRequired, log: app.log })
  let resolveStore!: (store: PayoutStore) => void
  let rejectStore!: (err: unknown) => void
  const opened = new Promise<PayoutStore>((resolve, reject) => { resolveStore = resolve; rejectStore = reject })
  opened.catch(() => {})
  let turn: WatcherTurn = ALWAYS_HELD
  const payouts = new PayoutsService(opened, node, wallet, {
    limits: {
      network: config.POCKETNET_NETWORK,
      dustSat: DUST_THRESHOLD_SAT,
      maxSat: config.PAYOUT_MAX_SAT,
      dailyMaxSat: config.PAYOUT_DAILY_MAX_SAT,
      allowlist: new Set(config.PAYOUT_ALLOWLIST.split(',').map(address => address.trim()).filter(Boolean)),
    },
    confirmations: config.PAYOUT_CONFIRMATIONS,
    checkIntervalMs: config.PAYOUT_CHECK_INTERVAL_S * 1000,
    now,
    timers,
    log: app.log,
    mayCheck: () => turn.held,
  })
  app.decorate('payouts', payouts)
  registerPayoutMetrics(app.metrics.registry, payouts)
  // Blocks come from the events' ingest: the wallet's address is followed whether or not a stream follows it.
  app.events.interests.add(() => [wallet.address])
  app.events.onChainEvent(event => {
    if (event.kind === 'block' || event.kind === 'reorg') payouts.check().catch(() => {})
  })
  app.log.info({ address: wallet.address }, 'Payouts: on, from the hot wallet at this address')

  app.addHook('onReady', async () => {
    const db = await app.database.open().catch((err: unknown) => { rejectStore(err); throw err })
    // The webhook sender runs with payments on and a webhook URL (payments/plugin.ts): it is told of payouts too.
    const webhooks = config.PAYMENT_WEBHOOK_URL !== '' && config.PAYMENT_ADDRESS !== ''
    resolveStore(new PayoutStore(db, now, webhooks ? [WEBHOOK_CONSUMER] : []))
    if (db.kind === 'server') {
      turn = watcherLease({
        db,
        name: PAYOUTS_LEASE_NAME,
        now,
        timers,
        // Taken over from an instance that stopped: its open payouts are checked at once.
        onTakeover: () => { payouts.check().catch(() => {}) },
        onError: err => { app.log.warn({ err: { message: err instanceof Error ? err.message : String(err) } }, 'Payouts: the payouts lease could not be renewed; it is tried again') },
      })
      await turn.start()
    }
    payouts.start()
  })
  app.addHook('onClose', async () => {
    await payouts.close()
    await turn.close()
  })
}, { name: 'payouts', dependencies: ['database', 'events', 'pocketnet-client', 'metrics'] })
