/** Every migration of the service's database, in order. Add new ones at the end; never edit one released. */
import type { Migration } from '../migrate.js'
import { INVOICES_AND_PAYMENTS } from './0001-invoices-and-payments.js'
import { DELIVERY } from './0002-delivery.js'
import { CHAIN_CURSOR } from './0003-chain-cursor.js'
import { SIGHTINGS_AND_RETENTION } from './0004-sightings-and-retention.js'
import { OUTBOX_STATUS } from './0005-outbox-status.js'
import { ENTITLEMENTS } from './0006-entitlements.js'
import { USER_STORAGE } from './0007-user-storage.js'
import { OPEN_PURCHASES } from './0008-open-purchases.js'
import { OUTBOX_EVENTS } from './0009-outbox-events.js'
import { STORAGE_PUT_ONE_WRITE } from './0010-storage-put-one-write.js'
import { NOTIFICATIONS } from './0011-notifications.js'
import { TELEGRAM_LINKS } from './0012-telegram-links.js'
import { PAYOUTS } from './0013-payouts.js'
import { NOTIFICATION_RETENTION } from './0014-notification-retention.js'

export const MIGRATIONS: readonly Migration[] = [INVOICES_AND_PAYMENTS, DELIVERY, CHAIN_CURSOR, SIGHTINGS_AND_RETENTION, OUTBOX_STATUS, ENTITLEMENTS, USER_STORAGE, OPEN_PURCHASES, OUTBOX_EVENTS, STORAGE_PUT_ONE_WRITE, NOTIFICATIONS, TELEGRAM_LINKS, PAYOUTS, NOTIFICATION_RETENTION]
