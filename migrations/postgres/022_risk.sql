-- Risk rules, halts and their audit log (issue 47): the tables of SQLite's 019.
CREATE TABLE risk_rules (
  scope      text NOT NULL CHECK (scope IN ('account', 'source')),
  id         text COLLATE "C" NOT NULL,
  account_id text COLLATE "C" NOT NULL REFERENCES accounts (id),
  rules      text NOT NULL,
  effective  text NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (scope, id)
);
CREATE INDEX risk_rules_account ON risk_rules (account_id, scope, id);

CREATE TABLE risk_halts (
  id          text COLLATE "C" PRIMARY KEY,
  scope       text NOT NULL CHECK (scope IN ('account', 'source', 'agent')),
  target_id   text COLLATE "C" NOT NULL,
  account_id  text COLLATE "C" NOT NULL REFERENCES accounts (id),
  reason      text NOT NULL,
  flatten     boolean NOT NULL DEFAULT false,
  halted_by   text NOT NULL,
  halted_at   timestamptz NOT NULL,
  released_by text,
  released_at timestamptz
);
CREATE UNIQUE INDEX risk_halts_in_force ON risk_halts (scope, target_id) WHERE released_at IS NULL;
CREATE INDEX risk_halts_account_in_force ON risk_halts (account_id) WHERE released_at IS NULL;
CREATE INDEX risk_halts_log ON risk_halts (halted_at, id);

CREATE TABLE risk_audit (
  id         bigserial PRIMARY KEY,
  at         timestamptz NOT NULL,
  actor      text NOT NULL,
  action     text NOT NULL,
  scope      text NOT NULL,
  target_id  text COLLATE "C" NOT NULL,
  account_id text COLLATE "C" NOT NULL,
  before     text,
  after      text
);
CREATE INDEX risk_audit_account ON risk_audit (account_id, id);

ALTER TABLE signals ADD COLUMN risk text;
ALTER TABLE signals ADD COLUMN flatten text;

-- `halted` deliveries (see SQLite's 019). Added NOT VALID, then validated: the scan takes a lock
-- that lets reads and writes go on, where adding it valid would hold the table for the scan.
-- The check's name is whatever migration 016's copy gave it: it is found by what it says.
DO $$
DECLARE
  v_name text;
BEGIN
  FOR v_name IN SELECT c.conname FROM pg_constraint c
                 WHERE c.conrelid = 'deliveries'::regclass AND c.contype = 'c'
                   AND pg_get_constraintdef(c.oid) LIKE '%expired%' LOOP
    EXECUTE format('ALTER TABLE deliveries DROP CONSTRAINT %I', v_name);
  END LOOP;
END;
$$;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_status_check
  CHECK (status IN ('queued', 'delivered', 'executed', 'rejected', 'failed', 'expired', 'halted')) NOT VALID;
ALTER TABLE deliveries VALIDATE CONSTRAINT deliveries_status_check;
