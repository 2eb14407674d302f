-- Risk rules, halts and their audit log (issue 47; docs/risk.md).
-- risk_rules: the rules set on an account or a source (RiskRules as JSON), and `effective`, what
-- they come to for a signal: for an account its own, for a source the account's narrowed by the
-- source's. Recomputed for every source of the account whenever either changes, in the change's
-- transaction, so the ingest copies one row and never narrows.
CREATE TABLE risk_rules (
  scope      TEXT NOT NULL CHECK (scope IN ('account', 'source')),
  id         TEXT NOT NULL,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  rules      TEXT NOT NULL,
  effective  TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (scope, id)
) STRICT;
CREATE INDEX risk_rules_account ON risk_rules (account_id, scope, id);

-- A halt is in force while released_at is NULL; at most one in force per target.
CREATE TABLE risk_halts (
  id          TEXT PRIMARY KEY,
  scope       TEXT NOT NULL CHECK (scope IN ('account', 'source', 'agent')),
  target_id   TEXT NOT NULL,
  account_id  TEXT NOT NULL REFERENCES accounts (id),
  reason      TEXT NOT NULL,
  flatten     INTEGER NOT NULL DEFAULT 0 CHECK (flatten IN (0, 1)),
  halted_by   TEXT NOT NULL,
  halted_at   TEXT NOT NULL,
  released_by TEXT,
  released_at TEXT
) STRICT;
CREATE UNIQUE INDEX risk_halts_in_force ON risk_halts (scope, target_id) WHERE released_at IS NULL;
CREATE INDEX risk_halts_account_in_force ON risk_halts (account_id) WHERE released_at IS NULL;
CREATE INDEX risk_halts_log ON risk_halts (halted_at, id);

CREATE TABLE risk_audit (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  at         TEXT NOT NULL,
  actor      TEXT NOT NULL,
  action     TEXT NOT NULL,
  scope      TEXT NOT NULL,
  target_id  TEXT NOT NULL,
  account_id TEXT NOT NULL,
  before     TEXT,
  after      TEXT
) STRICT;
CREATE INDEX risk_audit_account ON risk_audit (account_id, id);

-- The effective rules a signal was received under (JSON; NULL: none), handed to its agents with
-- it; and, on the log entry a flatten is, its reason.
ALTER TABLE signals ADD COLUMN risk TEXT;
ALTER TABLE signals ADD COLUMN flatten TEXT;

-- A delivery may now be `halted`: the signal came while its account, source or agent was halted
-- (or was still queued when the halt came). Final: never handed out, not after the release either.
-- SQLite cannot widen a CHECK in place, so the table is rebuilt with its indexes.
CREATE TABLE deliveries_new (
  signal_id          TEXT NOT NULL REFERENCES signals (id),
  agent_id           TEXT NOT NULL REFERENCES agents (id),
  seq                INTEGER NOT NULL,
  status             TEXT NOT NULL
                     CHECK (status IN ('queued', 'delivered', 'executed', 'rejected', 'failed', 'expired', 'halted')),
  expires_at         TEXT NOT NULL,
  delivered_at       TEXT,
  attempts           INTEGER NOT NULL DEFAULT 0,
  acked_at           TEXT,
  message            TEXT,
  result             TEXT,
  acked_after_expiry INTEGER NOT NULL DEFAULT 0 CHECK (acked_after_expiry IN (0, 1)),
  received_at        TEXT,
  timings            TEXT,
  PRIMARY KEY (signal_id, agent_id),
  UNIQUE (agent_id, seq)
) STRICT, WITHOUT ROWID;
INSERT INTO deliveries_new (signal_id, agent_id, seq, status, expires_at, delivered_at, attempts, acked_at, message,
                            result, acked_after_expiry, received_at, timings)
SELECT signal_id, agent_id, seq, status, expires_at, delivered_at, attempts, acked_at, message,
       result, acked_after_expiry, received_at, timings FROM deliveries;
DROP TABLE deliveries;
ALTER TABLE deliveries_new RENAME TO deliveries;
CREATE INDEX deliveries_pending ON deliveries (agent_id, seq) WHERE status IN ('queued', 'delivered');
CREATE INDEX deliveries_outcome_log ON deliveries (status, received_at, signal_id);
CREATE INDEX deliveries_due ON deliveries (expires_at) WHERE status = 'queued';
CREATE INDEX deliveries_agent_due ON deliveries (agent_id, expires_at) WHERE status IN ('queued', 'delivered');
