/**
 * The payouts' metrics, read when Prometheus scrapes: payouts that reached each state on this
 * instance, satoshi it saw confirmed sent, the payouts not final yet across instances and the age
 * of the oldest (from the database: what an alert watches), and the hot wallet's balance as a
 * node lists it (read at most every 10 s, shared with /readyz).
 */
import { Counter, Gauge, type Registry } from 'prom-client'
import { PAYOUT_STATES } from './payout.js'
import type { PayoutsService } from './payouts-service.js'

export function registerPayoutMetrics (registry: Registry, service: PayoutsService): void {
  const reached = new Counter({
    name: 'payouts_total',
    help: 'Payouts and refunds that reached each state on this instance: pending (signed and stored), broadcast (a node took it), confirmed, failed',
    labelNames: ['state'],
    registers: [registry],
    collect () {
      reached.reset()
      for (const state of PAYOUT_STATES) reached.inc({ state }, service.counts.reached[state])
    },
  })
  const sent = new Counter({
    name: 'payouts_confirmed_satoshi_total',
    help: 'Satoshi of the payouts and refunds this instance saw confirmed (fees not counted)',
    registers: [registry],
    collect () {
      sent.reset()
      sent.inc(service.counts.confirmedSat)
    },
  })
  const open = new Gauge({
    name: 'payouts_open',
    help: 'Payouts and refunds not final yet, across instances, by state: pending (no node took it yet), broadcast (not confirmed yet); absent until the database is open',
    labelNames: ['state'],
    registers: [registry],
    async collect () {
      open.reset()
      try {
        const now = await service.open()
        open.set({ state: 'pending' }, now.pending)
        open.set({ state: 'broadcast' }, now.broadcast)
        oldest.set(now.oldestAgeS)
      } catch {
        // The database is not open (yet): absent rather than zero.
      }
    },
  })
  const oldest = new Gauge({
    name: 'payouts_oldest_open_age_seconds',
    help: 'How long the oldest payout not final yet has waited since it was signed, in seconds (0: none open); alert when it passes a few blocks\' time. Read with payouts_open',
    registers: [registry],
  })
  const balance = new Gauge({
    name: 'payouts_wallet_balance_satoshi',
    help: 'The hot wallet\'s confirmed outputs not spent in a node\'s mempool, in satoshi (absent while no node answers)',
    registers: [registry],
    async collect () {
      balance.reset()
      try {
        balance.set((await service.wallet()).balanceSat)
      } catch {
        // No node answered: absent rather than a made-up value.
      }
    },
  })
}
