/**
 * Outgoing payment webhooks (PAYMENT_WEBHOOK_URL), as Stripe and BTCPay send theirs: each invoice
 * event, and each entitlement granted or revoked (entitlements/entitlement-events.ts), is POSTed
 * as JSON, signed (`X-Payment-Signature: t=…,v1=<HMAC-SHA256>`, pocketnet-client's signWebhook),
 * with its idempotency key, until the receiver answers 2xx. Anything else (another
 * status, a redirect, which is not followed, a timeout, a network error) is a failed attempt.
 * Each attempt is logged in `webhook_deliveries`.
 *
 * What is the sender's own is here: the request, its signature, its timeout, the delivery log,
 * the counts and log lines. The rest is the outbox consumer's (src/outbox/outbox-consumer.ts),
 * as for the app's handlers: events come from the outbox (consumer `webhook`), written in the
 * transaction that made them, so none is lost across a crash; a claim is leased, so an event is
 * sent at least once, maybe twice (the receiver dedupes on `id`); a failed attempt is tried again
 * on the webhook's schedule (webhook-retry.ts), then given up: left undelivered, counted and
 * logged once. Instances claim without taking each other's rows, so no lease is needed to run
 * one sender per instance. The sender wakes when this instance writes an event (`wake()`), when
 * the next retry falls due, and at least every `pollMs`; `close()` aborts the requests in flight
 * and puts their events back, due at once, for the next start.
 */
import { REAL_TIMERS, signWebhook, type Timers } from 'pocketnet-client'
import { OutboxConsumer } from '../outbox/outbox-consumer.js'
import { RetryPolicy, type RetryDecision } from '../outbox/retry-policy.js'
import type { ClaimedEvent, OutboxEvent, PaymentOutbox } from './payment-outbox.js'
import { invoiceView, type InvoiceView } from './payments-service.js'
import type { InvoiceEvent, InvoiceEventType } from './invoice.js'
import { entitlementView, type EntitlementView } from '../entitlements/entitlement-view.js'
import { isEntitlementEvent, type EntitlementEvent, type EntitlementEventType } from '../entitlements/entitlement-events.js'
import { isPayoutEvent, type PayoutEvent, type PayoutEventType } from '../payouts/payout-events.js'
import type { PayoutView } from '../payouts/payout.js'
import { loggableUrl, type WebhookDeliveryLog } from './webhook-deliveries.js'
import { WEBHOOK_RETRY } from './webhook-retry.js'

/** The outbox consumer whose rows the sender delivers. */
export const WEBHOOK_CONSUMER = 'webhook'

export const WEBHOOK_USER_AGENT = 'bastyon-miniapp-backend payment-webhooks/1'

/** The longest snippet of a receiver's refusal kept in the delivery log and the logs. */
export const MAX_RESPONSE_SNIPPET_BYTES = 200

/** What the receiver gets of an invoice's event, as JSON. */
export interface InvoiceWebhookBody {
  /** `<invoiceId>:<sequence>`: the same for every attempt of this event; the receiver dedupes on it. */
  id: string
  type: InvoiceEventType
  invoiceId: string
  sequence: number
  /** When the transition happened (ISO 8601). */
  createdAt: string
  /** The invoice just after it, as the API answers it. */
  invoice: InvoiceView
  /** On the `confirmed` event of an invoice that grants: the grant made with the confirmation. */
  grant?: EntitlementView & { address: string }
}

/** What the receiver gets of a grant or a revocation, as JSON. */
export interface EntitlementWebhookBody {
  /** `grant:<grantId>:granted` or `grant:<grantId>:revoked`: the same for every attempt; the receiver dedupes on it. */
  id: string
  type: EntitlementEventType
  /** When it was granted or revoked (ISO 8601). */
  createdAt: string
  /**
   * Granted: the grant, its end the end of the run it renews. Revoked: what was held until then
   * (the latest grant, the end taken away). `reason`: server code's reason for a grant (null for an
   * invoice's), or why it was revoked.
   */
  entitlement: EntitlementView & { address: string, reason: string | null }
}

