/**
 * Telegram links (docs/notifications.md, "Telegram"): a link token is stateless and valid until it
 * expires, so its single use is this table's. The `/start <token>` that links a chat records the
 * token's nonce here in the transaction that writes the chat's channel row; a second `/start` with
 * the same token, on any instance, finds the nonce and links nothing. A row is needed only until
 * the token expires (the token is refused then anyway): rows past `expires_at_ms` are deleted as
 * links are made.
 *
 * A Telegram channel's target is the chat's id, a whole number (negative for groups, which the
 * webhook does not link, but Telegram's ids are signed).
 */
import type { Migration } from '../migrate.js'

export const TELEGRAM_LINKS: Migration = {
  version: 12,
  name: 'telegram-links',
  sql: `
CREATE TABLE telegram_link_nonces (
  nonce text PRIMARY KEY CHECK (nonce ~ '^[A-Za-z0-9_-]{8}$'),
  address text NOT NULL CHECK (address <> ''),
  expires_at_ms bigint NOT NULL
);
CREATE INDEX telegram_link_nonces_expiry ON telegram_link_nonces (expires_at_ms);

ALTER TABLE notification_channels ADD CONSTRAINT notification_channels_telegram_chat_id
  CHECK (channel <> 'telegram' OR target ~ '^-?[0-9]{1,20}$');
`,
}
