-- Notifications (issue 48): channels an account is told through, and the outbox of messages to
-- them. secrets holds what a channel sends with (bot token, SMTP password, webhook URL); the API
-- never returns it. The channel row also carries its sending state (failures, back-off, the
-- minute's count for the rate limit), which every instance reads when it claims.
CREATE TABLE notification_channels (
  id                TEXT PRIMARY KEY,
  account_id        TEXT NOT NULL REFERENCES accounts (id),
  kind              TEXT NOT NULL,
  name              TEXT NOT NULL,
  settings          TEXT NOT NULL,
  secrets           TEXT NOT NULL,
  events            TEXT NOT NULL,
  enabled           INTEGER NOT NULL DEFAULT 1,
  created_at        TEXT NOT NULL,
  failures          INTEGER NOT NULL DEFAULT 0,
  failing_since     TEXT,
  last_error        TEXT,
  retry_at          TEXT,
  last_sent_at      TEXT,
  rate_window_start TEXT,
  rate_window_count INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX notification_channels_account ON notification_channels (account_id, created_at, id);

-- One message per channel: a burst of one digest_key is merged into its row while that row waits.
CREATE TABLE notification_outbox (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  channel_id      TEXT NOT NULL REFERENCES notification_channels (id) ON DELETE CASCADE,
  account_id      TEXT NOT NULL,
  event           TEXT NOT NULL,
  digest_key      TEXT,
  count           INTEGER NOT NULL DEFAULT 1,
  examples        TEXT NOT NULL,
  first_at        TEXT NOT NULL,
  last_at         TEXT NOT NULL,
  state           TEXT NOT NULL DEFAULT 'pending',
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT NOT NULL,
  lease_owner     TEXT,
  lease_until     TEXT,
  last_error      TEXT,
  sent_at         TEXT
) STRICT;
CREATE INDEX notification_outbox_pending ON notification_outbox (channel_id, id) WHERE state = 'pending';
CREATE INDEX notification_outbox_digest ON notification_outbox (channel_id, digest_key, id);
CREATE INDEX notification_outbox_done ON notification_outbox (state, last_at);