/** What the receiver gets of a payout's or a refund's transition, as JSON. */
export interface PayoutWebhookBody {
  /** `payout:<payoutId>:<state>`: the same for every attempt; the receiver dedupes on it. */
  id: string
  type: PayoutEventType
  /** When the payout reached the state (ISO 8601). */
  createdAt: string
  /** The payout as `GET /api/admin/payouts/{id}` answered it then. */
  payout: PayoutView
}

export type WebhookBody = InvoiceWebhookBody | EntitlementWebhookBody | PayoutWebhookBody

export function webhookBody (event: InvoiceEvent): InvoiceWebhookBody
export function webhookBody (event: EntitlementEvent): EntitlementWebhookBody
export function webhookBody (event: PayoutEvent): PayoutWebhookBody
export function webhookBody (event: OutboxEvent): WebhookBody
export function webhookBody (event: OutboxEvent): WebhookBody {
  if (isPayoutEvent(event)) return { id: event.idempotencyKey, type: event.type, createdAt: new Date(event.createdAtMs).toISOString(), payout: event.payout }
  if (isEntitlementEvent(event)) {
    return {
      id: event.idempotencyKey,
      type: event.type,
      createdAt: new Date(event.createdAtMs).toISOString(),
      entitlement: { address: event.address, ...entitlementView(event), reason: event.reason },
    }
  }
  return {
    id: event.idempotencyKey,
    type: event.type,
    invoiceId: event.invoiceId,
    sequence: event.sequence,
    createdAt: new Date(event.createdAtMs).toISOString(),
    invoice: invoiceView(event.invoice),
    ...(event.grant === undefined ? {} : { grant: { address: event.grant.address, ...entitlementView(event.grant) } }),
  }
}

/** The logger's part the sender uses (pino's signature). */
export interface SenderLog {
  info (fields: object, message: string): void
  warn (fields: object, message: string): void
  error (fields: object, message: string): void
}

export interface WebhookSenderOptions {
  outbox: PaymentOutbox
  deliveries: WebhookDeliveryLog
  /** http(s)://…; credentials in it are sent as Basic authorization. */
  url: string
  /** The HMAC key; never logged, never stored. */
  secret: string
  /** How long one attempt may take, answer included. */
  timeoutMs: number
  log: SenderLog
  /** Attempts before an event is given up. Default the schedule's ({@link WEBHOOK_RETRY}: 12). */
  maxAttempts?: number
  /** Milliseconds since the epoch: retry times, the signature's timestamp, the delivery log. Default Date.now. */
  now?: () => number
  /** Default REAL_TIMERS. */
  timers?: Timers
  /** In [0, 1), for the retries' jitter. Default Math.random. */
  random?: () => number
  /** The longest the sender sleeps between looks at the outbox. Default 60 s. */
  pollMs?: number
  /** Events sent at once, at most. Default 8. */
  batchSize?: number
}

/** What the sender did since it started: the metrics read it. */
export interface WebhookCounts {
  delivered: number
  /** Attempts that failed (each one, retried or not). */
  failed: number
  givenUp: number
}

/** Why an attempt's request was aborted. */
type AbortReason = 'timeout' | 'shutdown'

interface AttemptOutcome {
  delivered: boolean
  statusCode: number | null
  error: string | null
}

/** An attempt the receiver did not take: what the delivery log and the log lines say of it. */
class WebhookAttemptFailed extends Error {
  readonly statusCode: number | null

  constructor (outcome: AttemptOutcome) {
    super(outcome.error ?? 'not delivered')
    this.name = 'WebhookAttemptFailed'
    this.statusCode = outcome.statusCode
  }
}

export class WebhookSender {
  readonly counts: WebhookCounts = { delivered: 0, failed: 0, givenUp: 0 }
  readonly #deliveries: WebhookDeliveryLog
  readonly #target: string
  readonly #authorization: string | undefined
  readonly #loggedUrl: string
  readonly #secret: string
  readonly #timeoutMs: number
  readonly #log: SenderLog
  readonly #now: () => number
  readonly #timers: Timers
  readonly #consumer: OutboxConsumer<ClaimedEvent>

