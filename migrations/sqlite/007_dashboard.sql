-- Dashboard sign-ins. Only the SHA-256 of the cookie's session id is kept, with the digest of
-- the admin token it was signed in with (a changed admin token ends every session).
CREATE TABLE dashboard_sessions (
  id_digest          TEXT PRIMARY KEY,
  admin_token_digest TEXT NOT NULL,
  created_at         TEXT NOT NULL,
  expires_at         TEXT NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at);

-- Lists of accounts, sources and agents, newest first, of one account or all.
CREATE INDEX accounts_listing ON accounts (created_at, id);
CREATE INDEX sources_listing ON sources (created_at, id);
CREATE INDEX sources_account_listing ON sources (account_id, created_at, id);
CREATE INDEX agents_listing ON agents (created_at, id);
CREATE INDEX agents_account_listing ON agents (account_id, created_at, id);

-- Signals per day of an account (the dashboard's chart), counted from this index alone.
CREATE INDEX signals_account_days ON signals (account_id, received_at, status);
-- (The signal log filtered by symbol uses the outcomes migration's symbol index.)
