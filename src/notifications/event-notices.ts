/**
 * Events worth telling (docs/notifications.md, "Events worth telling"): which of the app's events
 * become a notification, to whom, with what header, path and id. Each kind is off unless the app
 * turns it on (NOTIFY_ON_INVOICE_CONFIRMED, NOTIFY_ON_ENTITLEMENT_GRANTED, NOTIFY_BEFORE_EXPIRY_S).
 * Pure: the outbox consumer (event-notifier.ts) and the expiry scan (expiry-scan.ts) send what
 * this decides. An event's id is fixed by the event, so a second delivery of it is a `duplicate`.
 */
import { isPocketnetAddress, type PocketnetNetwork } from 'pocketnet-client'
import type { AppConfig } from '../config.js'
import type { OutboxEvent } from '../payments/payment-outbox.js'
import type { Invoice } from '../payments/invoice.js'
import type { NotificationInput } from './notification-rules.js'
import type { SendStatus } from './notifications-service.js'

/** The outbox consumer that turns the app's events into notifications. */
export const NOTIFY_CONSUMER = 'notify'

/** What one kind of notice says and where it opens the app. */
export interface NoticeText {
  header: string
  path: string
}

/** The kinds the app turned on; a kind absent is off. */
export interface EventNoticeSettings {
  invoiceConfirmed?: NoticeText
  entitlementGranted?: NoticeText
  /** Told once a time-limited entitlement's end is this close. */
  expiry?: NoticeText & { beforeMs: number }
}

export type NoticeKind = 'invoiceConfirmed' | 'entitlementGranted' | 'expiring'

export const NOTICE_KINDS: readonly NoticeKind[] = ['invoiceConfirmed', 'entitlementGranted', 'expiring']

/** One notification to send, to one address, and what it tells of. */
export interface Notice {
  kind: NoticeKind
  notification: NotificationInput & { to: string }
}

/** The kinds turned on in `config`; none while notifications are off (sign-in off, or NOTIFICATIONS=false). */
export function eventNoticeSettings (config: AppConfig): EventNoticeSettings {
  if (config.BASTYON_APP_ID === '' || !config.NOTIFICATIONS) return {}
  return {
    ...(config.NOTIFY_ON_INVOICE_CONFIRMED ? { invoiceConfirmed: { header: config.NOTIFY_INVOICE_CONFIRMED_HEADER, path: config.NOTIFY_INVOICE_CONFIRMED_PATH } } : {}),
    ...(config.NOTIFY_ON_ENTITLEMENT_GRANTED ? { entitlementGranted: { header: config.NOTIFY_ENTITLEMENT_GRANTED_HEADER, path: config.NOTIFY_ENTITLEMENT_GRANTED_PATH } } : {}),
    ...(config.NOTIFY_BEFORE_EXPIRY_S > 0 ? { expiry: { header: config.NOTIFY_EXPIRY_HEADER, path: config.NOTIFY_EXPIRY_PATH, beforeMs: config.NOTIFY_BEFORE_EXPIRY_S * 1000 } } : {}),
  }
}

/**
 * Who paid the invoice, as far as its confirmation knows: the chain tells only the receiver, so
 * it is the address the invoice grants to (a catalogue purchase: the signed-in buyer), else the
 * address the app put in its metadata as `payer`. Undefined for an invoice with neither (a tip).
 */
export function payerOf (invoice: Invoice, network: PocketnetNetwork): string | undefined {
  if (invoice.grant !== null) return invoice.grant.to
  const payer = invoice.metadata.payer
  return typeof payer === 'string' && isPocketnetAddress(payer, network) ? payer : undefined
}

/** The notice of an outbox event, or undefined when the event is not told (its kind off, no one to tell). */
export function noticeOf (event: OutboxEvent, settings: EventNoticeSettings, network: PocketnetNetwork): Notice | undefined {
  if (event.type === 'entitlementGranted') {
    const text = settings.entitlementGranted
    return text === undefined ? undefined : { kind: 'entitlementGranted', notification: { to: event.address, header: text.header, path: text.path, id: `grant:${event.grantId}:granted` } }
  }
  if (event.type === 'confirmed' && 'invoice' in event) {
    const text = settings.invoiceConfirmed
    const payer = payerOf(event.invoice, network)
    return text === undefined || payer === undefined ? undefined : { kind: 'invoiceConfirmed', notification: { to: payer, header: text.header, path: text.path, id: `invoice:${event.invoiceId}:confirmed` } }
  }
  return undefined
}

/** The notice that a run of grants ends soon: a renewal moves the end, so the id names the end. */
export function expiryNotice (ending: { grantId: number, address: string, expiresAtMs: number }, text: NoticeText): Notice {
  return { kind: 'expiring', notification: { to: ending.address, header: text.header, path: text.path, id: `grant:${ending.grantId}:expiring:${ending.expiresAtMs}` } }
}

/** What this instance told, for the metrics. */
export interface NoticeCounts {
  /** Notices sent, by kind and by the status of their one recipient. */
  told: Record<NoticeKind, Record<SendStatus, number>>
  /** Expiry scans finished (not those skipped while another instance has the turn). */
  expiryScans: number
}

export function emptyNoticeCounts (): NoticeCounts {
  const none = (): Record<SendStatus, number> => ({ sent: 0, queued: 0, failed: 0, not_registered: 0, duplicate: 0, rate_limited: 0 })
  return { told: { invoiceConfirmed: none(), entitlementGranted: none(), expiring: none() }, expiryScans: 0 }
}