  constructor (options: WebhookSenderOptions) {
    const target = new URL(options.url)
    if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new TypeError('the webhook URL must be http(s)://')
    if (typeof options.secret !== 'string' || options.secret === '') throw new TypeError('the webhook secret must be a non-empty string')
    this.#authorization = target.username === '' && target.password === ''
      ? undefined
      : `Basic ${Buffer.from(`${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`).toString('base64')}`
    target.username = ''
    target.password = ''
    this.#target = target.href
    this.#loggedUrl = loggableUrl(options.url)
    this.#deliveries = options.deliveries
    this.#secret = options.secret
    this.#timeoutMs = options.timeoutMs
    this.#log = options.log
    this.#now = options.now ?? Date.now
    this.#timers = options.timers ?? REAL_TIMERS
    this.#consumer = new OutboxConsumer({
      consumer: WEBHOOK_CONSUMER,
      outbox: options.outbox,
      handle: (event, shutdown) => this.#send(event, shutdown),
      retry: new RetryPolicy({ ...WEBHOOK_RETRY, maxAttempts: options.maxAttempts ?? WEBHOOK_RETRY.maxAttempts }, options.random ?? Math.random),
      batchSize: options.batchSize ?? 8,
      // Each event is its own POST: a batch goes out at once.
      inParallel: true,
      // The lease outlasts the attempt and its bookkeeping: no other instance takes the event meanwhile.
      leaseMs: this.#timeoutMs + 60_000,
      pollMs: options.pollMs ?? 60_000,
      now: this.#now,
      timers: this.#timers,
      onDelivered: () => { this.counts.delivered++ },
      onFailed: (event, err, decision) => { this.#failed(event, err, decision) },
      onPutBack: event => {
        this.#log.info(this.#logged(event), 'Payments: a webhook attempt was cut short by the shutdown; the event is sent again at the next start')
      },
      onOutboxError: (err, event) => {
        if (event === undefined) this.#log.warn({ err: describeError(err) }, 'Payments: the webhook sender could not read the outbox; it tries again later')
        else this.#log.warn({ ...this.#logged(event), err: describeError(err) }, 'Payments: a webhook attempt could not be recorded; the event is tried again once its claim lapses')
      },
    })
  }

  /** Where webhooks go, as logged: no credentials, no query. */
  get url (): string {
    return this.#loggedUrl
  }

  /** Sends what is due now, then sleeps until the next retry falls due; called during a pass, another follows it. */
  wake (): void {
    this.#consumer.wake()
  }

  /** Resolves once no pass runs and the next wake is set (tests: before moving the clock). */
  async whenIdle (): Promise<void> {
    await this.#consumer.whenIdle()
  }

  /** Stops: no new attempt, the ones in flight aborted and their events put back, due at once. */
  async close (): Promise<void> {
    await this.#consumer.close()
  }

