-- The trader's ledger (issue 49): every fill and funding payment an agent reported, keyed by the
-- venue's own ids, so a report sent again (the agent restarted before it saw the answer) is
-- recorded once. source_id, strategy and received_at are copied from the signal when the fill is
-- recorded: the signal log's retention may forget the signal, the ledger keeps its trades' origin.
-- No foreign keys: the ledger outlives a deleted agent.
CREATE TABLE ledger_fills (
  seq           INTEGER PRIMARY KEY AUTOINCREMENT,
  agent_id      TEXT NOT NULL,
  venue_fill_id TEXT NOT NULL,
  account_id    TEXT NOT NULL,
  order_id      TEXT NOT NULL,
  symbol        TEXT NOT NULL,
  side          TEXT NOT NULL CHECK (side IN ('buy', 'sell')),
  lots          REAL NOT NULL,
  price         REAL NOT NULL,
  fee           REAL NOT NULL,
  fee_currency  TEXT NOT NULL,
  at            TEXT NOT NULL,
  signal_id     TEXT,
  effect        TEXT CHECK (effect IN ('open', 'close')),
  profit        REAL,
  quote         REAL,
  source_id     TEXT,
  strategy      TEXT,
  received_at   TEXT,
  recorded_at   TEXT NOT NULL,
  UNIQUE (agent_id, venue_fill_id)
) STRICT;
CREATE INDEX ledger_fills_account ON ledger_fills (account_id, seq);

CREATE TABLE ledger_funding (
  seq              INTEGER PRIMARY KEY AUTOINCREMENT,
  agent_id         TEXT NOT NULL,
  venue_funding_id TEXT NOT NULL,
  account_id       TEXT NOT NULL,
  symbol           TEXT NOT NULL,
  amount           REAL NOT NULL,
  currency         TEXT NOT NULL,
  at               TEXT NOT NULL,
  recorded_at      TEXT NOT NULL,
  UNIQUE (agent_id, venue_funding_id)
) STRICT;
CREATE INDEX ledger_funding_account ON ledger_funding (account_id, seq);
