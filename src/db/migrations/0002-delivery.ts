/**
 * Delivery of the transitions: an outbox row per event and consumer (the app's handlers, the
 * webhook sender …), leased while a consumer works on it and acknowledged once done, so that each
 * is delivered at least once across crashes and instances; the log of webhook attempts; and named
 * leases, for work one instance at a time must do (ingesting the chain). Events written before
 * this version get a row for the app's handlers.
 */
import type { Migration } from '../migrate.js'

export const DELIVERY: Migration = {
  version: 2,
  name: 'delivery',
  sql: `
CREATE TABLE outbox (
  event_id bigint NOT NULL REFERENCES payment_events (id),
  consumer text NOT NULL CHECK (consumer <> ''),
  attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  available_at_ms bigint NOT NULL DEFAULT 0,
  delivered_at_ms bigint,
  PRIMARY KEY (consumer, event_id)
);
CREATE INDEX outbox_due ON outbox (consumer, available_at_ms, event_id) WHERE delivered_at_ms IS NULL;
INSERT INTO outbox (event_id, consumer) SELECT id, 'app' FROM payment_events;

CREATE TABLE webhook_deliveries (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id bigint NOT NULL REFERENCES payment_events (id),
  url text NOT NULL,
  attempt integer NOT NULL CHECK (attempt >= 1),
  started_at_ms bigint NOT NULL,
  finished_at_ms bigint,
  status_code integer,
  error text
);
CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries (event_id);

CREATE TABLE leases (
  name text PRIMARY KEY,
  holder text NOT NULL,
  expires_at_ms bigint NOT NULL
);
`,
}
