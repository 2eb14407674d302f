-- The trader's ledger (issue 49): every fill and funding payment an agent reported, keyed by the
-- venue's own ids, so a report sent again (the agent restarted before it saw the answer) is
-- recorded once. source_id, strategy and received_at are copied from the signal when the fill is
-- recorded: the signal log's retention may forget the signal, the ledger keeps its trades' origin.
-- No foreign keys: the ledger outlives a deleted agent.
CREATE TABLE ledger_fills (
  seq           bigserial PRIMARY KEY,
  agent_id      text COLLATE "C" NOT NULL,
  venue_fill_id text COLLATE "C" NOT NULL,
  account_id    text COLLATE "C" NOT NULL,
  order_id      text NOT NULL,
  symbol        text NOT NULL,
  side          text NOT NULL CHECK (side IN ('buy', 'sell')),
  lots          double precision NOT NULL,
  price         double precision NOT NULL,
  fee           double precision NOT NULL,
  fee_currency  text NOT NULL,
  at            timestamptz NOT NULL,
  signal_id     text COLLATE "C",
  effect        text CHECK (effect IN ('open', 'close')),
  profit        double precision,
  quote         double precision,
  source_id     text COLLATE "C",
  strategy      text,
  received_at   timestamptz,
  recorded_at   timestamptz NOT NULL,
  UNIQUE (agent_id, venue_fill_id)
);
CREATE INDEX ledger_fills_account ON ledger_fills (account_id, seq);

CREATE TABLE ledger_funding (
  seq              bigserial PRIMARY KEY,
  agent_id         text COLLATE "C" NOT NULL,
  venue_funding_id text COLLATE "C" NOT NULL,
  account_id       text COLLATE "C" NOT NULL,
  symbol           text NOT NULL,
  amount           double precision NOT NULL,
  currency         text NOT NULL,
  at               timestamptz NOT NULL,
  recorded_at      timestamptz NOT NULL,
  UNIQUE (agent_id, venue_funding_id)
);
CREATE INDEX ledger_funding_account ON ledger_funding (account_id, seq);
