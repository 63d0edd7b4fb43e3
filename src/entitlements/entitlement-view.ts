/** An entitlement as the API, the live events and the webhooks show it: times in ISO 8601. */
import type { Entitlement, Grant } from './entitlement.js'

export interface EntitlementView {
  sku: string
  /** When the latest grant of the SKU was made. */
  grantedAt: string
  /** When it ends, renewals included; null: never. */
  expiresAt: string | null
  /** The invoice that paid for the latest grant; null when server code granted it. */
  invoiceId: string | null
}

/** A grant just made shows its own end: for a renewal, the end of the whole run. */
export function entitlementView (held: Entitlement | Grant): EntitlementView {
  return {
    sku: held.sku,
    grantedAt: new Date(held.grantedAtMs).toISOString(),
    expiresAt: held.expiresAtMs === null ? null : new Date(held.expiresAtMs).toISOString(),
    invoiceId: held.invoiceId,
  }
}
