/**
 * Notifications (docs/notifications.md): where each user opted in (`notification_channels`: a
 * channel and its target, such as the Bastyon proxy that holds the user's token), the ids sent to
 * each user in the last day (`notification_keys`: a key counts again once it expired, and the live
 * keys are the user's sends of the rolling day, which the daily limit counts), the app's sends per
 * UTC day (`notification_budget`, one counter row a day, locked by each send), and the outbox of
 * deliveries (`notification_deliveries`: one row per recipient and channel, with the outbox's
 * vocabulary: pending, delivered, given_up). The channel's CHECK names Telegram already, so that
 * it can come without touching these tables.
 */
import type { Migration } from '../migrate.js'

export const NOTIFICATIONS: Migration = {
  version: 11,
  name: 'notifications',
  sql: `
CREATE TABLE notification_channels (
  address text NOT NULL CHECK (address <> ''),
  channel text NOT NULL CHECK (channel IN ('bastyon', 'telegram')),
  target text NOT NULL CHECK (target <> ''),
  created_at_ms bigint NOT NULL,
  PRIMARY KEY (address, channel)
);

CREATE TABLE notification_keys (
  address text NOT NULL CHECK (address <> ''),
  key text NOT NULL CHECK (key ~ '^[A-Za-z0-9._:-]{1,128}$'),
  expires_at_ms bigint NOT NULL,
  PRIMARY KEY (address, key)
);

CREATE TABLE notification_budget (
  day bigint PRIMARY KEY CHECK (day >= 0),
  sent integer NOT NULL DEFAULT 0 CHECK (sent >= 0)
);

CREATE TABLE notification_deliveries (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  address text NOT NULL CHECK (address <> ''),
  channel text NOT NULL CHECK (channel IN ('bastyon', 'telegram')),
  target text NOT NULL CHECK (target <> ''),
  notification_id text NOT NULL CHECK (notification_id ~ '^[A-Za-z0-9._:-]{1,128}$'),
  header text NOT NULL CHECK (char_length(header) BETWEEN 1 AND 100),
  path text NOT NULL CHECK (path ~ '^/' AND char_length(path) <= 200),
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'given_up')),
  attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  available_at_ms bigint NOT NULL DEFAULT 0,
  created_at_ms bigint NOT NULL,
  delivered_at_ms bigint,
  last_error text,
  CONSTRAINT notification_deliveries_delivered_when_delivered_at CHECK ((status = 'delivered') = (delivered_at_ms IS NOT NULL))
);
CREATE INDEX notification_deliveries_pending_due ON notification_deliveries (channel, available_at_ms, id) WHERE status = 'pending';
CREATE INDEX notification_deliveries_given_up ON notification_deliveries (channel) WHERE status = 'given_up';
CREATE INDEX notification_deliveries_by_address ON notification_deliveries (address);
`,
}
