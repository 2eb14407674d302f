-- signalgate schema, PostgreSQL dialect. Identifiers compare in byte order (COLLATE "C") so
-- orderings by id match the SQLite store whatever the database's collation. JSON is `json`
-- (kept verbatim, key order included) because nothing queries inside it.

CREATE TABLE accounts (
  id                   text COLLATE "C" PRIMARY KEY,
  name                 text NOT NULL,
  monthly_signal_quota integer NOT NULL CHECK (monthly_signal_quota >= 0),
  created_at           timestamptz NOT NULL
);

-- One row per account and calendar month; charged with a conditional update only.
CREATE TABLE usage (
  account_id text COLLATE "C" NOT NULL REFERENCES accounts (id),
  period     text NOT NULL,
  used       integer NOT NULL DEFAULT 0 CHECK (used >= 0),
  PRIMARY KEY (account_id, period)
);

CREATE TABLE sources (
  id                     text COLLATE "C" PRIMARY KEY,
  account_id             text COLLATE "C" NOT NULL REFERENCES accounts (id),
  name                   text NOT NULL,
  auth_key               text NOT NULL,
  -- Lookups go by the SHA-256 hex of the key, so their cost does not depend on the key's characters.
  auth_key_hash          text NOT NULL UNIQUE,
  active                 boolean NOT NULL,
  hmac_secret            text,
  agent_ids              json NOT NULL DEFAULT '[]',
  max_signal_age_seconds integer NOT NULL,
  created_at             timestamptz NOT NULL
);
CREATE INDEX sources_account ON sources (account_id);

CREATE TABLE agents (
  id           text COLLATE "C" PRIMARY KEY,
  account_id   text COLLATE "C" NOT NULL REFERENCES accounts (id),
  name         text NOT NULL,
  token_hash   text NOT NULL UNIQUE,
  created_at   timestamptz NOT NULL,
  last_seen_at timestamptz,
  state        json,
  -- The last delivery sequence number handed out for this agent (its queue position counter).
  last_seq     integer NOT NULL DEFAULT 0
);
CREATE INDEX agents_account ON agents (account_id, id);

-- The signal log: every request that named a valid source key, accepted or rejected.
-- raw_body is bytea because a text column cannot hold the NUL characters a hostile body may carry.
CREATE TABLE signals (
  id              text COLLATE "C" PRIMARY KEY,
  source_id       text COLLATE "C" NOT NULL REFERENCES sources (id),
  account_id      text COLLATE "C" NOT NULL REFERENCES accounts (id),
  received_at     timestamptz NOT NULL,
  status          text NOT NULL CHECK (status IN ('queued', 'rejected')),
  http_status     integer NOT NULL,
  code            text,
  detail          text,
  param           text,
  errors          json,
  content_type    text,
  raw_body        bytea NOT NULL,
  normalized      json,
  idempotency_key text,
  quota_period    text,
  quota_used      integer,
  quota_limit     integer
);
CREATE INDEX signals_source_log ON signals (source_id, received_at, id);
CREATE INDEX signals_log ON signals (received_at, id);

-- The key row is written first in an ingest, so concurrent repeats queue on it; the signal it
-- names is inserted later in the same transaction, hence the deferred check.
CREATE TABLE idempotency_keys (
  source_id    text COLLATE "C" NOT NULL REFERENCES sources (id),
  key          text NOT NULL,
  signal_id    text COLLATE "C" NOT NULL REFERENCES signals (id) DEFERRABLE INITIALLY DEFERRED,
  request_hash text,
  created_at   timestamptz NOT NULL,
  PRIMARY KEY (source_id, key)
);

CREATE TABLE deliveries (
  signal_id    text COLLATE "C" NOT NULL REFERENCES signals (id),
  agent_id     text COLLATE "C" NOT NULL REFERENCES agents (id),
  seq          integer NOT NULL,
  status       text NOT NULL
               CHECK (status IN ('queued', 'delivered', 'executed', 'rejected', 'failed', 'expired')),
  expires_at   timestamptz NOT NULL,
  delivered_at timestamptz,
  attempts     integer NOT NULL DEFAULT 0,
  acked_at     timestamptz,
  message      text,
  result       json,
  PRIMARY KEY (signal_id, agent_id),
  UNIQUE (agent_id, seq)
);
-- What an agent's poll reads: its unacknowledged deliveries in queue order.
CREATE INDEX deliveries_pending ON deliveries (agent_id, seq) WHERE status IN ('queued', 'delivered');

CREATE TABLE settings (
  name  text PRIMARY KEY,
  value text NOT NULL
);
