-- Notifications (issue 48): the same tables as SQLite's 040. The outbox is claimed with
-- FOR UPDATE SKIP LOCKED and a lease, so several instances on one database send each message once.
CREATE TABLE notification_channels (
  id                text COLLATE "C" PRIMARY KEY,
  account_id        text NOT NULL REFERENCES accounts (id),
  kind              text NOT NULL,
  name              text NOT NULL,
  settings          text NOT NULL,
  secrets           text NOT NULL,
  events            text NOT NULL,
  enabled           boolean NOT NULL DEFAULT true,
  created_at        timestamptz NOT NULL,
  failures          integer NOT NULL DEFAULT 0,
  failing_since     timestamptz,
  last_error        text,
  retry_at          timestamptz,
  last_sent_at      timestamptz,
  rate_window_start timestamptz,
  rate_window_count integer NOT NULL DEFAULT 0
);
CREATE INDEX notification_channels_account ON notification_channels (account_id, created_at, id);

CREATE TABLE notification_outbox (
  id              bigserial PRIMARY KEY,
  channel_id      text COLLATE "C" NOT NULL REFERENCES notification_channels (id) ON DELETE CASCADE,
  account_id      text NOT NULL,
  event           text NOT NULL,
  digest_key      text,
  count           integer NOT NULL DEFAULT 1,
  examples        text NOT NULL,
  first_at        timestamptz NOT NULL,
  last_at         timestamptz NOT NULL,
  state           text NOT NULL DEFAULT 'pending',
  attempts        integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL,
  lease_owner     text,
  lease_until     timestamptz,
  last_error      text,
  sent_at         timestamptz
);
CREATE INDEX notification_outbox_pending ON notification_outbox (channel_id, id) WHERE state = 'pending';
CREATE INDEX notification_outbox_digest ON notification_outbox (channel_id, digest_key, id);
CREATE INDEX notification_outbox_done ON notification_outbox (state, last_at);
