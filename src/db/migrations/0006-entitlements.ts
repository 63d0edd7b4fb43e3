/**
 * Entitlements: what a user owns (a SKU, for good or until a time), as grants that are records of
 * payment and are never deleted. The rules that must hold whatever the code does are constraints
 * here: an invoice grants at most once (its id is unique among the grants), a revocation says why,
 * a grant ends after it starts. An invoice that grants on confirmation keeps what it grants in its
 * own row (all three columns, or none). Times are BIGINT milliseconds of the service's clock.
 */
import type { Migration } from '../migrate.js'

export const ENTITLEMENTS: Migration = {
  version: 6,
  name: 'entitlements',
  sql: `
ALTER TABLE invoices ADD COLUMN grant_sku text;
ALTER TABLE invoices ADD COLUMN grant_to text;
ALTER TABLE invoices ADD COLUMN grant_duration_s bigint CHECK (grant_duration_s > 0);
ALTER TABLE invoices ADD CONSTRAINT invoices_grant_whole CHECK ((grant_sku IS NULL) = (grant_to IS NULL) AND (grant_sku IS NOT NULL OR grant_duration_s IS NULL));

CREATE TABLE entitlement_grants (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  address text NOT NULL CHECK (address <> ''),
  sku text NOT NULL CHECK (sku ~ '^[a-z0-9][a-z0-9._-]{0,63}$'),
  invoice_id text REFERENCES invoices (id),
  reason text,
  granted_at_ms bigint NOT NULL,
  starts_at_ms bigint NOT NULL,
  expires_at_ms bigint,
  revoked_at_ms bigint,
  revoke_reason text,
  CONSTRAINT entitlement_grants_invoice_key UNIQUE (invoice_id),
  CONSTRAINT entitlement_grants_ends_after_start CHECK (expires_at_ms IS NULL OR expires_at_ms > starts_at_ms),
  CONSTRAINT entitlement_grants_revoked_with_reason CHECK ((revoked_at_ms IS NULL) = (revoke_reason IS NULL))
);
CREATE INDEX entitlement_grants_by_owner ON entitlement_grants (address, sku);
`,
}
