/**
 * The pending invoices that grant, by whom they grant to and what: a catalogue purchase asked
 * again while one is open answers that invoice (routes/api/catalog.ts), so a signed-in caller
 * holds at most one open purchase per item, however often it asks.
 */
import type { Migration } from '../migrate.js'

export const OPEN_PURCHASES: Migration = {
  version: 8,
  name: 'open-purchases',
  sql: `
CREATE INDEX invoices_open_grants ON invoices (grant_to, grant_sku, expires_at_ms) WHERE state = 'pending' AND grant_to IS NOT NULL;
`,
}
