-- A fill the venue took back (a bust: FIX ExecType H, trade cancel), keyed by the agent and the
-- busted fill's venue id, so a report sent again is recorded once. No foreign key to ledger_fills:
-- a bust may arrive before its fill, and applies once the fill is recorded.
CREATE TABLE ledger_busts (
  seq           INTEGER PRIMARY KEY AUTOINCREMENT,
  agent_id      TEXT NOT NULL,
  venue_fill_id TEXT NOT NULL,
  account_id    TEXT NOT NULL,
  lots          REAL NOT NULL,
  at            TEXT NOT NULL,
  recorded_at   TEXT NOT NULL,
  UNIQUE (agent_id, venue_fill_id)
) STRICT;
CREATE INDEX ledger_busts_account ON ledger_busts (account_id, seq);
