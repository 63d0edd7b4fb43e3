/**
 * The notifications' retention (docs/notifications.md, "What is kept"): deliveries that are
 * settled (delivered or given up) are deleted once older than NOTIFY_RETENTION_S, oldest first, a
 * batch at a time. This index is what finds them without reading the table: partial, so a
 * delivery enters it only when it is settled (its acknowledgement writes a new row version anyway,
 * since `status` is indexed), never while it is pending and claimed again and again.
 */
import type { Migration } from '../migrate.js'

export const NOTIFICATION_RETENTION: Migration = {
  version: 14,
  name: 'notification-retention',
  sql: `
CREATE INDEX notification_deliveries_settled ON notification_deliveries (created_at_ms) WHERE status <> 'pending';
`,
}
