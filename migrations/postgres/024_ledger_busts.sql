-- A fill the venue took back (a bust: FIX ExecType H, trade cancel), keyed by the agent and the
-- busted fill's venue id, so a report sent again is recorded once. No foreign key to ledger_fills:
-- a bust may arrive before its fill, and applies once the fill is recorded.
CREATE TABLE ledger_busts (
  seq           bigserial PRIMARY KEY,
  agent_id      text COLLATE "C" NOT NULL,
  venue_fill_id text COLLATE "C" NOT NULL,
  account_id    text COLLATE "C" NOT NULL,
  lots          double precision NOT NULL,
  at            timestamptz NOT NULL,
  recorded_at   timestamptz NOT NULL,
  UNIQUE (agent_id, venue_fill_id)
);
CREATE INDEX ledger_busts_account ON ledger_busts (account_id, seq);
