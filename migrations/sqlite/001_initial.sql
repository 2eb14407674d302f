-- signalgate schema, SQLite dialect. Times are ISO 8601 UTC strings with milliseconds
-- ('YYYY-MM-DDTHH:MM:SS.sssZ'), so text order is time order. JSON values are stored as text.

CREATE TABLE accounts (
  id                   TEXT PRIMARY KEY,
  name                 TEXT NOT NULL,
  monthly_signal_quota INTEGER NOT NULL CHECK (monthly_signal_quota >= 0),
  created_at           TEXT NOT NULL
) STRICT;

-- One row per account and calendar month; charged with a conditional update only.
CREATE TABLE usage (
  account_id TEXT NOT NULL REFERENCES accounts (id),
  period     TEXT NOT NULL,
  used       INTEGER NOT NULL DEFAULT 0 CHECK (used >= 0),
  PRIMARY KEY (account_id, period)
) STRICT, WITHOUT ROWID;

CREATE TABLE sources (
  id                     TEXT PRIMARY KEY,
  account_id             TEXT NOT NULL REFERENCES accounts (id),
  name                   TEXT NOT NULL,
  auth_key               TEXT NOT NULL,
  -- Lookups go by the SHA-256 hex of the key, so their cost does not depend on the key's characters.
  auth_key_hash          TEXT NOT NULL UNIQUE,
  active                 INTEGER NOT NULL CHECK (active IN (0, 1)),
  hmac_secret            TEXT,
  agent_ids              TEXT NOT NULL DEFAULT '[]',
  max_signal_age_seconds INTEGER NOT NULL,
  created_at             TEXT NOT NULL
) STRICT;
CREATE INDEX sources_account ON sources (account_id);

CREATE TABLE agents (
  id           TEXT PRIMARY KEY,
  account_id   TEXT NOT NULL REFERENCES accounts (id),
  name         TEXT NOT NULL,
  token_hash   TEXT NOT NULL UNIQUE,
  created_at   TEXT NOT NULL,
  last_seen_at TEXT,
  state        TEXT,
  -- The last delivery sequence number handed out for this agent (its queue position counter).
  last_seq     INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX agents_account ON agents (account_id, id);

-- The signal log: every request that named a valid source key, accepted or rejected.
CREATE TABLE signals (
  id              TEXT PRIMARY KEY,
  source_id       TEXT NOT NULL REFERENCES sources (id),
  account_id      TEXT NOT NULL REFERENCES accounts (id),
  received_at     TEXT NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('queued', 'rejected')),
  http_status     INTEGER NOT NULL,
  code            TEXT,
  detail          TEXT,
  param           TEXT,
  errors          TEXT,
  content_type    TEXT,
  raw_body        TEXT NOT NULL,
  normalized      TEXT,
  idempotency_key TEXT,
  quota_period    TEXT,
  quota_used      INTEGER,
  quota_limit     INTEGER
) STRICT;
CREATE INDEX signals_source_log ON signals (source_id, received_at, id);
CREATE INDEX signals_log ON signals (received_at, id);

CREATE TABLE idempotency_keys (
  source_id    TEXT NOT NULL REFERENCES sources (id),
  key          TEXT NOT NULL,
  signal_id    TEXT NOT NULL REFERENCES signals (id),
  request_hash TEXT,
  created_at   TEXT NOT NULL,
  PRIMARY KEY (source_id, key)
) STRICT, WITHOUT ROWID;

CREATE TABLE deliveries (
  signal_id    TEXT NOT NULL REFERENCES signals (id),
  agent_id     TEXT NOT NULL REFERENCES agents (id),
  seq          INTEGER NOT NULL,
  status       TEXT NOT NULL
               CHECK (status IN ('queued', 'delivered', 'executed', 'rejected', 'failed', 'expired')),
  expires_at   TEXT NOT NULL,
  delivered_at TEXT,
  attempts     INTEGER NOT NULL DEFAULT 0,
  acked_at     TEXT,
  message      TEXT,
  result       TEXT,
  PRIMARY KEY (signal_id, agent_id),
  UNIQUE (agent_id, seq)
) STRICT, WITHOUT ROWID;
-- What an agent's poll reads: its unacknowledged deliveries in queue order.
CREATE INDEX deliveries_pending ON deliveries (agent_id, seq) WHERE status IN ('queued', 'delivered');

CREATE TABLE settings (
  name  TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;