  /** One attempt, logged in `webhook_deliveries`: resolves when the receiver took it, throws when not. */
  async #send (event: ClaimedEvent, shutdown: AbortSignal): Promise<void> {
    const body = JSON.stringify(webhookBody(event))
    const row = await this.#deliveries.start(event.id, this.#loggedUrl, event.attempts, this.#now())
    const outcome = await this.#post(body, event.idempotencyKey, shutdown)
    await this.#deliveries.finish(row, { finishedAtMs: this.#now(), statusCode: outcome.statusCode, error: outcome.error })
    if (!outcome.delivered) throw new WebhookAttemptFailed(outcome)
  }

  #failed (event: ClaimedEvent, err: unknown, decision: RetryDecision): void {
    this.counts.failed++
    // The receiver's refusal, or (rarely) the delivery log's database failing around the attempt.
    const why = err instanceof WebhookAttemptFailed ? { statusCode: err.statusCode, error: err.message } : { statusCode: null, error: `not recorded: ${describeError(err).message}` }
    if (decision.giveUp) {
      this.counts.givenUp++
      this.#log.error({ ...this.#logged(event), ...why }, 'Payments: a webhook was given up after its last attempt; the event stays undelivered')
      return
    }
    this.#log.warn({ ...this.#logged(event), ...why, retryInMs: decision.retryInMs }, 'Payments: a webhook attempt failed; it is tried again later')
  }

  #logged (event: ClaimedEvent): { eventId: number, idempotencyKey: string, attempt: number, url: string } {
    return { eventId: event.id, idempotencyKey: event.idempotencyKey, attempt: event.attempts, url: this.#loggedUrl }
  }

  /** One POST: 2xx delivers; the answer's body is read only for a bounded snippet of a refusal. */
  async #post (body: string, idempotencyKey: string, shutdown: AbortSignal): Promise<AttemptOutcome> {
    const controller = new AbortController()
    const timeout = this.#timers.setTimeout(() => controller.abort('timeout' satisfies AbortReason), this.#timeoutMs)
    const onShutdown = (): void => { controller.abort('shutdown' satisfies AbortReason) }
    if (shutdown.aborted) onShutdown()
    else shutdown.addEventListener('abort', onShutdown, { once: true })
    try {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'user-agent': WEBHOOK_USER_AGENT,
        'idempotency-key': idempotencyKey,
        'x-payment-signature': signWebhook(this.#secret, body, Math.floor(this.#now() / 1000)),
      }
      if (this.#authorization !== undefined) headers.authorization = this.#authorization
      const response = await fetch(this.#target, { method: 'POST', headers, body, redirect: 'manual', signal: controller.signal })
      const delivered = response.status >= 200 && response.status < 300
      const snippet = delivered ? (await response.body?.cancel().catch(() => {}), '') : this.#redact(await readSnippet(response))
      return { delivered, statusCode: response.status, error: delivered ? null : `answered ${response.status}${snippet === '' ? '' : `: ${JSON.stringify(snippet)}`}` }
    } catch (err) {
      const reason = controller.signal.aborted ? controller.signal.reason as AbortReason : undefined
      if (reason === 'timeout') return { delivered: false, statusCode: null, error: `no answer within ${this.#timeoutMs} ms` }
      if (reason === 'shutdown') return { delivered: false, statusCode: null, error: 'cut short: the service shut down' }
      return { delivered: false, statusCode: null, error: `network error: ${networkErrorText(err)}` }
    } finally {
      this.#timers.clearTimeout(timeout)
      shutdown.removeEventListener('abort', onShutdown)
    }
  }

  /** A receiver's answer could quote the secret back: it is never stored or logged. */
  #redact (text: string): string {
    return text.replaceAll(this.#secret, '[secret]')
  }
}

/** The first bytes of the answer, as text on one line; the rest is not read. */
async function readSnippet (response: Response): Promise<string> {
  if (response.body === null) return ''
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  try {
    while (size < MAX_RESPONSE_SNIPPET_BYTES) {
      const { done, value } = await reader.read()
      if (done) break
      chunks.push(value)
      size += value.byteLength
    }
  } catch {
    // An answer cut short still has its status: the snippet is what came.
  } finally {
    await reader.cancel().catch(() => {})
  }
  // eslint-disable-next-line no-control-regex
  return Buffer.concat(chunks).subarray(0, MAX_RESPONSE_SNIPPET_BYTES).toString('utf8').replace(/[\u0000-\u001f\u007f]+/g, ' ').trim()
}

/** fetch's "fetch failed" says nothing: its cause's code (ECONNREFUSED …) does. */
function networkErrorText (err: unknown): string {
  const cause = (err as { cause?: { code?: unknown, message?: unknown } } | null)?.cause
  if (typeof cause?.code === 'string') return cause.code
  if (typeof cause?.message === 'string') return cause.message.slice(0, 120)
  return err instanceof Error ? err.message.slice(0, 120) : 'unknown'
}

function describeError (err: unknown): { message: string, code?: unknown } {
  return { message: err instanceof Error ? err.message : String(err), code: (err as { code?: unknown } | null)?.code }
}
